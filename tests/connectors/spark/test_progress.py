"""``detect(..., observe=name)``: each kind of result counted in a streaming query's progress."""

from __future__ import annotations

from typing import Any

from flowcep.connectors.spark import detect

from .data import abc_pattern
from .streams import FileFeed


def row(id_: int, user: str, type_: str, amount: float, ms: int) -> dict[str, Any]:
    return {"id": id_, "user": user, "type": type_, "amount": amount, "ms": ms}


def test_a_streaming_query_reports_its_results_by_kind_per_micro_batch(spark: Any, tmp_path: Any) -> None:
    feed = FileFeed(spark, tmp_path)
    out = detect(feed.stream(), abc_pattern(window=40), key="user", timestamp="ms", observe="flowcep")
    query = (
        out.writeStream.format("memory")
        .queryName("observed")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    try:
        # ann: a, b, c within 40 ms, a match, and its a, b still open for more b's (a timeout at
        # 1,040); bob: a, then nothing (a timeout at 1,041); as CepOperator gives on these rows
        feed.write([row(1, "ann", "a", 1, 1_000), row(2, "bob", "a", 1, 1_001), row(3, "ann", "b", 1, 1_010)])
        query.processAllAvailable()
        feed.write([row(4, "ann", "c", 5, 1_020), row(5, "cid", "x", 0, 2_000)])
        query.processAllAvailable()
        feed.write([row(6, "ann", "a", 1, 500)])  # behind Spark's watermark (2,000): late
        query.processAllAvailable()
        progress = [p for p in query.recentProgress if "flowcep" in p.observedMetrics]
    finally:
        query.stop()
    totals = {
        k: sum(p.observedMetrics["flowcep"][k] for p in progress)
        for k in ("results", "match", "timeout", "late", "invalid")
    }
    assert totals == {"results": 4, "match": 1, "timeout": 2, "late": 1, "invalid": 0}
    kinds = sorted(r.kind for r in spark.table("observed").collect())
    assert kinds == ["late", "match", "timeout", "timeout"]  # the sink holds what the progress counted


def test_the_progress_carries_the_gauges_of_the_state_the_micro_batch_ran(spark: Any, tmp_path: Any) -> None:
    from pyspark.sql import Row

    from flowcep.runtime import CepOperator

    feed = FileFeed(spark, tmp_path)
    pattern = abc_pattern(window=40)
    out = detect(feed.stream(), pattern, key="user", timestamp="ms", out_of_orderness=5, observe="flowcep")
    query = (
        out.writeStream.format("memory")
        .queryName("gauges")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    rows = [row(1, "ann", "a", 1, 1_000), row(2, "ann", "b", 1, 1_010), row(3, "ann", "x", 0, 1_030)]
    try:
        feed.write(rows)
        query.processAllAvailable()
        # the micro-batch of the rows (a later one without data may run timers)
        progress = next(p for p in query.recentProgress if p.numInputRows and "flowcep" in p.observedMetrics)
    finally:
        query.stop()
    # the bucket ran its rows up to its own watermark, 1,030 - 5: as an operator does
    op = CepOperator(pattern, key_by=lambda e: e.user, out_of_orderness=None)
    for r in rows:
        op.process_element(Row(**r), r["ms"])
    op.process_watermark(1_025)
    want = op.stats()
    assert want["partial_matches"] > 0 and want["buffered_events"] == 1
    gauges = progress.observedMetrics["flowcep"]
    assert {
        k: gauges[k] for k in ("partial_matches", "buffered_events", "keys", "shared_buffer_entries")
    } == {k: want[k] for k in ("partial_matches", "buffered_events", "keys", "shared_buffer_entries")}
    assert gauges["watermark_lag_ms"] == 5
    assert gauges["results"] == 0
    assert spark.table("gauges").collect() == []  # no stats row among the results
