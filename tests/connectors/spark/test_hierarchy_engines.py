"""detect() runs an event hierarchy on the engine ``hierarchy_operator`` would choose
(docs/spark.md, docs/semantics.md 11.9): ``engine="auto"`` by default, the one-pass engine for a
hierarchy of its class, the levels otherwise; both give the same rows; a streaming bucket whose
snapshot the other engine took (a checkpoint from before the choice) continues on that engine."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import Row

from flowcep import Pattern
from flowcep.connectors.spark import detect
from flowcep.connectors.spark.matcher import Matcher
from flowcep.hierarchy import Hierarchy, HierarchyError, HierarchyOperator, OnePassHierarchy, of_type

from .data import SCHEMA, events
from .streams import FileFeed
from .test_hierarchy import ids, outages, spark_results

LEVELS = ["incident", "escalation"]
FIELDS = ["id", "user", "type", "amount", "ms"]


def escalations() -> Hierarchy:
    """In the one-pass class. incident: an a then a b within 30 ms (its amount the sum of
    theirs); escalation: a c then an incident of amount at least 8, within 200 ms."""
    incident = (
        Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(lambda e: e.type == "b")
    )
    escalation = (
        Pattern.begin("cause")
        .where(lambda e: e.type == "c")
        .followed_by("incident")
        .where(of_type("incident", lambda c: c.amount >= 8))
        .within(200)
    )
    return (
        Hierarchy()
        .define(
            "incident", incident.within(30), compose=lambda m: {"amount": m["a"][0].amount + m["b"][0].amount}
        )
        .define("escalation", escalation)
    )


def reference(rows: list[Row], out_of_orderness: int = 0) -> Any:
    """The levels engine in pure Python, as ``spark_results`` counts rows."""
    from collections import Counter

    operator = HierarchyOperator(
        escalations(),
        key_by=lambda r: r["user"],
        timestamp=lambda r: r["ms"],
        out_of_orderness=out_of_orderness,
        emit=LEVELS,
    )
    outputs = [o for r in rows for o in operator.process_element(r)] + operator.flush()
    return Counter(
        (o.level, o.kind, o.key, o.timestamp, ids(o.value)) for o in outputs if o.kind in ("match", "timeout")
    )


def matcher(hierarchy: Hierarchy, emit: list[str] | None = LEVELS, **options: Any) -> Matcher:
    """The matcher a worker runs for ``detect(df, hierarchy, key="user", timestamp="ms")``."""
    return Matcher(
        hierarchy,
        user_fields=FIELDS,
        key_names=["user"],
        timestamp="ms",
        mode="default",
        select=None,
        output_fields=["key", "level", "kind", "timestamp", "first_ts", "last_ts", "events"],
        on_invalid="output",
        recursive=False,
        emit=emit,
        **options,
    )


# -- the choice


def test_the_default_engine_is_the_one_pass_engine_for_a_hierarchy_of_its_class():
    assert isinstance(matcher(escalations()).operator(), OnePassHierarchy)


def test_outside_the_class_the_default_engine_is_the_levels():
    # outages' top level starts with a complex event: outside the one-pass class
    assert isinstance(matcher(outages(), emit=None).operator(), HierarchyOperator)


def test_engine_levels_keeps_the_levels_for_a_hierarchy_of_the_class():
    assert isinstance(matcher(escalations(), engine="levels").operator(), HierarchyOperator)


def test_a_wrong_engine_name_is_refused(spark):
    df = spark.createDataFrame(events(5, users=1), SCHEMA)
    with pytest.raises(ValueError, match="engine must be one of 'levels', 'one_pass', 'auto', got 'fast'"):
        detect(df, escalations(), key="user", timestamp="ms", engine="fast")


def test_the_one_pass_engine_refuses_a_hierarchy_outside_its_class(spark):
    df = spark.createDataFrame(events(5, users=1), SCHEMA)
    with pytest.raises(HierarchyError, match="the one-pass engine does not run this hierarchy"):
        detect(df, outages(), key="user", timestamp="ms", engine="one_pass")


def test_engine_goes_with_a_hierarchy_only(spark):
    df = spark.createDataFrame(events(5, users=1), SCHEMA)
    pattern = Pattern.begin("a").where(lambda e: e.type == "a")
    with pytest.raises(ValueError, match="engine chooses an event hierarchy's engine"):
        detect(df, pattern, key="user", timestamp="ms", engine="levels")


# -- the same rows on both engines


@pytest.mark.parametrize("engine", [None, "levels", "one_pass"])
def test_a_batch_run_gives_the_same_rows_on_every_engine(spark, engine):
    rows = events(600, users=6, seed=5)
    choice = {} if engine is None else {"engine": engine}
    out = detect(
        spark.createDataFrame(rows, SCHEMA), escalations(), key="user", timestamp="ms", emit=LEVELS, **choice
    )
    got = spark_results(out.collect())
    assert got == reference(rows)
    assert {(level, kind) for level, kind, *_ in got} == {
        ("incident", "match"),
        ("incident", "timeout"),
        ("escalation", "match"),
        ("escalation", "timeout"),
    }


def run_stream(feed: FileFeed, tmp_path: Any, chunks: list[list[Row]], engine: str | None) -> list[Row]:
    """``chunks`` through a streaming ``detect`` (one micro-batch each) on ``engine``, on the
    checkpoint ``tmp_path / "ck"`` (a second call restarts the query from it); its rows."""
    choice = {} if engine is None else {"engine": engine}
    out = detect(
        feed.stream(), escalations(), key="user", timestamp="ms", out_of_orderness=5, emit=LEVELS, **choice
    )
    rows: list[Row] = []
    # (foreachBatch, not the memory sink: a query restarted from a checkpoint needs a sink that recovers)
    q = (
        out.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        for chunk in chunks:
            feed.write(chunk)
            q.processAllAvailable()
    finally:
        q.stop()
    return rows


def sentinel(rows: list[Row]) -> list[Row]:
    """A row of another key far in the future: Spark's watermark passes every window."""
    return [Row(id=-1, user="zz-sentinel", type="x", amount=0.0, ms=rows[-1].ms + 10_000)]


