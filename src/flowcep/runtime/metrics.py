"""Metrics export: an operator's ``stats()`` as Prometheus and OpenTelemetry metrics.

``OperatorMetrics`` reads the operator when a scraper asks; exporters built on it:
``prometheus_collector`` / ``serve_prometheus`` (the ``prometheus-client`` package) and
``register_opentelemetry`` (``opentelemetry-api``). Both packages come with the extra
``flowcep[metrics]`` and are imported only here, when called.

The operator is not thread-safe: a scrape runs in the exporter's thread, so whoever feeds the
operator holds ``metrics.lock`` around each call (``with metrics.lock: op.process_element(e)``),
as ``flowcep run --metrics-port`` does. A scrape that cannot get the lock within ``timeout``
seconds (a condition that takes long) serves the values of the previous scrape.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs

__all__ = [
    "METRICS",
    "Metric",
    "OperatorMetrics",
    "prometheus_collector",
    "register_opentelemetry",
    "serve_prometheus",
]

# watermarks outside this range are "none yet" (the operator starts at -2**63) or the end of input
_OLDEST_MS = -62135596800000  # 0001-01-01T00:00:00Z
_NEWEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


@attrs.frozen(slots=True)
class Metric:
    """One exported metric: its name (without the Prometheus ``_total``), kind, unit and help."""

    name: str
    stat: str
    kind: str  # "counter" or "gauge"
    unit: str
    help: str


#: What is exported, from which ``stats()`` entry (the two lags are computed).
METRICS = (
    Metric("flowcep_events", "events_in", "counter", "1", "events that reached the operator"),
    Metric("flowcep_matches", "matches", "counter", "1", "matches emitted"),
    Metric("flowcep_timeouts", "timeouts", "counter", "1", "timed-out partial matches emitted"),
    Metric("flowcep_late_events", "late", "counter", "1", "events behind the watermark (late side output)"),
    Metric("flowcep_bad_records", "bad_records", "counter", "1", "records the operator could not handle"),
    Metric(
        "flowcep_dropped_partial_matches",
        "dropped_partial_matches",
        "counter",
        "1",
        "partial matches dropped by the partial-match limit",
    ),
    Metric("flowcep_partial_matches", "partial_matches", "gauge", "1", "partial matches held now"),
    Metric("flowcep_buffered_events", "buffered_events", "gauge", "1", "events buffered until the watermark"),
    Metric("flowcep_keys", "keys", "gauge", "1", "keys with state"),
    Metric(
        "flowcep_held_back_matches", "held_back_matches", "gauge", "1", "matches held back by a skip strategy"
    ),
    Metric("flowcep_watermark_lag_seconds", "watermark", "gauge", "s", "wall clock minus the watermark"),
    Metric(
        "flowcep_event_time_lag_seconds",
        "max_event_time",
        "gauge",
        "s",
        "the latest event time seen minus the watermark",
    ),
)


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class OperatorMetrics:
    """The exported values of one operator (anything with ``stats()``), read under ``lock``."""

    def __init__(
        self,
        source: Any,
        *,
        lock: threading.Lock | None = None,
        clock: Callable[[], int] = _wall_clock_ms,
        timeout: float = 5.0,
    ) -> None:
        self.source = source
        self.lock = lock if lock is not None else threading.Lock()
        self.clock = clock
        self.timeout = timeout
        self._last: dict[str, int] = {}
        self._read_at = -1.0

    def stats(self) -> dict[str, int]:
        """The operator's ``stats()`` now, or the previous ones if its lock stays taken.

        Reads within 0.1 s of the last share it: one collection asks once per metric, and
        ``stats()`` takes time in proportion to the state."""
        if time.monotonic() - self._read_at < 0.1:
            return self._last
        if self.lock.acquire(timeout=self.timeout):
            try:
                self._last = dict(self.source.stats())
                self._read_at = time.monotonic()
            finally:
                self.lock.release()
        return self._last

    def values(self) -> Iterator[tuple[Metric, float]]:
        """Each metric and its value; the lags only while there is a watermark."""
        stats = self.stats()
        for metric in METRICS:
            if metric.stat not in stats:
                continue
            value = stats[metric.stat]
            if metric.stat == "watermark":
                if not _OLDEST_MS <= value <= _NEWEST_MS:
                    continue
                yield metric, (self.clock() - value) / 1000.0
            elif metric.stat == "max_event_time":
                watermark = stats.get("watermark", _OLDEST_MS - 1)
                if not (_OLDEST_MS <= watermark <= _NEWEST_MS and _OLDEST_MS <= value <= _NEWEST_MS):
                    continue
                yield metric, max(0, value - watermark) / 1000.0
            else:
                yield metric, float(value)


def prometheus_collector(metrics: OperatorMetrics) -> Any:
    """A ``prometheus_client`` collector that reads ``metrics`` at every scrape."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    class _Collector:
        def collect(self) -> Iterator[Any]:
            for metric, value in metrics.values():
                family = CounterMetricFamily if metric.kind == "counter" else GaugeMetricFamily
                yield family(metric.name, metric.help, value=value)

        def describe(self) -> list[Any]:
            return []  # read at scrape time only: registering must not call stats()

    return _Collector()


def serve_prometheus(metrics: OperatorMetrics, port: int, addr: str = "0.0.0.0") -> Any:
    """Serve ``metrics`` at ``http://addr:port/metrics`` from a daemon thread; returns the server
    (``shutdown()`` stops it)."""
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry(auto_describe=False)
    registry.register(prometheus_collector(metrics))
    server = start_http_server(port, addr, registry=registry)
    return server[0] if isinstance(server, tuple) else server


def register_opentelemetry(metrics: OperatorMetrics, meter: Any = None) -> list[Any]:
    """Observable instruments on ``meter`` (default: the global meter provider's ``flowcep``
    meter) that read ``metrics`` at each collection; returns them."""
    from opentelemetry import metrics as otel
    from opentelemetry.metrics import CallbackOptions, Observation

    if meter is None:
        meter = otel.get_meter("flowcep")

    def reader(name: str) -> Callable[[CallbackOptions], list[Observation]]:
        def observe(options: CallbackOptions) -> list[Observation]:
            return [Observation(value) for metric, value in metrics.values() if metric.name == name]

        return observe

    instruments = []
    for metric in METRICS:
        # OpenTelemetry's names are dotted and carry no unit: flowcep.watermark_lag
        name = metric.name.replace("flowcep_", "flowcep.", 1).replace("_seconds", "")
        create = (
            meter.create_observable_counter if metric.kind == "counter" else meter.create_observable_gauge
        )
        instruments.append(
            create(name, callbacks=[reader(metric.name)], unit=metric.unit, description=metric.help)
        )
    return instruments
