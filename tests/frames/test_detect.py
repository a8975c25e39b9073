"""``flowcep.connectors.frames.detect``: pandas, polars and Arrow in, the same results as ``CEP.pattern`` out."""

from __future__ import annotations

import importlib
import json
import platform
from datetime import datetime, timedelta, timezone
from types import ModuleType
from typing import Any

import pytest

from flowcep import CEP, Pattern

# why a library is missing on PyPy 3.9 (checked with pip install --only-binary :all: on 2026-11-27)
PYPY_REASONS = {
    "pyarrow": "pyarrow has no PyPy build (no PyPy wheels; a source build needs Arrow C++), and frames needs it",
    "polars": "polars ships CPython-only (abi3) wheels",
    "pandas": "pandas offers no PyPy 3.9 wheel in the package index",
    "numpy": "numpy is not installed in PyPy's venv",
}


def library(name: str) -> ModuleType:
    """The frame library; only PyPy may lack it."""
    if platform.python_implementation() == "PyPy":
        try:
            return importlib.import_module(name)
        except ImportError:
            pytest.skip(f"on PyPy: {PYPY_REASONS[name]}", allow_module_level=True)
    return importlib.import_module(name)  # CPython: the frames extra installs it, a missing one fails


pa = library("pyarrow")
from flowcep.connectors.frames import InvalidRowError, detect  # noqa: E402 - needs pyarrow

# a at 1 then b within 10 ms, per user
PATTERN = (
    Pattern.begin("a")
    .where(lambda e: e["kind"] == "a")
    .followed_by("b")
    .where(lambda e: e["kind"] == "b")
    .within(10)
)
ROWS = [
    {"user": "ann", "t": 1, "kind": "a"},
    {"user": "bob", "t": 2, "kind": "a"},
    {"user": "ann", "t": 3, "kind": "x"},
    {"user": "ann", "t": 5, "kind": "b"},
    {"user": "bob", "t": 30, "kind": "b"},
]


def ms(n: int | None) -> datetime | None:
    return None if n is None else datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=n)


def as_frame(name: str, rows: list[dict[str, Any]]) -> Any:
    if name == "pandas":
        return library("pandas").DataFrame(rows)
    if name == "polars":
        return library("polars").DataFrame(rows)
    return pa.Table.from_pylist(rows)


def as_rows(frame: Any) -> list[dict[str, Any]]:
    """Result rows as dicts, whatever the library (times as aware datetimes)."""
    if isinstance(frame, pa.Table):
        table = frame
    elif type(frame).__module__.startswith("polars"):
        table = frame.to_arrow()
    else:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    return [
        {k: (v.to_pydatetime() if hasattr(v, "to_pydatetime") else v) for k, v in r.items()}
        for r in table.to_pylist()
    ]


EXPECTED = [
    {
        "key": "ann",
        "kind": "match",
        "timestamp": ms(5),
        "first_ts": ms(1),
        "last_ts": ms(5),
        "events": '{"a": [{"user": "ann", "t": 1, "kind": "a"}], "b": [{"user": "ann", "t": 5, "kind": "b"}]}',
    },
    {
        "key": "bob",
        "kind": "timeout",
        "timestamp": ms(12),
        "first_ts": ms(2),
        "last_ts": ms(2),
        "events": '{"a": [{"user": "bob", "t": 2, "kind": "a"}]}',
    },
]


@pytest.mark.parametrize("name", ["pandas", "polars", "pyarrow"])
def test_a_frame_gives_the_default_schema_rows(name: str) -> None:
    result = detect(as_frame(name, ROWS), PATTERN, key="user", timestamp="t")
    assert as_rows(result) == EXPECTED


@pytest.mark.parametrize("name", ["pandas", "polars", "pyarrow"])
def test_the_result_is_a_frame_of_the_input_library(name: str) -> None:
    result = detect(as_frame(name, ROWS), PATTERN, key="user", timestamp="t")
    expected_type = pa.Table if name == "pyarrow" else type(as_frame(name, ROWS))
    assert type(result) is expected_type
    assert list(result.columns if name != "pyarrow" else result.column_names) == [
        "key",
        "kind",
        "timestamp",
        "first_ts",
        "last_ts",
        "events",
    ]


@pytest.mark.parametrize("name", ["pandas", "polars", "pyarrow"])
def test_matches_and_timeouts_equal_cep_pattern_on_the_same_rows(name: str) -> None:
    rows = [{"user": f"u{i % 3}", "t": i * 2, "kind": "ab"[i % 2]} for i in range(60)]
    stream = CEP.pattern(rows, PATTERN, key_by="user", timestamp="t")
    results = stream.select(lambda m: ("match", m), timeout_fn=lambda m, ts: ("timeout", m))
    expected = list(results) + list(results.get_side_output(CEP.TIMED_OUT))
    kinds = [kind for kind, _ in expected]
    assert (kinds.count("match"), kinds.count("timeout")) == (29, 1)  # what CEP.pattern finds here

    result = as_rows(detect(as_frame(name, rows), PATTERN, key="user", timestamp="t"))
    assert sorted(json.dumps((r["kind"], json.loads(r["events"]))) for r in result) == sorted(
        json.dumps(r) for r in expected
    )


