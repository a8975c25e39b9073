"""detect() over an event hierarchy (docs/semantics.md section 11), batch and streaming: every
level in one pass, each result tagged with its level, the same results as ``HierarchyOperator``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row

from flowcep import Pattern
from flowcep.cli_support.loader import load_pattern_file
from flowcep.cli_support.spark_engine import run_cli
from flowcep.connectors.spark import detect
from flowcep.connectors.spark.matcher import Matcher
from flowcep.hierarchy import ComplexEvent, Hierarchy, HierarchyError, HierarchyOperator, of_type
from flowcep.hierarchy.event import plain_match

from .data import SCHEMA, events
from .streams import FileFeed

LEVELS = ["incident", "outage"]


def outages() -> Hierarchy:
    """incident: an a then a b within 30 ms (its amount the sum of theirs); outage: an incident
    then one of amount at least 8, within 200 ms."""
    incident = (
        Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(lambda e: e.type == "b")
    )
    outage = (
        Pattern.begin("first")
        .where(of_type("incident"))
        .followed_by("second")
        .where(of_type("incident", lambda c: c.amount >= 8))
        .within(200)
    )
    return (
        Hierarchy()
        .define(
            "incident", incident.within(30), compose=lambda m: {"amount": m["a"][0].amount + m["b"][0].amount}
        )
        .define("outage", outage)
    )


def ids(value: Any) -> Any:
    """A match as nested raw event ids: a complex event (object or JSON dict) as (type, its
    steps), a (partial) match as its steps' events, a raw event (row or JSON dict) as its id."""
    if type(value) is ComplexEvent:
        return (value.type, ids(value.match))
    if isinstance(value, dict) and "match" in value and "type" in value:
        return (value["type"], ids(value["match"]))
    if isinstance(value, dict) and "id" not in value:
        return tuple((step, tuple(ids(e) for e in events)) for step, events in value.items())
    return value["id"]


def reference(rows: list[Row], out_of_orderness: int = 0) -> Counter[tuple[Any, ...]]:
    operator = HierarchyOperator(
        outages(),
        key_by=lambda r: r["user"],
        timestamp=lambda r: r["ms"],
        out_of_orderness=out_of_orderness,
        emit=LEVELS,
    )
    outputs = [o for r in rows for o in operator.process_element(r)] + operator.flush()
    return Counter(
        (o.level, o.kind, o.key, o.timestamp, ids(o.value)) for o in outputs if o.kind in ("match", "timeout")
    )


def spark_results(rows: list[Row]) -> Counter[tuple[Any, ...]]:
    result: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        if r.kind in ("match", "timeout"):
            ts = None if r.timestamp is None else round(r.timestamp.timestamp() * 1000)
            result[(r.level, r.kind, r.key, ts, ids(json.loads(r.events)))] += 1
    return result


def test_a_hierarchy_on_a_batch_dataframe_gives_every_levels_results(spark):
    rows = events(600, users=6, seed=5)
    out = detect(spark.createDataFrame(rows, SCHEMA), outages(), key="user", timestamp="ms", emit=LEVELS)
    assert out.columns == ["key", "level", "kind", "timestamp", "first_ts", "last_ts", "events"]
    got = spark_results(out.collect())
    assert got == reference(rows)
    assert {(level, kind) for level, kind, *_ in got} == {
        ("incident", "match"),
        ("incident", "timeout"),
        ("outage", "match"),
        ("outage", "timeout"),
    }


def test_a_match_carries_its_complex_event_with_its_interval_and_attributes(spark):
    rows = [
        Row(id=1, user="u", type="a", amount=3.0, ms=10),
        Row(id=2, user="u", type="b", amount=1.0, ms=12),
        Row(id=3, user="u", type="a", amount=4.0, ms=20),
        Row(id=4, user="u", type="b", amount=5.0, ms=25),
    ]
    out = detect(spark.createDataFrame(rows, SCHEMA), outages(), key="user", timestamp="ms").collect()
    ((level, kind, start, end, doc),) = [
        (r.level, r.kind, r.first_ts, r.last_ts, json.loads(r.events)) for r in out if r.kind == "match"
    ]
    assert (level, kind) == ("outage", "match")
    assert (round(start.timestamp() * 1000), round(end.timestamp() * 1000)) == (10, 25)
    assert (doc["type"], doc["start"], doc["end"]) == ("outage", 10, 25)
    second = doc["match"]["second"][0]
    assert (second["type"], second["attributes"], ids(second)) == (
        "incident",
        {"amount": 9.0},
        ("incident", (("a", (3,)), ("b", (4,)))),
    )


