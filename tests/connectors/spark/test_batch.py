"""detect() on batch DataFrames: the same results as the pure-Python runtime, plus the Spark shapes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pyspark.sql import functions as F

from flowcep import MalformedPatternException, Pattern
from flowcep.connectors.spark import detect
from flowcep.runtime import CepOperator

from .conftest import reference, spark_results
from .data import SCHEMA, abc_pattern, absence_pattern, events


def test_batch_equals_pure_python_runtime(spark):
    rows = events(2000, users=25)
    df = spark.createDataFrame(rows, SCHEMA)
    out = detect(df, abc_pattern(), key="user", timestamp="ms").collect()
    got = spark_results(out)
    want = reference(rows, abc_pattern(), key="user")
    assert got == want
    assert {k for k, *_ in got} == {"match", "timeout"}


def test_batch_releases_pending_absence_matches_at_the_end(spark):
    rows = events(500, users=5, seed=3)
    df = spark.createDataFrame(rows, SCHEMA)
    got = spark_results(detect(df, absence_pattern(), key="user", timestamp="ms").collect())
    assert got == reference(rows, absence_pattern(), key="user")
    assert sum(got.values()) > 0


def _rows(spark, data, schema):
    return spark.createDataFrame(data, schema)


TXN = "id long, user string, type string, amount double, ts string"


def test_string_timestamps_iso_and_epoch_millis_give_the_same_results_as_longs(spark):
    rows = events(400, users=4, seed=9, start=1_700_000_000_000)
    iso = [(r.id, r.user, r.type, r.amount, (f"{r.ms}" if r.id % 2 else _iso(r.ms))) for r in rows]
    got = spark_results(detect(_rows(spark, iso, TXN), abc_pattern(), key="user", timestamp="ts").collect())
    assert got == reference(rows, abc_pattern(), key="user")


def test_timestamp_columns_are_read_as_event_time(spark):
    rows = events(400, users=4, seed=9, start=1_700_000_000_000)
    df = spark.createDataFrame(rows, "id long, user string, type string, amount double, ms long")
    df = df.withColumn("at", F.timestamp_millis("ms")).drop("ms")
    got = spark_results(detect(df, abc_pattern(), key="user", timestamp="at").collect())
    assert got == reference(rows, abc_pattern(), key="user")


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def test_rows_with_null_key_or_bad_timestamp_come_out_as_invalid(spark):
    data = [
        (1, "u", "a", 1.0, "2024-01-01T00:00:00Z"),
        (2, None, "a", 1.0, "2024-01-01T00:00:01Z"),
        (3, "u", "a", 1.0, None),
        (4, "u", "a", 1.0, "yesterday"),
        (5, "u", "b", 1.0, "2024-01-01T00:00:00.010Z"),
        (6, "u", "c", 9.0, "2024-01-01T00:00:00.020Z"),
    ]
    out = detect(_rows(spark, data, TXN), abc_pattern(), key="user", timestamp="ts").collect()
    invalid = sorted(
        (
            (r.key, json.loads(r.events)["invalid"][0]["id"], json.loads(r.events)["reason"])
            for r in out
            if r.kind == "invalid"
        ),
        key=lambda t: t[1],
    )
    assert invalid == [
        (None, 2, "the key column(s) user are null"),
        ("u", 3, "the timestamp column ts is null"),
        ("u", 4, "the timestamp 'yesterday' in column ts cannot be parsed"),
    ]
    assert [json.loads(r.events) for r in out if r.kind == "match"] == [
        {
            "a": [dict(zip(("id", "user", "type", "amount", "ts"), data[0], strict=True))],
            "b": [dict(zip(("id", "user", "type", "amount", "ts"), data[4], strict=True))],
            "c": [dict(zip(("id", "user", "type", "amount", "ts"), data[5], strict=True))],
        }
    ]


@pytest.mark.parametrize("choice", [{"on_error": "raise"}, {"on_invalid": "raise"}])
def test_on_error_raise_fails_the_job_naming_the_row(spark, choice):
    df = _rows(spark, [(1, "u", "a", 1.0, "soon")], TXN)
    with pytest.raises(Exception, match="invalid row: the timestamp 'soon' in column ts cannot be parsed"):
        detect(df, abc_pattern(), key="user", timestamp="ts", **choice).collect()


def test_on_error_side_output_is_the_default_and_on_invalid_output_its_old_name():
    from flowcep.connectors.spark.detect import bad_input_choice

    assert bad_input_choice(None, None) == bad_input_choice("side_output", None) == "output"
    assert bad_input_choice(None, "output") == "output" and bad_input_choice(None, "raise") == "raise"
    with pytest.raises(ValueError, match="on_error must be 'side_output' or 'raise', got 'output'"):
        bad_input_choice("output", None)
    with pytest.raises(ValueError, match="not both"):
        bad_input_choice("raise", "raise")


def test_a_condition_that_raises_makes_the_row_invalid(spark):
    pattern = Pattern.begin("a").where(lambda e: 1 / e.amount > 0.5)
    df = spark.createDataFrame([(1, "u", "a", 0.0, 1), (2, "u", "a", 1.0, 2)], SCHEMA)
    out = sorted(detect(df, pattern, key="user", timestamp="ms").collect(), key=lambda r: r.kind)
    assert [(r.kind, json.loads(r.events)[r.kind if r.kind == "invalid" else "a"][0]["id"]) for r in out] == [
        ("invalid", 1),
        ("match", 2),
    ]
    assert "pattern step 'a'" in json.loads(out[0].events)["reason"]
    assert "ZeroDivisionError" in json.loads(out[0].events)["reason"]


def test_default_output_schema_and_times(spark):
    df = spark.createDataFrame(
        [(1, "u", "a", 1.0, 1_000), (2, "u", "b", 1.0, 1_010), (3, "u", "c", 2.0, 1_020)], SCHEMA
    )
    out = detect(df, abc_pattern(), key="user", timestamp="ms")
    assert out.schema.simpleString() == (
        "struct<key:string,kind:string,timestamp:timestamp,first_ts:timestamp,last_ts:timestamp,events:string>"
    )
    rows = {r.kind: r for r in out.collect()}
    m = rows["match"]
    assert (m.first_ts, m.last_ts, m.timestamp) == (_ts(1_000), _ts(1_020), _ts(1_020))
    assert json.loads(m.events) == {
        "a": [{"id": 1, "user": "u", "type": "a", "amount": 1.0, "ms": 1000}],
        "b": [{"id": 2, "user": "u", "type": "b", "amount": 1.0, "ms": 1010}],
        "c": [{"id": 3, "user": "u", "type": "c", "amount": 2.0, "ms": 1020}],
    }
    t = rows["timeout"]  # a, b waiting for a c that never comes (the second b-run)
    assert t.timestamp == _ts(1_040) and t.first_ts == _ts(1_000)


def _ts(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).replace(tzinfo=None)


def test_select_with_one_argument_shapes_matches(spark):
    rows = events(600, users=6, seed=2)
    df = spark.createDataFrame(rows, SCHEMA)

    def select(match):
        return (match["a"][0].user, len(match["b"]), sum(e.amount for e in match["c"]))

    out = detect(
        df,
        abc_pattern(),
        key="user",
        timestamp="ms",
        select=select,
        output_schema="user string, bs int, total double",
    )
    got = sorted(tuple(r) for r in out.collect())
    want = sorted(select(o.value) for o in _pure(rows, abc_pattern()) if o.kind == "match")
    assert got == want and got


def test_select_with_three_arguments_sees_every_kind(spark):
    df = spark.createDataFrame(
        [(1, "u", "a", 1.0, 1_000), (2, "u", "b", 1.0, 1_010), (3, "u", "c", 2.0, 1_020)], SCHEMA
    )

    def select(kind, key, events):
        return {"kind": kind, "key": key, "ids": [e.id for step in events.values() for e in step]}

    out = detect(
        df,
        abc_pattern(),
        key="user",
        timestamp="ms",
        select=select,
        output_schema="kind string, key string, ids array<long>",
    )
    assert sorted((r.kind, r.key, r.ids) for r in out.collect()) == [
        ("match", "u", [1, 2, 3]),
        ("timeout", "u", [1, 2]),
    ]


def test_no_key_and_compound_keys(spark):
    rows = events(500, users=3, seed=4)
    df = spark.createDataFrame(rows, SCHEMA)
    assert spark_results(detect(df, abc_pattern(), key=None, timestamp="ms").collect()) == reference(
        rows, abc_pattern(), key=None
    )
    got = detect(df, abc_pattern(), key=["user", "type"], timestamp="ms").collect()
    # a, b and c never share a (user, type) key: only single-step timeouts of a
    assert {r.kind for r in got} == {"timeout"}
    assert {tuple(json.loads(r.key)) for r in got} <= {(f"u{i}", "a") for i in range(3)}


def test_bad_arguments_fail_before_any_job(spark):
    df = spark.createDataFrame([(1, "u", "a", 1.0, 1)], SCHEMA)
    with pytest.raises(ValueError, match="no timestamp column 'when'"):
        detect(df, abc_pattern(), key="user", timestamp="when")
    with pytest.raises(ValueError, match="no key column 'who'"):
        detect(df, abc_pattern(), key="who", timestamp="ms")
    with pytest.raises(ValueError, match="select and output_schema go together"):
        detect(df, abc_pattern(), key="user", timestamp="ms", select=lambda m: m)
    with pytest.raises(ValueError, match="on_invalid"):
        detect(df, abc_pattern(), key="user", timestamp="ms", on_invalid="drop")
    with pytest.raises(MalformedPatternException):
        detect(df, Pattern.begin("a").not_followed_by("b"), key="user", timestamp="ms")
    with pytest.raises(TypeError, match="timestamp column has type boolean"):
        detect(df.selectExpr("*", "true as flag"), abc_pattern(), key="user", timestamp="flag")


def _pure(rows, pattern):
    op = CepOperator(pattern, key_by=lambda r: r.user, timestamp=lambda r: r.ms)
    return [o for r in rows for o in op.process_element(r)] + op.flush()
