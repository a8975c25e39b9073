"""Shared helpers of the PyFlink connector tests: the environment, sources, and collection.

Importing this module skips the importing test module when PyFlink is not installed (the flink
tests run in their own virtualenv, ``.venv-flink``, created by ``make test``).
"""

from __future__ import annotations

import heapq
import os
import pickle
import sys
import time
from collections.abc import Iterable
from typing import Any

import pytest

pytest.importorskip(
    "pyflink",
    reason="PyFlink is not installed here: the flink connector tests run in .venv-flink (make test creates it)",
)

from pyflink.common import Configuration, Types, WatermarkStrategy  # noqa: E402
from pyflink.common.watermark_strategy import TimestampAssigner  # noqa: E402
from pyflink.datastream import DataStream, StreamExecutionEnvironment  # noqa: E402
from pyflink.datastream.functions import MapFunction  # noqa: E402
from pyflink.datastream.output_tag import OutputTag  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (key, kind, timestamp ms, value, pause seconds before the record leaves the source)
_DEFAULTS = ("", "", 0, 0, 0.0)
EVENT_TYPE = Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG(), Types.INT(), Types.DOUBLE()])


def make_env(
    config: dict[str, str] | None = None, parallelism: int = 1, watermark_interval_ms: int | None = None
) -> StreamExecutionEnvironment:
    """A local environment whose Python workers run this interpreter and import these helpers."""
    conf = Configuration()
    for key, value in (config or {}).items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_python_executable(sys.executable)
    env.set_parallelism(parallelism)
    env.add_python_file(HERE)
    if watermark_interval_ms is not None:
        env.get_config().set_auto_watermark_interval(watermark_interval_ms)
    return env


class EventTimestamp(TimestampAssigner):
    """The event's third field is its timestamp."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[2])


class PauseBefore(MapFunction):
    """Sleeps for the event's fifth field (seconds) before passing it on."""

    def map(self, value: Any) -> Any:
        if value[4]:
            time.sleep(value[4])
        return value


def event_source(
    env: StreamExecutionEnvironment,
    events: Iterable[tuple[Any, ...]],
    watermarks: WatermarkStrategy | None,
    *,
    with_pauses: bool = False,
) -> DataStream:
    """A bounded stream of ``events`` with event timestamps and ``watermarks``.

    ``with_pauses`` puts the pausing map in a task of its own, upstream of the watermark
    generator, so the generator's periodic watermark can run during a pause.
    """
    rows = [tuple(e) + _DEFAULTS[len(e) :] for e in events]
    ds = env.from_collection(rows, type_info=EVENT_TYPE)
    if with_pauses:
        ds = ds.map(PauseBefore(), output_type=EVENT_TYPE).disable_chaining()
    if watermarks is not None:
        ds = ds.assign_timestamps_and_watermarks(watermarks.with_timestamp_assigner(EventTimestamp()))
    return ds


def collect(main: DataStream, **sides: DataStream) -> dict[str, list[Any]]:
    """Run the job once; the main output under ``"main"``, each side stream under its name."""
    tagged = main.map(lambda v: ("main", v), output_type=Types.PICKLED_BYTE_ARRAY())
    for name, stream in sides.items():
        tagged = tagged.union(stream.map(_Tagger(name), output_type=Types.PICKLED_BYTE_ARRAY()))
    result: dict[str, list[Any]] = {"main": [], **{name: [] for name in sides}}
    with tagged.execute_and_collect() as records:
        for name, value in records:
            result[name].append(value)
    return result


class _Tagger(MapFunction):
    def __init__(self, name: str) -> None:
        self.name = name

    def map(self, value: Any) -> Any:
        return (self.name, value)


# ---------------------------------------------------------------- a JVM-free stand-in for Flink