def test_record_batches_are_read_one_at_a_time_with_the_same_results() -> None:
    batches = iter(pa.Table.from_pylist(ROWS).to_batches(max_chunksize=1))
    assert as_rows(detect(batches, PATTERN, key="user", timestamp="t")) == EXPECTED


def test_a_record_batch_reader_is_an_input() -> None:
    table = pa.Table.from_pylist(ROWS)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=2))
    assert as_rows(detect(reader, PATTERN, key="user", timestamp="t")) == EXPECTED


def test_timestamp_columns_give_times_and_iso_text() -> None:
    start = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
    rows = [
        {"user": "ann", "t": start, "kind": "a"},
        {"user": "ann", "t": start + timedelta(milliseconds=4), "kind": "b"},
    ]
    [row] = as_rows(detect(as_frame("pyarrow", rows), PATTERN, key="user", timestamp="t"))
    assert (row["kind"], row["first_ts"], row["last_ts"]) == (
        "match",
        start,
        start + timedelta(milliseconds=4),
    )
    assert json.loads(row["events"])["a"] == [{"user": "ann", "t": "2026-03-02T09:30:00+00:00", "kind": "a"}]


def test_select_gives_the_users_rows_in_its_schema() -> None:
    result = detect(
        as_frame("pandas", ROWS),
        PATTERN,
        key="user",
        timestamp="t",
        select=lambda m: (m["a"][0]["user"], m["b"][0]["t"] - m["a"][0]["t"]),
        output_schema=pa.schema([("user", pa.string()), ("gap_ms", pa.int64())]),
    )
    assert result.to_dict("records") == [{"user": "ann", "gap_ms": 4}]


def test_select_of_three_arguments_sees_timeouts() -> None:
    result = detect(
        as_frame("pyarrow", ROWS),
        PATTERN,
        key="user",
        timestamp="t",
        select=lambda kind, key, events: {"kind": kind, "key": key, "steps": list(events)},
    )
    assert result.to_pylist() == [
        {"kind": "match", "key": "ann", "steps": ["a", "b"]},
        {"kind": "timeout", "key": "bob", "steps": ["a"]},
    ]


def test_a_row_behind_the_watermark_is_late() -> None:
    rows = [{"user": "ann", "t": 10, "kind": "x"}, {"user": "ann", "t": 5, "kind": "a"}]
    [row] = as_rows(detect(as_frame("pyarrow", rows), PATTERN, key="user", timestamp="t", out_of_orderness=2))
    assert (row["kind"], row["timestamp"], json.loads(row["events"])) == (
        "late",
        ms(5),
        {"late": [{"user": "ann", "t": 5, "kind": "a"}]},
    )


def test_a_null_time_is_an_invalid_row_with_its_reason() -> None:
    rows = [{"user": "ann", "t": None, "kind": "a"}, {"user": "ann", "t": 4, "kind": "a"}]
    table = pa.Table.from_pylist(
        rows, schema=pa.schema([("user", pa.string()), ("t", pa.int64()), ("kind", pa.string())])
    )
    result = as_rows(detect(table, PATTERN, key="user", timestamp="t"))
    assert [(r["kind"], r["timestamp"], json.loads(r["events"])) for r in result] == [
        (
            "invalid",
            None,
            {
                "invalid": [{"user": "ann", "t": None, "kind": "a"}],
                "reason": "the timestamp column t is null",
            },
        ),
        ("timeout", ms(14), {"a": [{"user": "ann", "t": 4, "kind": "a"}]}),
    ]


def test_on_error_raise_names_the_row() -> None:
    table = pa.Table.from_pylist([{"user": None, "t": 1, "kind": "a"}])
    with pytest.raises(InvalidRowError, match=r"the key column\(s\) user are null: \{'user': None"):
        detect(table, PATTERN, key="user", timestamp="t", on_error="raise")


def test_a_string_timestamp_column_is_refused_with_its_type() -> None:
    with pytest.raises(TypeError, match="the timestamp column 't' has type string"):
        detect(
            pa.Table.from_pylist([{"user": "ann", "t": "soon", "kind": "a"}]),
            PATTERN,
            key="user",
            timestamp="t",
        )


def test_a_condition_that_raises_gives_an_invalid_row_naming_the_step() -> None:
    pattern = Pattern.begin("a").where(lambda e: 1 / e["n"] > 0)
    rows = [{"user": "ann", "t": 1, "n": 0}, {"user": "ann", "t": 2, "n": 1}]
    result = as_rows(detect(pa.Table.from_pylist(rows), pattern, key="user", timestamp="t"))
    assert [(r["kind"], r["key"], json.loads(r["events"])) for r in result] == [
        (
            "invalid",
            "ann",
            {
                "invalid": [{"user": "ann", "t": 1, "n": 0}],
                "reason": "pattern step 'a': condition raised ZeroDivisionError: division by zero",
            },
        ),
        ("match", "ann", {"a": [{"user": "ann", "t": 2, "n": 1}]}),
    ]
