"""How CSV cells are typed: ``42`` an int, ``3.5`` a float, an empty cell ``None``, anything
else the string itself (``007`` too, so identifiers keep their zeros).

``convert_cell`` is the rule, one cell at a time. ``convert_column`` gives the same values for
a whole column of a batch of rows, in far fewer interpreter steps: a column of integers is read
by ``int`` at C speed (and checked by printing them back), a column of few distinct values
types each value once, and only what is left goes cell by cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_INT = r"-?(?:0|[1-9]\d*)"
_FLOAT = r"-?(?:0|[1-9]\d*)?\.\d+(?:[eE][-+]?\d+)?|-?(?:0|[1-9]\d*)(?:\.\d*)?[eE][-+]?\d+"
_INT_RE = re.compile(_INT)
_FLOAT_RE = re.compile(_FLOAT)
# a column of floats, its cells joined by newlines (a cell holding a newline fails float())
_FLOATS_RE = re.compile(rf"(?:{_FLOAT})(?:\n(?:{_FLOAT}))*")
NUMERIC_START = frozenset("-.0123456789")
# a column with at most this share of distinct values types each value once
_FEW_DISTINCT = 0.25


def convert_cell(text: str) -> Any:
    """Type a CSV cell: int, float, None for an empty cell, else the string itself."""
    if not text:
        return None
    if text[0] in NUMERIC_START:
        if _INT_RE.fullmatch(text):
            return int(text)
        if _FLOAT_RE.fullmatch(text):
            return float(text)
    return text


def convert_column(cells: Sequence[str]) -> list[Any]:
    """``[convert_cell(c) for c in cells]``, computed a column at a time."""
    first = cells[0] if cells else ""
    if first and first[0] in NUMERIC_START:
        ints = _as_ints(cells)
        if ints is not None:
            return ints
    distinct = set(cells)
    if len(distinct) <= len(cells) * _FEW_DISTINCT:
        typed = {text: convert_cell(text) for text in distinct}
        return list(map(typed.__getitem__, cells))
    if first and first[0] in NUMERIC_START and _FLOATS_RE.fullmatch("\n".join(cells)):
        try:
            return list(map(float, cells))
        except ValueError:  # a cell with a newline inside
            pass
    return list(map(convert_cell, cells))


def _as_ints(cells: Sequence[str]) -> list[int] | None:
    """The cells as ints if every one is an integer as the rule reads it (no sign, spaces,
    underscores or leading zeros, which ``int`` would accept too)."""
    joined = "".join(cells)
    if joined.isdigit() and joined.isascii() and all(cells) and min(cells)[0] != "0":
        return list(map(int, cells))  # digits only, and none leads with a zero
    try:
        ints = list(map(int, cells))
    except ValueError:
        return None
    if list(map(str, ints)) != list(cells):  # not as Python prints them
        return None
    return ints