def test_a_hierarchy_on_a_stream_equals_the_pure_python_runtime(spark, tmp_path):
    rows = events(600, users=6, seed=8)
    feed = FileFeed(spark, tmp_path)
    out = detect(feed.stream(), outages(), key="user", timestamp="ms", out_of_orderness=5, emit=LEVELS)
    q = (
        out.writeStream.format("memory")
        .queryName("hierarchy_stream")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        half = len(rows) // 2
        for chunk in (rows[:half], rows[half:]):
            feed.write(chunk)
            q.processAllAvailable()
        # a row of another key far in the future: Spark's watermark passes every window
        feed.write([Row(id=-1, user="zz-sentinel", type="x", amount=0.0, ms=rows[-1].ms + 10_000)])
        q.processAllAvailable()
    finally:
        q.stop()
    got = spark_results(spark.table("hierarchy_stream").collect())
    assert got == reference(rows, out_of_orderness=5)
    assert sum(1 for level, kind, *_ in got if (level, kind) == ("outage", "match")) > 0


def test_a_late_row_comes_out_with_its_columns_and_no_level():
    # the matcher alone, as a worker runs it: an event at 10, the watermark at 10, then a row at 5
    m = Matcher(
        outages(),
        user_fields=["id", "user", "type", "amount", "ms"],
        key_names=["user"],
        timestamp="ms",
        mode="default",
        select=None,
        output_fields=["key", "level", "kind", "timestamp", "first_ts", "last_ts", "events"],
        on_invalid="output",
        recursive=False,
    )
    op = m.operator()
    process = m.processor(op)
    out: list[Any] = []
    m.emit(process(tuple.__new__(m.event_class, (1, "u", "a", 1.0, 10, 10)), 10), out)
    m.emit(op.process_watermark(10), out)
    m.emit(process(tuple.__new__(m.event_class, (2, "u", "b", 2.0, 5, 5)), 5), out)
    ((key, level, kind, ts, first, last, doc),) = out
    assert (key, level, kind, ts, first, last) == ("u", None, "late", 5, 5, 5)
    assert json.loads(doc) == {"late": [{"id": 2, "user": "u", "type": "b", "amount": 2.0, "ms": 5}]}


def test_the_command_lines_spark_engine_writes_what_the_local_engine_writes(spark):
    # flowcep run --engine spark over the bundled server outages: every level, each record with
    # its level, complex events as plain values
    examples = Path(__file__).resolve().parents[3] / "examples"
    plan = load_pattern_file(examples / "server_outages.py").hierarchy
    data = examples / "data" / "outage_events.jsonl"
    levels = [level.name for level in plan.levels]
    records = list(run_cli(plan, str(data), "jsonl", "dc", "time", 0, None, emit=levels))
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    local = HierarchyOperator(plan, key_by="dc", timestamp="time", emit=levels)
    expected = [
        {"kind": o.kind, "key": o.key, "timestamp": o.timestamp, "level": o.level, "match": plain(o.value)}
        for o in [*local.process_elements(rows), *local.flush()]
    ]
    assert sorted(map(canonical, records)) == sorted(map(canonical, expected))
    assert {(r["level"], r["kind"]) for r in records} >= {("outage", "match"), ("escalation", "match")}


def plain(value: Any) -> Any:
    return value.as_dict() if type(value) is ComplexEvent else plain_match(value)


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True)


def test_emit_must_name_levels_of_the_hierarchy(spark):
    df = spark.createDataFrame(events(5, users=1), SCHEMA)
    with pytest.raises(HierarchyError, match="emit names unknown complex event types"):
        detect(df, outages(), key="user", timestamp="ms", emit=["nope"])
