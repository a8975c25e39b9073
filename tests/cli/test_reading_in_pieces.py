"""The input is read a piece at a time (and large CSV files by pyarrow): the rows, their lines,
the bad rows and the errors are those of reading it one line at a time.

``line_by_line`` below is that reference: the reader as it was before it read pieces.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep.cli_support import CliError, inputs
from flowcep.cli_support.celltypes import convert_cell, convert_column
from flowcep.cli_support.errors import KEEP_GOING_HINT
from flowcep.cli_support.inputs import BadRow, read_batches
from flowcep.cli_support.records import Record, record_maker, source_line


def line_by_line(data: bytes, name: str, bad_rows: bool) -> tuple[list[tuple[int, object]], str | None]:
    """``(rows, error)``: what reading ``data`` (a CSV file called ``name``) a line at a time gives."""
    rows: list[tuple[int, object]] = []
    pending: list[tuple[int, BadRow]] = []

    def lines():
        for n, line in enumerate(io.BytesIO(data), 1):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                bad = BadRow(line.decode("utf-8", "replace").rstrip("\r\n"), f"not UTF-8 text ({e.reason})")
                if not bad_rows:
                    raise CliError(f"{name}: line {n}: {bad.reason}{KEEP_GOING_HINT}") from None
                pending.append((n, bad))
                text = "\n"
            yield text[1:] if n == 1 and text.startswith("\ufeff") else text

    def add(n: int, item: object) -> None:
        rows.extend(pending)
        pending.clear()
        rows.append((n, item))

    reader = csv.reader(lines())
    try:
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            return rows, None
        except csv.Error as e:
            return rows, f"{name}: line {reader.line_num}: bad CSV header: {e}"
        if not any(header):
            return rows, f"{name}: line 1: the CSV file has an empty header line"
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                bad = BadRow(None, f"bad CSV: {e}")
                if not bad_rows:
                    return rows, f"{name}: line {reader.line_num}: {bad.reason}{KEEP_GOING_HINT}"
                add(reader.line_num, bad)
                continue
            if not cells:
                continue
            if len(cells) != len(header):
                bad = BadRow(cells, f"{len(cells)} cells, but the header has {len(header)} columns")
                if not bad_rows:
                    return rows, f"{name}: line {reader.line_num}: {bad.reason}{KEEP_GOING_HINT}"
                add(reader.line_num, bad)
                continue
            add(reader.line_num, dict(zip(header, map(convert_cell, cells))))
    except CliError as e:
        return rows, e.message
    rows.extend(pending)
    return rows, None


def read_all(path, bad_rows: bool, arrow: bool) -> tuple[list[tuple[int, object]], str | None]:
    rows: list[tuple[int, object]] = []
    try:
        for lines, items in read_batches(path, "csv", bad_rows=bad_rows, arrow=arrow):
            assert len(lines) == len(items)
            rows.extend(zip(lines, items))
    except CliError as e:
        return rows, e.message
    for n, item in rows:
        if isinstance(item, Record):
            assert source_line(item) == n
    return rows, None


def has_arrow() -> bool:
    try:
        import flowcep.cli_support.arrowcsv  # noqa: F401
    except ImportError:
        return False
    return True


READERS = [False, pytest.param(True, marks=pytest.mark.skipif(not has_arrow(), reason="no pyarrow here"))]

# cells of every kind the typing rule tells apart, and the bytes that make a line no row
CELLS = st.sampled_from(
    [
        "",
        "0",
        "7",
        "-3",
        "-0",
        "007",
        "+5",
        " 5",
        "1_000",
        "12345678901234567890",
        "3.5",
        "-.5",
        "5.",
        "1e3",
        "1.e5",
        "1e999",
        "nan",
        "abc",
        "u0042",
        "2026-03-02T09:30:00Z",
        "\u0663",
        "1\u0663",
        "é",
    ]
)
ODD_LINES = st.sampled_from(["", "x", '"quoted, cell",1,2', '"two\nlines",1,2', "a,b,c,d", "\r"])


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    width = draw(st.integers(1, 3))
    header = ",".join(f"c{i}" for i in range(width)) + "\n"
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(ODD_LINES).encode() + b"\n")
        elif draw(st.integers(0, 19)) == 0:
            lines.append(b"\xff\xfe,1\n")
        else:
            lines.append((",".join(draw(CELLS) for _ in range(width)) + "\n").encode())
    data = header.encode() + b"".join(lines)
    if draw(st.booleans()) and data.endswith(b"\n"):
        data = data[:-1]  # no newline at the end
    return data


@pytest.mark.parametrize("arrow", READERS)
@pytest.mark.parametrize("bad_rows", [False, True])
@settings(max_examples=150, deadline=None)
@given(data=csv_files(), piece=st.integers(1, 64))
def test_rows_lines_bad_rows_and_errors_are_those_of_reading_line_by_line(
    tmp_path_factory, arrow, bad_rows, data, piece
):
    path = tmp_path_factory.mktemp("csv") / "in.csv"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(inputs, "PIECE_BYTES", piece)
        m.setattr(inputs, "ARROW_PIECE_BYTES", piece)
        assert read_all(path, bad_rows, arrow) == line_by_line(data, str(path), bad_rows)


@pytest.mark.parametrize("arrow", READERS)
def test_a_row_before_a_bad_line_comes_out_before_the_error(tmp_path, arrow):
    path = tmp_path / "in.csv"
    path.write_bytes(b"a,b\n1,2\n3,4\n5\n6,7\n")
    batches = read_batches(path, bad_rows=False, arrow=arrow)
    rows = []
    with pytest.raises(CliError, match=r"in.csv: line 4: 1 cells, but the header has 2 columns"):
        for lines, items in batches:
            rows.extend(zip(lines, items))
    assert rows == [(2, {"a": 1, "b": 2}), (3, {"a": 3, "b": 4})]


@pytest.mark.parametrize("arrow", READERS)
def test_a_byte_order_mark_and_crlf_line_ends_are_read_as_before(tmp_path, arrow):
    path = tmp_path / "in.csv"
    path.write_bytes(b"\xef\xbb\xbfts,name\r\n1,a\r\n2,b\r\n")
    assert read_all(path, False, arrow) == ([(2, {"ts": 1, "name": "a"}), (3, {"ts": 2, "name": "b"})], None)


@pytest.mark.parametrize(
    "cells",
    [
        ["1", "2", "30"],
        ["-1", "0", "-0", "007"],
        ["1", "", "3"],
        ["1.5", "2.25", "1e3", "-.5"],
        ["1.5", "2", "", "x"],
        ["a", "b", "a", "a", "b", "a", "a", "a", "a"],
        ["\u0663", "1\u0663", "3"],
        ["12345678901234567890", "1"],
        ["1.5\n2.5", "1.5"],
        ["+5", " 5", "1_0"],
    ],
)
def test_a_column_is_typed_as_its_cells_one_by_one(cells):
    typed = convert_column(cells)
    assert typed == [convert_cell(c) for c in cells]
    assert [type(v) for v in typed] == [type(convert_cell(c)) for c in cells]


@settings(max_examples=300, deadline=None)
@given(cells=st.lists(st.one_of(CELLS, st.text(alphabet="-.0123456789e+ \u0663x", max_size=6)), min_size=1))
def test_columns_are_typed_as_cells(cells):
    typed = convert_column(cells)
    assert typed == [convert_cell(c) for c in cells]
    assert [type(v) for v in typed] == [type(convert_cell(c)) for c in cells]


@pytest.mark.skipif(not has_arrow(), reason="no pyarrow here")
@settings(max_examples=300, deadline=None)
@given(cells=st.lists(st.one_of(CELLS, st.text(alphabet="-.0123456789eE+ \u0663x", max_size=8)), min_size=1))
def test_pyarrow_types_columns_as_cells(cells):
    from flowcep.cli_support.arrowcsv import typed_columns

    cells = [c for c in cells if "\r" not in c and c != " "]
    if not cells:
        return
    chunk = "".join(f"{c},z\n" for c in cells).encode()
    columns = typed_columns(chunk, 2)
    assert columns is not None
    expected = [convert_cell(c) for c in cells]
    assert columns[0] == expected
    assert [type(v) for v in columns[0]] == [type(v) for v in expected]


@pytest.mark.skipif(not has_arrow(), reason="no pyarrow here")
@settings(max_examples=300, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False), digits=st.integers(1, 25))
def test_pyarrow_reads_floats_as_python_does(value, digits):
    from flowcep.cli_support.arrowcsv import typed_columns

    texts = [repr(value), f"{value:.{digits}e}", f"{abs(value):.{digits}f}"]
    texts = [t for t in texts if convert_cell(t).__class__ is float]
    if not texts:
        return
    columns = typed_columns("".join(t + "\n" for t in texts).encode(), 1)
    assert columns is not None
    assert columns[0] == [float(t) for t in texts]


@pytest.mark.skipif(not has_arrow(), reason="no pyarrow here")
@pytest.mark.parametrize(
    "chunk",
    [
        b'1,"a"\n',  # quotes: the csv module's rules
        b"1,a\n\n2,b\n",  # a blank line, which pyarrow would skip
        b"1,a\n2\n",  # a row of another width
        b"1,\xff\n",  # not UTF-8
        b"1,a\r2,b\n",  # a lone carriage return
        b"1,a\x00\n",  # a NUL byte
    ],
)
def test_pyarrow_leaves_what_is_not_plain_rows_to_the_csv_module(chunk):
    from flowcep.cli_support.arrowcsv import typed_columns

    assert typed_columns(chunk, 2) is None


def test_a_record_maker_fills_the_columns_in_order_and_a_later_duplicate_wins():
    make = record_maker(["a", "unit price", "a"])
    record = make(7, 1, 2.5, 3)
    assert type(record) is Record
    assert list(record.items()) == [("a", 3), ("unit price", 2.5)]
    assert record == dict(zip(["a", "unit price", "a"], [1, 2.5, 3]))
    assert source_line(record) == 7


def test_json_lines_in_pieces_keep_their_lines_and_bad_lines_in_place(tmp_path, monkeypatch):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": 1}\n\n\xff\n[2]\n{"a": \n{"a": 3}')
    monkeypatch.setattr(inputs, "PIECE_BYTES", 5)
    rows = [row for lines, items in read_batches(path, bad_rows=True) for row in zip(lines, items)]
    with pytest.raises(json.JSONDecodeError) as invalid:  # (its words differ from PyPy's)
        json.loads('{"a": \n')
    assert rows == [
        (1, {"a": 1}),
        (3, BadRow("\ufffd", "not UTF-8 text (invalid start byte)")),
        (4, BadRow([2], "expected a JSON object per line, got list")),
        (5, BadRow('{"a": ', f"not valid JSON ({invalid.value.msg}, column {invalid.value.colno})")),
        (6, {"a": 3}),
    ]


def test_rows_from_a_pipe_come_out_as_they_arrive(monkeypatch):
    # the first rows come out while the writer still holds the pipe open
    read_end, write_end = os.pipe()
    with open(read_end, "rb") as reader_file, open(write_end, "wb", buffering=0) as writer:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(reader_file))
        writer.write(b'{"a": 1}\n{"a": 2}\n')
        batches = read_batches("-", "jsonl")
        got: list[object] = []
        reading = threading.Thread(target=lambda: got.append(next(batches)))
        reading.start()
        reading.join(timeout=10)
        assert not reading.is_alive()
        assert got == [([1, 2], [{"a": 1}, {"a": 2}])]
        writer.write(json.dumps({"a": 3}).encode() + b"\n")
        writer.close()
        assert [items for _, items in batches if items] == [[{"a": 3}]]
