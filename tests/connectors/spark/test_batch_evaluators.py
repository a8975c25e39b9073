"""detect(..., evaluator=...) on batch DataFrames: the bounded-data evaluators give the NFA's rows."""

from __future__ import annotations

import json

import pytest

from flowcep import Pattern
from flowcep.bounded import UnsupportedPattern
from flowcep.connectors.spark import detect

from .data import SCHEMA, events

BOUNDED = ["optiseq", "tree", "auto"]


def rising(window: int | None = 40) -> Pattern:
    """a, then any b, then any c priced above that a, within ``window`` ms."""
    p = (
        Pattern.begin("a").where(lambda e: e.type == "a")
        .followed_by_any("b").where(lambda e: e.type == "b")
        .followed_by_any("c").where(lambda e: e.type == "c")
        .where(lambda e, ctx: e.amount > ctx.get_events_for_pattern("a")[0].amount)
    )  # fmt: skip
    return p if window is None else p.within(window)


def ids(match) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((step, tuple(e.id for e in rows)) for step, rows in match.items())


def sorted_rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_select_of_matches_gives_the_nfa_rows(spark, evaluator):
    df = spark.createDataFrame(events(600, users=4, seed=5), SCHEMA)

    def run(chosen):
        return sorted_rows(
            detect(
                df, rising(), key="user", timestamp="ms",
                select=lambda m: (json.dumps(ids(m)),), output_schema="steps string", evaluator=chosen,
            )
        )  # fmt: skip

    want = run("nfa")
    assert len(want) > 20
    assert run(evaluator) == want


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_default_output_without_a_window_gives_the_nfa_rows(spark, evaluator):
    df = spark.createDataFrame(events(120, users=3, seed=2), SCHEMA)
    want = sorted_rows(detect(df, rising(None), key="user", timestamp="ms"))
    assert {r[1] for r in want} == {"match"}
    assert sorted_rows(detect(df, rising(None), key="user", timestamp="ms", evaluator=evaluator)) == want


def test_rows_without_a_timestamp_are_invalid_as_with_the_nfa(spark):
    data = [(1, "u", "a", 1.0, 1), (2, "u", "b", 1.0, None), (3, "u", "b", 1.0, 3), (4, "u", "c", 5.0, 4)]
    df = spark.createDataFrame(data, SCHEMA)
    got = sorted_rows(detect(df, rising(None), key="user", timestamp="ms", evaluator="tree"))
    assert [(r[1], json.loads(r[5]).get("reason")) for r in got] == [
        ("invalid", "the timestamp column ms is null"),
        ("match", None),
    ]
    assert got == sorted_rows(detect(df, rising(None), key="user", timestamp="ms"))


def test_a_condition_that_raises_makes_the_row_invalid_as_with_the_nfa(spark):
    p = (
        Pattern.begin("a").where(lambda e: e.type == "a")
        .followed_by_any("b").where(lambda e: 1 / e.amount > 0.5)
    )  # fmt: skip
    df = spark.createDataFrame([(1, "u", "a", 1.0, 1), (2, "u", "b", 0.0, 2), (3, "u", "b", 1.0, 3)], SCHEMA)
    got = sorted_rows(detect(df, p, key="user", timestamp="ms", evaluator="tree"))
    assert [r[1] for r in got] == ["invalid", "match"]
    assert "ZeroDivisionError" in json.loads(got[0][5])["reason"]
    assert got == sorted_rows(detect(df, p, key="user", timestamp="ms"))


def test_auto_keeps_the_timeouts_of_the_default_output(spark):
    df = spark.createDataFrame(events(200, users=2, seed=4), SCHEMA)
    got = sorted_rows(detect(df, rising(), key="user", timestamp="ms", evaluator="auto"))
    assert "timeout" in {r[1] for r in got}
    assert got == sorted_rows(detect(df, rising(), key="user", timestamp="ms"))


def test_an_explicit_bounded_evaluator_refuses_an_output_with_timeouts(spark):
    df = spark.createDataFrame(events(10, users=1), SCHEMA)
    with pytest.raises(ValueError, match="evaluator='tree' does not serve timed-out partial matches"):
        detect(df, rising(), key="user", timestamp="ms", evaluator="tree")


def test_an_explicit_bounded_evaluator_names_the_feature_it_does_not_serve(spark):
    p = Pattern.begin("a").where(lambda e: e.type == "a").next("b").where(lambda e: e.type == "b")
    df = spark.createDataFrame(events(10, users=1), SCHEMA)
    with pytest.raises(UnsupportedPattern, match="next before step 'b'"):
        detect(df, p, key="user", timestamp="ms", evaluator="optiseq")


def test_a_stream_or_an_unknown_evaluator_is_refused(spark):
    stream = spark.readStream.format("rate").load().selectExpr("value as id", "timestamp as at")
    with pytest.raises(ValueError, match="needs a batch DataFrame"):
        detect(stream, rising(None), key=None, timestamp="at", evaluator="auto")
    df = spark.createDataFrame(events(10, users=1), SCHEMA)
    with pytest.raises(ValueError, match="evaluator must be one of"):
        detect(df, rising(), key="user", timestamp="ms", evaluator="fast")


def test_the_cli_hook_takes_the_evaluator(spark, tmp_path):
    from flowcep.cli_support.spark_engine import run_cli

    rows = events(300, users=3, seed=8)
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r.asDict()) + "\n" for r in rows), encoding="utf-8")

    def records(evaluator):
        return [
            json.dumps(r, sort_keys=True)
            for r in run_cli(
                rising(None), str(path), "jsonl", "user", "ms", 0, None, None, evaluator=evaluator
            )
        ]

    want = records("nfa")
    assert len(want) > 10
    assert sorted(records("tree")) == sorted(want)
    with pytest.raises(ValueError, match="does not serve timed-out partial matches"):
        run_cli(rising(), str(path), "jsonl", "user", "ms", 0, None, None, evaluator="optiseq")
