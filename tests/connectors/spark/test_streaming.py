"""detect() on streaming DataFrames: file source, micro-batches, watermarks, timers, checkpoints."""

from __future__ import annotations

import json
import random

from pyspark.sql import Row

from flowcep import Pattern
from flowcep.connectors.spark import detect

from .conftest import reference, spark_results
from .data import abc_pattern, absence_pattern, events
from .streams import FileFeed

SENTINEL = "zz-sentinel"


def _sentinel(ms: int) -> Row:
    # a row of another key far in the future: Spark's watermark passes every window
    return Row(id=-1, user=SENTINEL, type="x", amount=0.0, ms=ms)


def _chunks(rows, n):
    size = -(-len(rows) // n)
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def test_stream_in_micro_batches_equals_pure_python_runtime(spark, tmp_path):
    rows = events(1000, users=20, seed=11)
    feed = FileFeed(spark, tmp_path)
    out = detect(feed.stream(), abc_pattern(), key="user", timestamp="ms", out_of_orderness=5)
    q = (
        out.writeStream.format("memory")
        .queryName("abc_stream")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        for chunk in _chunks(rows, 2):
            # any order inside a micro-batch: the connector sorts each key's rows by event time
            feed.write(random.Random(len(chunk)).sample(chunk, len(chunk)))
            q.processAllAvailable()
        feed.write([_sentinel(rows[-1].ms + 10_000)])
        q.processAllAvailable()
    finally:
        q.stop()
    got = spark_results(spark.table("abc_stream").collect())
    want = reference(rows, abc_pattern(), key="user", out_of_orderness=5)  # rows in time order
    assert got == want
    assert {k for k, *_ in got} == {"match", "timeout"}


def _start(out, name, tmp_path):
    return (
        out.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / name))
        .start()
    )


def test_timeout_fires_when_the_watermark_passes_without_new_events_for_the_key(spark, tmp_path):
    pattern = abc_pattern(window=100)
    feed = FileFeed(spark, tmp_path)
    q = _start(detect(feed.stream(), pattern, key="user", timestamp="ms"), "timeouts", tmp_path)
    try:
        feed.write(
            [
                Row(id=1, user="quiet", type="a", amount=1.0, ms=1_000),
                Row(id=2, user="busy", type="b", amount=1.0, ms=1_000),
            ]
        )
        q.processAllAvailable()
        assert spark.table("timeouts").count() == 0
        # only the other key moves on; its time carries Spark's watermark past quiet's window
        feed.write([Row(id=3, user="busy", type="b", amount=1.0, ms=5_000)])
        q.processAllAvailable()
    finally:
        q.stop()
    (row,) = spark.table("timeouts").collect()
    assert (row.key, row.kind, json.loads(row.events)) == (
        "quiet",
        "timeout",
        {"a": [{"id": 1, "user": "quiet", "type": "a", "amount": 1.0, "ms": 1000}]},
    )
    assert row.timestamp.timestamp() * 1000 == 1_100  # the end of the window
    assert row.first_ts == row.last_ts and row.first_ts.timestamp() * 1000 == 1_000


def test_pending_absence_match_is_released_by_the_watermark(spark, tmp_path):
    feed = FileFeed(spark, tmp_path)
    q = _start(
        detect(feed.stream(), absence_pattern(window=30), key="user", timestamp="ms"), "absence", tmp_path
    )
    try:
        feed.write(
            [
                Row(id=1, user="u", type="a", amount=1.0, ms=1_000),
                Row(id=2, user="v", type="a", amount=1.0, ms=1_000),
                Row(id=3, user="v", type="c", amount=1.0, ms=1_010),
            ]
        )
        q.processAllAvailable()
        assert spark.table("absence").count() == 0
        feed.write([Row(id=4, user="w", type="b", amount=1.0, ms=2_000)])
        q.processAllAvailable()
    finally:
        q.stop()
    got = [(r.key, r.kind, json.loads(r.events)["a"][0]["id"]) for r in spark.table("absence").collect()]
    assert got == [("u", "match", 1)]  # v saw its c in time


