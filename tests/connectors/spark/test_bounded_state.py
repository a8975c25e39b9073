"""State stays bounded over hundreds of micro-batches when patterns have a window.

Every micro-batch brings keys never seen before; each key's partial matches end (match or
window timeout) a few batches later, and then the key must leave the state store. The number of
state rows, and the bytes of what they hold, must not grow with the number of micro-batches.
"""

from __future__ import annotations

import json
import os

from pyspark.sql import functions as F

from flowcep import Pattern
from flowcep.connectors.spark import detect

BATCHES = 220
BUCKETS = 8


def pattern() -> Pattern:
    return (
        Pattern.begin("a")
        .where(lambda e: e.type == "a")
        .followed_by("b")
        .where(lambda e: e.type == "b")
        .within(150)
    )


def _write(root, i: int) -> None:
    # three new keys per batch, 100 ms of event time per batch: one matches, two time out
    rows = [
        {"id": 3 * i, "user": f"k{i}-0", "type": "a", "amount": 1.0, "ms": 100 * i},
        {"id": 3 * i + 1, "user": f"k{i}-1", "type": "a", "amount": 1.0, "ms": 100 * i + 10},
        {"id": 3 * i + 2, "user": f"k{i}-2", "type": "a", "amount": 1.0, "ms": 100 * i + 20},
    ]
    if i > 0:  # the b of the previous batch's first key
        rows.append({"id": -i, "user": f"k{i - 1}-0", "type": "b", "amount": 1.0, "ms": 100 * i + 30})
    path = root / f"part-{i:05d}.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))


def test_state_rows_and_bytes_stay_flat_over_hundreds_of_micro_batches(spark, tmp_path):
    from .data import SCHEMA

    src = tmp_path / "in"
    src.mkdir()
    for i in range(BATCHES):
        _write(src, i)
    ck = tmp_path / "ck"
    previous = spark.conf.get("spark.sql.streaming.numRecentProgressUpdates")
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "2000")
    try:
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
        out = detect(stream, pattern(), key="user", timestamp="ms", buckets=BUCKETS)
        q = (
            out.writeStream.format("memory")
            .queryName("bounded")
            .option("checkpointLocation", str(ck))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        progress = [p for p in q.recentProgress if p["numInputRows"] > 0]
    finally:
        spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", previous)

    assert len(progress) == BATCHES
    kinds = {
        r.kind: r.n for r in spark.table("bounded").groupBy("kind").agg(F.count("*").alias("n")).collect()
    }
    assert kinds["match"] == BATCHES - 1 and kinds["timeout"] >= 2 * (BATCHES - 2)

    rows = [p["stateOperators"][0]["numRowsTotal"] for p in progress]
    memory = [p["stateOperators"][0]["memoryUsedBytes"] for p in progress]
    print(f"\nbounded state: numRowsTotal {rows[:5]} ... {rows[-5:]}, memoryUsedBytes {memory[-1]}")
    # at most one value row and a few timer rows per bucket, whatever the batch count
    assert max(rows) <= 4 * BUCKETS
    assert max(rows[BATCHES // 2 :]) <= max(rows[: BATCHES // 2])

    # what the buckets hold at the end: the last batches' keys only, not 660 keys' worth
    held = (
        spark.read.format("statestore")
        .option("stateVarName", "flowcep_bucket")
        .load(str(ck))
        .select(F.length(F.col("value.snapshot")).alias("n"))
        .collect()
    )
    assert 0 < sum(r.n for r in held) < 8 * 1024
