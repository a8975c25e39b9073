"""detect_rules(): a rule directory read at every micro-batch of a running query, the rules' state
kept across rule changes and checkpoint restarts (docs/multi-pattern.md, section 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import Row

from flowcep import Pattern, PatternUpdate
from flowcep.connectors.spark import detect_rules

from .streams import FileFeed


def load(text: str) -> PatternUpdate:
    """The tests' rule records: ``{"id", "version", "first", "then"}``, a ``first`` row followed
    by a ``then`` row within 100 ms (Python patterns: the JSON format is not needed here)."""
    doc = json.loads(text)
    first, then = doc["first"], doc["then"]
    pattern = (
        Pattern.begin("first")
        .where(lambda e: e.type == first)
        .followed_by("then")
        .where(lambda e: e.type == then)
        .within(100)
    )
    return PatternUpdate.put(doc["id"], doc["version"], pattern)


def write_rule(rules: Path, rule_id: str, version: int, first: str, then: str) -> None:
    tmp = rules / f"{rule_id}.tmp"
    tmp.write_text(json.dumps({"id": rule_id, "version": version, "first": first, "then": then}))
    tmp.rename(rules / f"{rule_id}.json")  # atomically, as docs/multi-pattern.md asks


def row(ident: int, kind: str, ms: int, user: str = "u1") -> Row:
    return Row(id=ident, user=user, type=kind, amount=0.0, ms=ms)


def matches(rows: list[Any]) -> set[tuple[Any, ...]]:
    found = set()
    for r in rows:
        if r.kind == "match":
            events = json.loads(r.events)
            ids = tuple(e["id"] for step in events.values() for e in step)
            found.add((r.pattern, r.version, r.key, ids))
    return found


def test_rules_change_between_micro_batches_and_across_a_restart(spark, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    write_rule(rules, "ab", 1, "a", "b")
    write_rule(rules, "ac", 1, "a", "c")
    feed = FileFeed(spark, tmp_path)
    sink, ck = str(tmp_path / "sink"), str(tmp_path / "ck")

    def start():
        out = detect_rules(feed.stream(), str(rules), key="user", timestamp="ms", loader=load, buckets=4)
        return out.writeStream.format("parquet").option("path", sink).option("checkpointLocation", ck).start()

    q = start()
    try:
        feed.write([row(1, "a", 1000)])
        q.processAllAvailable()
        # "ac" replaced (a then x), "bc" added; "ab" unchanged keeps its partial match a1
        write_rule(rules, "ac", 2, "a", "x")
        write_rule(rules, "bc", 1, "b", "c")
        feed.write([row(2, "b", 1010), row(3, "c", 1020), row(4, "x", 1030)])
        q.processAllAvailable()
    finally:
        q.stop()
    # while the query is down: "ab" removed
    (rules / "ab.json").unlink()
    q = start()
    try:
        feed.write([row(5, "a", 1100), row(6, "b", 1110), row(7, "c", 1120), row(8, "x", 1130)])
        q.processAllAvailable()
    finally:
        q.stop()
    assert matches(spark.read.parquet(sink).collect()) == {
        ("ab", 1, "u1", (1, 2)),  # its partial match survived the other rules' changes
        # no ("ac", 1, ..., (1, 3)): version 1 was replaced before c3; version 2 starts after a1
        ("bc", 1, "u1", (2, 3)),
        ("ac", 2, "u1", (5, 8)),
        ("bc", 1, "u1", (6, 7)),  # kept across the restart; "ab" gave nothing after it
    }


def test_rules_run_over_a_batch_dataframe_too(spark, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    write_rule(rules, "ab", 1, "a", "b")
    write_rule(rules, "ac", 2, "a", "c")
    rows = [
        row(1, "a", 1000),
        row(2, "b", 1010),
        row(3, "c", 1020),
        row(4, "a", 1030, "u2"),
        row(5, "c", 1040, "u2"),
    ]
    df = spark.createDataFrame(rows, "id long, user string, type string, amount double, ms long")
    out = detect_rules(df, str(rules), key="user", timestamp="ms", loader=load)
    assert matches(out.collect()) == {
        ("ab", 1, "u1", (1, 2)),
        ("ac", 2, "u1", (1, 3)),
        ("ac", 2, "u2", (4, 5)),
    }
