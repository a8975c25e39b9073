import gzip
import io
import sys

import pytest

from flowcep.cli_support import CliError, Record, read_events, read_rows
from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_INPUT
from flowcep.cli_support.inputs import BadRow, ReadProgress, convert_cell, detect_format
from flowcep.cli_support.records import source_line


def test_record_is_a_dict_with_attributes():
    r = Record(price=1.5, symbol="ACME")
    assert r.price == r["price"] == 1.5
    assert isinstance(r, dict)
    with pytest.raises(AttributeError, match="no column 'volume'.*price, symbol"):
        _ = r.volume
    import pickle

    assert pickle.loads(pickle.dumps(r)) == r
    assert type(pickle.loads(pickle.dumps(r))) is Record


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-3", -3),
        ("3.5", 3.5),
        ("1e3", 1000.0),
        ("", None),
        ("007", "007"),
        ("ACME", "ACME"),
        ("1.2.3", "1.2.3"),
    ],
)
def test_csv_cells_are_typed(text, value):
    assert convert_cell(text) == value
    assert type(convert_cell(text)) is type(value)


def test_detect_format():
    assert detect_format("a.csv", None) == "csv"
    assert detect_format("a.JSONL", None) == "jsonl"
    assert detect_format("a.ndjson.gz", None) == "jsonl"
    assert detect_format("a.parquet", None) == "parquet"
    assert detect_format("data.txt", "csv") == "csv"
    with pytest.raises(CliError, match="--format"):
        detect_format("data.txt", None)


def test_read_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text('time,name,price\n1,"a, b",2.5\n\n3,c,\n', encoding="utf-8")
    rows = list(read_rows(p))
    assert rows == [
        (2, {"time": 1, "name": "a, b", "price": 2.5}),
        (4, {"time": 3, "name": "c", "price": None}),
    ]
    assert all(isinstance(r, Record) for _, r in rows)


def test_a_record_remembers_the_line_it_was_read_from(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"time": 1}\n\n{"time": 3, "line": "L3"}\n', encoding="utf-8")
    records = read_events(p)
    assert [source_line(r) for r in records] == [1, 3]
    assert records[1].line == "L3"  # a column named line is still the column
    assert source_line(Record(time=1)) is None


def test_read_rows_with_bad_rows_yields_a_bad_row_in_the_lines_place(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n3\n4,5\n", encoding="utf-8")
    assert list(read_rows(p, bad_rows=True)) == [
        (2, {"a": 1, "b": 2}),
        (3, BadRow(["3"], "1 cells, but the header has 2 columns")),
        (4, {"a": 4, "b": 5}),
    ]


def test_read_csv_wrong_width_names_the_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with pytest.raises(CliError, match=r"t.csv: line 3: 1 cells, but the header has 2 columns") as e:
        read_events(p)
    assert e.value.status == EXIT_INPUT


def test_read_jsonl_and_errors(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"a": 1}\n\n{"a": [2]}\n', encoding="utf-8")
    assert read_events(p) == [{"a": 1}, {"a": [2]}]
    p.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(CliError, match=r"line 2: not valid JSON"):
        read_events(p)
    p.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(CliError, match=r"line 2: expected a JSON object per line, got list"):
        read_events(p)


def test_read_gzip_and_progress(tmp_path):
    p = tmp_path / "t.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("a\n1\n2\n")
    assert read_events(p) == [{"a": 1}, {"a": 2}]
    plain = tmp_path / "t.csv"
    plain.write_text("a\n1\n2\n")
    progress = ReadProgress()
    list(read_rows(plain, progress=progress))
    assert progress.total == plain.stat().st_size
    assert progress.fraction() == 1.0


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(CliError, match="input file not found"):
        read_events(tmp_path / "nope.csv")
    with pytest.raises(CliError, match="is a directory"):
        list(read_rows(str(tmp_path), "csv"))


def test_not_utf8(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"a\n\xff\xfe\n")
    with pytest.raises(CliError, match="line 2: not UTF-8"):
        read_events(p)


@pytest.mark.parametrize(
    ("text", "expected"), [("a,b\n1,x\n", [{"a": 1, "b": "x"}]), ('{"a": 1}\n', [{"a": 1}])]
)
def test_stdin_format_is_sniffed(monkeypatch, text, expected):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert [r for _, r in read_rows("-")] == expected


def test_parquet(tmp_path):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        with pytest.raises(CliError, match="pip install pyarrow") as e:
            list(read_rows(tmp_path / "x.parquet"))
        assert e.value.status == EXIT_DEPENDENCY
        return
    p = tmp_path / "x.parquet"
    pq.write_table(pa.table({"time": [1, 2], "k": ["a", "b"]}), p)
    assert list(read_rows(p)) == [(1, {"time": 1, "k": "a"}), (2, {"time": 2, "k": "b"})]