class FakeFlink:
    """Drives a ``KeyedProcessFunction`` the way Flink's keyed operator does, without a JVM.

    Keyed ``ValueState`` is a dict; event-time timers (deduplicated per key and time) fire in
    time order, across keys, when ``watermark`` passes them, including timers registered while
    firing; processing-time timers fire on ``advance_clock``. ``pickle_state=True`` pickles every
    state write and unpickles every read (PyFlink with its state cache disabled).
    """

    def __init__(self, function: Any, *, pickle_state: bool = False, metrics: bool = True) -> None:
        self.function = function
        self.metrics = metrics  # False: no metric group (PyFlink with python.metric.enabled false)
        self.pickle_state = pickle_state
        self.store: dict[Any, Any] = {}
        self.event_timers: list[tuple[int, int, Any]] = []
        self.processing_timers: list[tuple[int, int, Any]] = []
        self._timer_keys: set[tuple[str, int, Any]] = set()
        self._seq = 0
        self.watermark_ms = -(2**63)
        self.now = 0
        self.key: Any = None
        self.timestamp: int | None = None
        self.output: list[Any] = []
        self.counters: dict[str, int] = {}  # the function's metric counters by name
        function.open(_FakeRuntimeContext(self))

    @property
    def late_counter(self) -> int:
        return self.counters.get("numLateRecords", 0)

    # inputs
    def element(self, key: Any, value: Any, timestamp: int | None = None) -> list[Any]:
        self.key, self.timestamp = key, timestamp
        out = list(self.function.process_element(value, _FakeContext(self)) or ())
        self.output.extend(out)
        return out

    def watermark(self, watermark: int) -> list[Any]:
        self.watermark_ms = max(self.watermark_ms, watermark)
        out: list[Any] = []
        timers = self.event_timers
        while timers and timers[0][0] <= self.watermark_ms:
            t, _, key = heapq.heappop(timers)
            self._timer_keys.discard(("event", t, key))
            out.extend(self._fire(t, key))
        return out

    def advance_clock(self, now: int) -> list[Any]:
        self.now = max(self.now, now)
        out: list[Any] = []
        timers = self.processing_timers
        while timers and timers[0][0] <= self.now:
            t, _, key = heapq.heappop(timers)
            self._timer_keys.discard(("processing", t, key))
            out.extend(self._fire(t, key))
        return out

    def _fire(self, t: int, key: Any) -> list[Any]:
        self.key, self.timestamp = key, t
        out = list(self.function.on_timer(t, _FakeContext(self)) or ())
        self.output.extend(out)
        return out

    def register(self, domain: str, t: int) -> None:
        marker = (domain, t, self.key)
        if marker in self._timer_keys:
            return
        self._timer_keys.add(marker)
        self._seq += 1
        heapq.heappush(
            self.event_timers if domain == "event" else self.processing_timers, (t, self._seq, self.key)
        )

    def timers(self, domain: str = "event") -> list[tuple[int, Any]]:
        return sorted((t, k) for d, t, k in self._timer_keys if d == domain)

    # outputs
    def main(self) -> list[Any]:
        return [o for o in self.output if not _is_side(o)]

    def plain(self) -> list[Any]:
        """Everything emitted, side outputs as ``(tag id, value)``."""
        return [(o[0].tag_id, o[1]) if _is_side(o) else o for o in self.output]

    def side(self, tag_id: str) -> list[Any]:
        return [o[1] for o in self.output if _is_side(o) and o[0].tag_id == tag_id]


def _is_side(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], OutputTag)


class _FakeValueState:
    def __init__(self, flink: FakeFlink) -> None:
        self.flink = flink

    def value(self) -> Any:
        value = self.flink.store.get(self.flink.key)
        return pickle.loads(value) if self.flink.pickle_state and value is not None else value

    def update(self, value: Any) -> None:
        self.flink.store[self.flink.key] = pickle.dumps(value) if self.flink.pickle_state else value

    def clear(self) -> None:
        self.flink.store.pop(self.flink.key, None)


class _FakeCounter:
    def __init__(self, flink: FakeFlink, name: str) -> None:
        self.flink = flink
        self.name = name
        flink.counters[name] = 0

    def inc(self, n: int = 1) -> None:
        self.flink.counters[self.name] += n


class _FakeMetrics:
    def __init__(self, flink: FakeFlink) -> None:
        self.flink = flink

    def counter(self, name: str) -> _FakeCounter:
        return _FakeCounter(self.flink, name)


class _FakeRuntimeContext:
    def __init__(self, flink: FakeFlink) -> None:
        self.flink = flink

    def get_state(self, descriptor: Any) -> _FakeValueState:
        return _FakeValueState(self.flink)

    def get_metrics_group(self) -> _FakeMetrics | None:
        return _FakeMetrics(self.flink) if self.flink.metrics else None

    def get_index_of_this_subtask(self) -> int:
        return 0


class _FakeTimerService:
    def __init__(self, flink: FakeFlink) -> None:
        self.flink = flink

    def current_watermark(self) -> int:
        return self.flink.watermark_ms

    def current_processing_time(self) -> int:
        return self.flink.now

    def register_event_time_timer(self, t: int) -> None:
        self.flink.register("event", t)

    def register_processing_time_timer(self, t: int) -> None:
        self.flink.register("processing", t)


class _FakeContext:
    def __init__(self, flink: FakeFlink) -> None:
        self.flink = flink

    def timer_service(self) -> _FakeTimerService:
        return _FakeTimerService(self.flink)

    def timestamp(self) -> int | None:
        return self.flink.timestamp

    def get_current_key(self) -> Any:
        return self.flink.key
