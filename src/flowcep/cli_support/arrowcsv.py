"""CSV rows parsed and typed by pyarrow, when it is installed (CPython; the ``frames`` extra).

It reads only what it can read exactly as the pure-Python reader does (inputs.py): a piece of
the file where every line is one row of the header's width, without quotes, NUL bytes, lone
carriage returns or text that is not UTF-8. Given anything else, ``typed_columns`` answers None
and the caller reads that piece, and the rest of the file, the pure-Python way, which knows
every rule and names every bad line.

Cells are typed by the rule of celltypes.py, a whole column at a time: pyarrow tells which cells
are integers, floats or empty by the same patterns (in ASCII digits; a column with other digits
goes cell by cell through ``convert_cell``) and converts them.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from flowcep.cli_support.celltypes import convert_cell

# celltypes' patterns, anchored, in the ASCII digits RE2 means by \d
_NUMERIC_START = r"^[-.0-9]"
_INT = r"^-?(?:0|[1-9][0-9]*)$"
_FLOAT = (
    r"^(?:-?(?:0|[1-9][0-9]*)?\.[0-9]+(?:[eE][-+]?[0-9]+)?|-?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?[eE][-+]?[0-9]+)$"
)
_PARSE = pacsv.ParseOptions(newlines_in_values=False)


def typed_columns(chunk: bytes, width: int) -> list[list[Any]] | None:
    """The typed cells of ``chunk`` (whole lines of CSV data), column by column; None when it
    holds anything but plain rows of ``width`` cells, one a line."""
    if b'"' in chunk or b"\x00" in chunk or chunk.count(b"\r") != chunk.count(b"\r\n"):
        return None
    lines = chunk.count(b"\n") + (not chunk.endswith(b"\n"))
    names = [f"c{i}" for i in range(width)]
    try:
        table = pacsv.read_csv(
            io.BytesIO(chunk),
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=_PARSE,
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid:  # a row of another width, text that is not UTF-8
        return None
    if table.num_rows != lines:  # blank lines, which pyarrow skips
        return None
    return [_typed(column.combine_chunks()) for column in table.columns]


def _typed(cells: pa.Array) -> list[Any]:
    """``[convert_cell(c) for c in cells]`` (empty cells are null already), the work done by
    pyarrow: a column of strings is kept, one of integers read as such if they print back the
    same, one of floats if they all match the pattern; anything else is patched cell by cell."""
    numeric = pc.match_substring_regex(cells, _NUMERIC_START)
    if not pc.any(numeric).as_py():
        return cells.to_pylist()  # type: ignore[no-any-return]
    if pc.all(numeric).as_py():
        try:
            ints = pc.cast(cells, pa.int64())
        except pa.ArrowInvalid:
            if pc.all(pc.match_substring_regex(cells, _FLOAT)).as_py():
                return pc.cast(cells, pa.float64()).to_pylist()  # type: ignore[no-any-return]
        else:
            if pc.all(pc.equal(pc.cast(ints, pa.string()), cells)).as_py():
                return ints.to_pylist()  # type: ignore[no-any-return]
    return _patched(cells, numeric)


def _patched(cells: pa.Array, numeric: pa.Array) -> list[Any]:
    """The cells as strings, with those that are integers or floats by the rule converted."""
    ints = pc.match_substring_regex(cells, _INT)
    floats = pc.match_substring_regex(cells, _FLOAT)
    other = pc.and_not(numeric, pc.or_(ints, floats))
    if pc.any(pc.and_not(other, pc.string_is_ascii(cells))).as_py():
        return [convert_cell(c or "") for c in cells.to_pylist()]  # digits beyond ASCII: the rule itself
    values = cells.to_pylist()
    try:
        for mask, kind in ((ints, pa.int64()), (floats, pa.float64())):
            where = pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()
            if where:
                for i, value in zip(where, pc.cast(pc.filter(cells, mask), kind).to_pylist()):
                    values[i] = value
    except pa.ArrowInvalid:  # an integer beyond 64 bits
        return [convert_cell(c or "") for c in cells.to_pylist()]
    return values  # type: ignore[no-any-return]
