"""MATCH_RECOGNIZE on a DataFrame: the same rows as flowcep.sql and Flink SQL, typed columns."""

from __future__ import annotations

from pyspark.sql import types as T

from flowcep.connectors.spark import match_recognize

QUERY = """
SELECT * FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY symbol
    ORDER BY ts
    MEASURES SUM(A.price) AS sumPrice, FIRST(ts) AS startTime, LAST(ts) AS endTime,
             AVG(A.price * 1.0) AS avgPrice, MATCH_ROWTIME() AS matchTime
    ONE ROW PER MATCH
    AFTER MATCH SKIP TO LAST A
    PATTERN (A+ C)
    DEFINE A AS SUM(A.price) < 30
) AS T
"""


def test_match_recognize_on_a_batch_dataframe(spark):
    prices = [7, 9, 10, 5, 10, 7, 14]
    rows = [(sym, 1000 * (i + 1), p) for sym in ("XYZ", "ABC") for i, p in enumerate(prices)]
    df = spark.createDataFrame(rows, "symbol string, ts long, price long")
    out = match_recognize(df, QUERY)
    assert out.schema == T.StructType(
        [
            T.StructField("symbol", T.StringType()),
            T.StructField("sumPrice", T.LongType()),
            T.StructField("startTime", T.LongType()),
            T.StructField("endTime", T.LongType()),
            T.StructField("avgPrice", T.DoubleType()),
            T.StructField("matchTime", T.LongType()),
        ]
    )
    got = sorted(tuple(r) for r in out.collect())
    expected = [(26, 1000, 4000, 26 / 3, 4000), (25, 3000, 6000, 25 / 3, 6000), (17, 5000, 7000, 8.5, 7000)]
    assert got == sorted([("ABC", *e) for e in expected] + [("XYZ", *e) for e in expected])


def test_match_recognize_on_a_stream_equals_the_python_run(spark, tmp_path):
    from flowcep.sql import run

    from .streams import FileFeed

    query = QUERY.replace("SKIP TO LAST A", "SKIP PAST LAST ROW")
    prices = [7, 9, 10, 5, 10, 7, 14, 3, 12, 20, 1, 2]
    rows = [
        {"symbol": s, "ts": 1000 * (i + 1), "price": p} for i, p in enumerate(prices) for s in ("XYZ", "ABC")
    ]
    feed = FileFeed(spark, tmp_path, schema="symbol string, ts long, price long")
    out = match_recognize(feed.stream(), query)
    q = (
        out.writeStream.format("memory")
        .queryName("mr_stream")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        feed.write(rows[:10])
        q.processAllAvailable()
        feed.write(rows[10:])
        q.processAllAvailable()
        feed.write([{"symbol": "zz-sentinel", "ts": 100_000, "price": 100}])  # moves the watermark past all
        q.processAllAvailable()
    finally:
        q.stop()
    got = sorted(tuple(r) for r in spark.table("mr_stream").collect())
    want = sorted(tuple(r.values()) for r in run(query, rows))
    assert len(want) == 6
    assert got == want