def test_a_stream_on_the_default_engine_equals_the_levels_engine(spark, tmp_path):
    rows = events(600, users=6, seed=8)
    half = len(rows) // 2
    got = spark_results(
        run_stream(
            FileFeed(spark, tmp_path),
            tmp_path,
            [rows[:half], rows[half:], sentinel(rows)],
            None,
        )
    )
    assert got == reference(rows, out_of_orderness=5)
    assert sum(1 for level, kind, *_ in got if (level, kind) == ("escalation", "match")) > 0


# -- state written by the other engine


def push(m: Matcher, op: Any, rows: list[Row], out: list[Any]) -> None:
    """``rows`` through ``op`` as a worker feeds them, the watermark just behind each."""
    process = m.processor(op)
    for r in rows:
        m.emit(process(tuple.__new__(m.event_class, (*r, r.ms)), r.ms), out)
        m.emit(op.process_watermark(r.ms - 1), out)


def test_a_bucket_snapshot_of_the_levels_engine_continues_on_it_under_auto():
    rows = events(200, users=3, seed=3)
    half = len(rows) // 2
    whole: list[Any] = []
    levels = matcher(escalations(), engine="levels")
    op = levels.operator()
    push(levels, op, rows, whole)
    levels.emit(op.flush(), whole)

    before: list[Any] = []
    op = levels.operator()
    push(levels, op, rows[:half], before)
    blob = op.snapshot(canonical=False)

    after: list[Any] = []
    auto = matcher(escalations())
    for _ in range(2):  # (the second time, the bucket's header is known to be the other engine's)
        after.clear()
        restored = auto.restored(auto.operator(), blob)
        assert isinstance(restored, HierarchyOperator)
        push(auto, restored, rows[half:], after)
        auto.emit(restored.flush(), after)
    assert before + after == whole
    assert any(r[1:3] == ("escalation", "match") for r in after)
    assert isinstance(auto.operator(), OnePassHierarchy)  # a new bucket: the chosen engine


def test_a_snapshot_of_another_hierarchy_is_still_refused():
    blob = matcher(outages(), emit=None, engine="levels").operator().snapshot()
    auto = matcher(escalations())
    with pytest.raises(ValueError, match="snapshot"):
        auto.restored(auto.operator(), blob)


def test_a_restarted_stream_continues_a_levels_checkpoint_under_auto(spark, tmp_path):
    # the first half on a query of the levels engine (a checkpoint from before the choice of
    # engine), then the same checkpoint restarted with the default engine
    rows = events(600, users=6, seed=11)
    half = len(rows) // 2
    feed = FileFeed(spark, tmp_path)
    first = run_stream(feed, tmp_path, [rows[:half]], "levels")
    second = run_stream(feed, tmp_path, [rows[half:], sentinel(rows)], None)
    got = spark_results(first) + spark_results(second)
    assert got == reference(rows, out_of_orderness=5)
    assert sum(1 for level, kind, *_ in spark_results(second) if (level, kind) == ("escalation", "match")) > 0


def test_a_row_a_condition_raises_on_comes_out_invalid_alike_on_both_engines():
    def incident_start(e: Any) -> bool:
        if e.amount == 0:
            raise ValueError("zero amount")
        return bool(e.type == "a")

    def hierarchy() -> Hierarchy:
        incident = Pattern.begin("a").where(incident_start).followed_by("b").where(lambda e: e.type == "b")
        return (
            Hierarchy()
            .define("incident", incident.within(30))
            .define("escalation", escalations().build().levels[1].pattern)
        )

    rows = [
        Row(id=1, user="u", type="a", amount=1.0, ms=10),
        Row(id=2, user="u", type="a", amount=0.0, ms=11),
    ]
    expected = (
        "u",
        "incident",
        "invalid",
        11,
        11,
        11,
        '{"invalid": [{"id": 2, "user": "u", "type": "a", "amount": 0.0, "ms": 11}], '
        '"reason": "pattern step \'a\': condition raised ValueError: zero amount"}',
    )
    for engine in ("levels", "one_pass"):
        m = matcher(hierarchy(), engine=engine)
        out: list[Any] = []
        op = m.operator()
        push(m, op, rows, out)
        m.emit(op.flush(), out)
        assert [r for r in out if r[2] == "invalid"] == [expected], engine
