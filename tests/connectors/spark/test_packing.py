"""Streaming's packed rows: the event's plain columns as one JSON text read back to Spark's values."""

from __future__ import annotations

import math
from datetime import datetime
from decimal import Decimal

from pyspark.sql import types as T

from flowcep.connectors.spark.packing import RowPacking

SCHEMA = (
    "s string, b boolean, l long, i int, sh short, by byte, d double, f float, t timestamp, dec decimal(20,3)"
)
ROWS = [
    ("plain", True, 2**62 + 1, -7, 300, -5, 0.1, 0.25, datetime(2026, 1, 2, 3, 4, 5), Decimal("1.250")),
    ('q"uo\\te\n é 😀', False, -(2**63), 2**31 - 1, -1, 127, -0.0, 0.1, None, None),
    (None, None, None, None, None, None, None, None, None, None),
]
NON_FINITE = [(float("nan"),), (float("inf"),), (float("-inf"),), (1e300,)]


def _received(spark, df, packing):
    """What the processor sees of each row (without its bucket), and the rows Spark collects."""
    shipped = df.select(*packing.columns(df.columns)).collect()
    unpack = packing.unpacker()
    return [unpack(tuple(r)) for r in shipped], [tuple(r) for r in df.collect()]


def test_plain_columns_are_packed_and_the_others_travel_loose(spark):
    df = spark.createDataFrame(ROWS, SCHEMA)
    packing = RowPacking([f.dataType for f in df.schema.fields])
    assert packing.packed == (0, 1, 2, 3, 4, 5, 6, 7)
    assert packing.loose == (8, 9)
    assert packing.widened == (7,)
    assert len(df.select(*packing.columns(df.columns)).columns) == 3


def test_unpacked_rows_equal_sparks_values_in_column_order(spark):
    df = spark.createDataFrame(ROWS, SCHEMA)
    got, expected = _received(spark, df, RowPacking([f.dataType for f in df.schema.fields]))
    assert got == expected
    # a 32-bit float reads back as the same double Spark gives Python, not as its short text
    assert got[1][7] == 0.10000000149011612


def test_non_finite_doubles_read_back_as_floats(spark):
    df = spark.createDataFrame([(x, i) for i, (x,) in enumerate(NON_FINITE)], "d double, n long")
    got, _ = _received(spark, df, RowPacking([T.DoubleType(), T.LongType()]))
    assert math.isnan(got[0][0]) and isinstance(got[0][0], float)
    assert [g[0] for g in got[1:]] == [float("inf"), float("-inf"), 1e300]
    assert [g[1] for g in got] == [0, 1, 2, 3]


def test_one_plain_column_is_not_worth_packing(spark):
    packing = RowPacking([T.StringType(), T.TimestampType()])
    assert not packing.enabled
    assert packing.loose == (0, 1)
    df = spark.createDataFrame([("a", datetime(2026, 1, 1))], "s string, t timestamp")
    got, expected = _received(spark, df, packing)
    assert got == expected
