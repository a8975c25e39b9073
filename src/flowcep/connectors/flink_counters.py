"""The PyFlink function's counters in Flink's metric group, counted inside timers too.

PyFlink (2.3, process mode) carries a Python counter through Beam: ``inc`` records into the metrics
container of the operation that is running, each bundle sends the counts to the Java operator, and
that registers the counter in Flink's metric group. PyFlink runs ``on_timer`` outside the
operation's metrics scope, so an increment there finds no container and Beam drops it silently; in
event time every match and timeout comes out of a timer. ``FlinkCounters`` keeps the operation's
container, seen while a record is processed (``bind``), and adds a timer's increments to it
directly (or holds them until a record shows it), so they leave with the bundle like any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:
    from apache_beam.metrics.execution import MetricsEnvironment
except ImportError:  # pragma: no cover - PyFlink depends on Beam; a stand-in group needs neither
    MetricsEnvironment = None


class FlinkCounters:
    """Counters by name in a PyFlink metric group; ``inc(name, n)`` counts from records and timers.

    ``group`` None (PyFlink's with ``python.metric.enabled: false``): nothing is counted."""

    __slots__ = ("_counters", "_beam_names", "container", "_pending")

    def __init__(self, group: Any, names: Iterable[str]) -> None:
        self._counters = {} if group is None else {name: group.counter(name) for name in names}
        # the Beam metric name behind each PyFlink counter; None for a counter that is not Beam's
        # (a stand-in metric group), which is simply incremented
        self._beam_names = {
            name: getattr(getattr(counter, "_inner_counter", None), "metric_name", None)
            for name, counter in self._counters.items()
        }
        # the operation's Beam metrics container, once a record showed it (None until then, and
        # always for a stand-in group)
        self.container: Any = None
        self._pending: dict[str, int] = {}

    def bind(self) -> None:
        """Called while a record is processed, until ``container`` is set: remember it."""
        if MetricsEnvironment is None or not any(self._beam_names.values()):
            return
        active = MetricsEnvironment.current_container()
        if active is not None:
            self.container = active
            for name, n in self._pending.items():
                active.get_counter(self._beam_names[name]).inc(n)
            self._pending.clear()

    def inc(self, name: str, n: int = 1) -> None:
        counter = self._counters.get(name)
        if counter is None:  # no metric group
            return
        beam_name = self._beam_names[name]
        if beam_name is None or MetricsEnvironment is None:
            counter.inc(n)
            return
        if MetricsEnvironment.current_container() is not None:  # a record: Beam's own path
            counter.inc(n)
        elif self.container is not None:  # a timer: the operation's container, directly
            self.container.get_counter(beam_name).inc(n)
        else:  # a timer before this subtask's first record (after a restore)
            self._pending[name] = self._pending.get(name, 0) + n
