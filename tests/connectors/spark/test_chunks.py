"""Streaming's chunks: a bucket's events of a partition in one row, read back to Spark's values."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from decimal import Decimal

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql import functions as F

from flowcep.connectors.spark.chunks import CHUNK_SCHEMA, chunker, unchunk
from flowcep.connectors.spark.values import py_converter

SCHEMA = (
    "s string, b boolean, l long, i int, sh short, by byte, d double, f float, t timestamp, "
    "dec decimal(20,3), arr array<int>, st struct<x:int,y:string>"
)
ROWS = [
    (
        "plain",
        True,
        2**62 + 1,
        -7,
        300,
        -5,
        0.1,
        0.25,
        datetime(2026, 1, 2, 3, 4, 5),
        Decimal("1.250"),
        [1, 2],
        (1, "a"),
    ),
    ('q"uo\\te\n é 😀', False, -(2**63), 2**31 - 1, -1, 127, -0.0, 0.1, None, None, [], None),
    (None, None, None, None, None, None, None, None, None, None, None, None),
    ("nan", True, 0, 0, 0, 0, float("nan"), float("inf"), None, None, None, (None, None)),
]


def _batch(buckets: list[int], values: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(values), pa.array(list(range(len(values))), pa.int64()), pa.array(buckets, pa.int32())],
        names=["v", "ms", "bucket"],
    )


def _chunks(batches, **sizes):
    rows = []
    for out in chunker([None, None], **sizes)(iter(batches)):
        rows.extend(zip(out.column(0).to_pylist(), out.column(1).to_pylist()))
    return [(bucket, unchunk(blob)) for bucket, blob in rows]


def test_a_buckets_events_come_in_one_chunk_in_the_order_read():
    # (the chunks come by bucket number)
    got = _chunks([_batch([3, 1, 3], ["a", "b", "c"]), _batch([1, 3], ["d", "e"])])
    assert got == [(1, [("b", 1), ("d", 0)]), (3, [("a", 0), ("c", 2), ("e", 1)])]


def test_chunks_hold_at_most_chunk_events_events():
    got = _chunks([_batch([7] * 5, list("abcde"))], chunk_events=2)
    assert got == [(7, [("a", 0), ("b", 1)]), (7, [("c", 2), ("d", 3)]), (7, [("e", 4)])]


def test_held_events_are_written_once_the_limit_is_read():
    got = _chunks([_batch([1, 2], ["a", "b"]), _batch([1], ["c"])], held_events=2)
    assert got == [(1, [("a", 0)]), (2, [("b", 1)]), (1, [("c", 0)])]


def test_empty_batches_write_nothing():
    assert _chunks([_batch([], [])]) == []


def test_events_through_spark_hold_the_batch_paths_values_in_column_order(spark):
    df = spark.createDataFrame(ROWS, SCHEMA).coalesce(1).withColumn("bucket", F.lit(0))
    converters = [py_converter(f.dataType) for f in df.schema.fields[:-1]]
    [(bucket, blob)] = [tuple(r) for r in df.mapInArrow(chunker(converters), CHUNK_SCHEMA).collect()]
    got = unchunk(blob)
    assert bucket == 0
    assert got[0] == (
        "plain", True, 2**62 + 1, -7, 300, -5, 0.1, 0.25,
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), Decimal("1.250"), [1, 2], Row(x=1, y="a"),
    )  # fmt: skip
    # a 32-bit float reads back as the same double Spark gives Python
    assert got[1] == (
        'q"uo\\te\n é 😀', False, -(2**63), 2**31 - 1, -1, 127, -0.0, 0.10000000149011612,
        None, None, [], None,
    )  # fmt: skip
    assert got[2] == (None,) * 12
    assert got[3][:6] == ("nan", True, 0, 0, 0, 0)
    assert math.isnan(got[3][6]) and got[3][7] == float("inf")
    assert got[3][8:] == (None, None, None, Row(x=None, y=None))


def test_many_events_keep_their_read_order_within_each_bucket():
    import random

    rnd = random.Random(5)
    buckets = [rnd.randrange(7) for _ in range(5000)]
    got = _chunks(
        [_batch(buckets[i : i + 1000], [str(j) for j in range(i, i + 1000)]) for i in range(0, 5000, 1000)]
    )
    for bucket in range(7):
        read = [v for b, events in got if b == bucket for v, _ in events]
        assert read == [str(j) for j in range(5000) if buckets[j] == bucket]
