"""``flowcep.runtime.metrics``: an operator's stats() as Prometheus and OpenTelemetry metrics."""

from __future__ import annotations

from typing import Any

from flowcep import Pattern
from flowcep.runtime import CepOperator
from flowcep.runtime.metrics import OperatorMetrics, prometheus_collector, register_opentelemetry

PATTERN = (
    Pattern.begin("a")
    .where(lambda e: e["kind"] == "a")
    .followed_by("b")
    .where(lambda e: e["kind"] == "b")
    .within(10)
)


def operator_after(events: list[dict[str, Any]]) -> CepOperator:
    op = CepOperator(PATTERN, key_by="user", timestamp="ts", out_of_orderness=0)
    for e in events:
        op.process_element(e)
    return op


EVENTS = [
    {"user": "ann", "ts": 1, "kind": "a"},
    {"user": "ann", "ts": 3, "kind": "b"},  # a match
    {"user": "bob", "ts": 4, "kind": "a"},
    {"user": "bob", "ts": 20, "kind": "x"},  # bob's a times out at 14
    {"user": "ann", "ts": 2, "kind": "a"},  # late
]


def prometheus_samples(metrics: OperatorMetrics) -> dict[str, float]:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(prometheus_collector(metrics))
    lines = generate_latest(registry).decode().splitlines()
    return {line.split(" ")[0]: float(line.split(" ")[1]) for line in lines if not line.startswith("#")}


def test_prometheus_counts_what_the_operator_counts() -> None:
    samples = prometheus_samples(OperatorMetrics(operator_after(EVENTS), clock=lambda: 1_019))
    assert {k: v for k, v in samples.items() if not k.endswith("_created")} == {
        "flowcep_events_total": 5.0,
        "flowcep_matches_total": 1.0,
        "flowcep_timeouts_total": 1.0,
        "flowcep_late_events_total": 1.0,
        "flowcep_bad_records_total": 0.0,
        "flowcep_dropped_partial_matches_total": 0.0,
        "flowcep_partial_matches": 0.0,
        "flowcep_buffered_events": 1.0,  # bob's x at 20, behind nothing yet
        "flowcep_keys": 1.0,
        "flowcep_held_back_matches": 0.0,
        "flowcep_watermark_lag_seconds": 1.0,  # the clock at 1,019 ms, the watermark at 19
        "flowcep_event_time_lag_seconds": 0.001,  # the latest event at 20, the watermark at 19
    }


def test_there_is_no_watermark_lag_before_the_first_event() -> None:
    samples = prometheus_samples(OperatorMetrics(operator_after([])))
    assert "flowcep_watermark_lag_seconds" not in samples
    assert "flowcep_event_time_lag_seconds" not in samples
    assert samples["flowcep_events_total"] == 0.0


def test_a_scrape_that_cannot_get_the_lock_serves_the_previous_values() -> None:
    op = operator_after(EVENTS[:3])
    metrics = OperatorMetrics(op, timeout=0.01)
    assert metrics.stats()["matches"] == 1
    op.process_element({"user": "cid", "ts": 5, "kind": "a"})
    metrics._read_at = -1.0  # (a later scrape)
    with metrics.lock:  # the feeding thread is inside a call
        assert metrics.stats()["events_in"] == 3
    metrics._read_at = -1.0
    assert metrics.stats()["events_in"] == 4


def test_opentelemetry_observes_the_same_values() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    register_opentelemetry(
        OperatorMetrics(operator_after(EVENTS), clock=lambda: 1_019), provider.get_meter("t")
    )
    data = reader.get_metrics_data()
    assert data is not None
    values = {
        m.name: [p.value for p in m.data.data_points]
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert values == {
        "flowcep.events": [5],
        "flowcep.matches": [1],
        "flowcep.timeouts": [1],
        "flowcep.late_events": [1],
        "flowcep.bad_records": [0],
        "flowcep.dropped_partial_matches": [0],
        "flowcep.partial_matches": [0],
        "flowcep.buffered_events": [1],
        "flowcep.keys": [1],
        "flowcep.held_back_matches": [0],
        "flowcep.watermark_lag": [1.0],
        "flowcep.event_time_lag": [0.001],
    }