def test_late_and_invalid_rows_are_reported_not_dropped(spark, tmp_path):
    feed = FileFeed(spark, tmp_path)
    q = _start(detect(feed.stream(), abc_pattern(), key="user", timestamp="ms"), "late_invalid", tmp_path)
    try:
        feed.write([Row(id=1, user="u", type="a", amount=1.0, ms=5_000)])
        q.processAllAvailable()
        feed.write(
            [
                {
                    "id": 2,
                    "user": "u",
                    "type": "b",
                    "amount": 1.0,
                    "ms": 4_000,
                },  # behind the watermark (5000)
                {"id": 3, "user": "v", "type": "b", "amount": 1.0, "ms": 5_000},  # at the watermark: late too
                {"id": 4, "user": None, "type": "a", "amount": 1.0, "ms": 6_000},
                {"id": 5, "user": "u", "type": "a", "amount": 1.0, "ms": None},
                {"id": 6, "user": "u", "type": "b", "amount": 1.0, "ms": 6_000},
            ]
        )
        q.processAllAvailable()
    finally:
        q.stop()
    results = spark.table("late_invalid").collect()
    got = {
        (r.kind, r.key, tuple(e["id"] for e in json.loads(r.events)[r.kind]))
        for r in results
        if r.kind != "timeout"
    }
    assert got == {("late", "u", (2,)), ("late", "v", (3,)), ("invalid", None, (4,)), ("invalid", "u", (5,))}
    reasons = {
        json.loads(r.events)["reason"]
        for r in spark.table("late_invalid").where("kind = 'invalid'").collect()
    }
    assert reasons == {"the key column(s) user are null", "the timestamp column ms is null"}


def test_restart_from_checkpoint_yields_each_match_exactly_once(spark, tmp_path):
    rows = events(900, users=15, seed=5)
    first, second, third = _chunks(rows, 3)
    feed = FileFeed(spark, tmp_path)
    sink, ck = str(tmp_path / "sink"), str(tmp_path / "ck")

    def start():
        out = detect(feed.stream(), abc_pattern(), key="user", timestamp="ms", out_of_orderness=5)
        return out.writeStream.format("parquet").option("path", sink).option("checkpointLocation", ck).start()

    q = start()
    try:
        feed.write(first)
        q.processAllAvailable()
        feed.write(second)
        q.processAllAvailable()
    finally:
        q.stop()
    feed.write(third)  # arrives while the query is down
    q = start()
    try:
        q.processAllAvailable()
        feed.write([_sentinel(rows[-1].ms + 10_000)])
        q.processAllAvailable()
    finally:
        q.stop()
    got = spark_results(spark.read.parquet(sink).collect())
    # equal as multisets: nothing lost, nothing written twice by the restart
    assert got == reference(rows, abc_pattern(), key="user", out_of_orderness=5)
    assert sum(got.values()) > 20


def test_state_ttl_drops_an_idle_keys_partial_matches_in_event_time(spark, tmp_path):
    # no within(): without a TTL, u's partial match would wait for its b forever
    pattern = (
        Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(lambda e: e.type == "b")
    )
    feed = FileFeed(spark, tmp_path)
    q = _start(
        detect(feed.stream(), pattern, key="user", timestamp="ms", state_ttl="1 second"), "ttl", tmp_path
    )
    batches = [
        [Row(id=1, user="u", type="a", amount=1.0, ms=1_000)],
        [Row(id=2, user="v", type="x", amount=1.0, ms=5_000)],  # the watermark passes 1000 + 1 s
        [Row(id=3, user="u", type="b", amount=1.0, ms=6_000)],
    ]
    try:
        for rows in batches:
            feed.write(rows)
            q.processAllAvailable()
    finally:
        q.stop()
    assert spark.table("ttl").count() == 0
    # the same rows without a TTL (as a batch): u's a and b match
    everything = spark.createDataFrame([r for b in batches for r in b])
    assert [(r.key, r.kind) for r in detect(everything, pattern, key="user", timestamp="ms").collect()] == [
        ("u", "match")
    ]
