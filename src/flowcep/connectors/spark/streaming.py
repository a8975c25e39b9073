"""Structured Streaming: keys hashed into buckets, one operator snapshot per bucket in Spark state.

The query is ``groupBy(bucket).transformWithState(...)`` in ``EventTime`` mode, where ``bucket``
is ``pmod(hash(key columns), buckets)``. A bucket's value state holds the snapshot of one
``CepOperator`` over all of the bucket's keys, so Spark's per-group costs (the calls to its
state server, the Arrow batch per group) are paid per bucket, not per key, and the worker
restores and snapshots many keys with one pickle call each way. Inside the operator the keys are
as independent as in the embedded runtime: each has its own NFA, buffer and timers.

Time: every call first brings the operator to Spark's watermark of the micro-batch (rows at or
before it are then late), then feeds the rows, then advances the operator to the bucket's own
watermark, the latest event time among those rows minus the delay (Spark's next watermark is at
least that). One event-time timer per bucket, at the operator's ``next_deadline()``, wakes the
bucket when Spark's watermark passes it.
"""

from __future__ import annotations

import functools
import logging
import pickle
from collections.abc import Iterator
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from flowcep.runtime.gctuning import tuned_gc

from .chunks import CHUNK_SCHEMA, chunker, unchunk
from .matcher import Matcher
from .values import BUCKET_COLUMN as _BUCKET
from .values import OLDEST_MS, py_converter
from .values import TS_MS_COLUMN as _MS
from .values import WATERMARK_COLUMN as _WM

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_BUCKETS",
    "PROVIDER_CONF",
    "ROCKSDB_PROVIDER",
    "STATE_FORMAT",
    "SparkConfigError",
    "StateFormatError",
    "build_stream",
    "ensure_state_store",
]

PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_UNSET = "__flowcep_unset__"

#: How many buckets the keys are hashed into, unless ``detect(buckets=...)`` says otherwise.
DEFAULT_BUCKETS = 256
#: The version of the bucket state's layout (the operator snapshot inside has its own).
STATE_FORMAT = 1
STATE_NAME = "flowcep_bucket"
STATE_SCHEMA = "format int, buckets int, timer long, snapshot binary, latest binary"


class SparkConfigError(RuntimeError):
    """The Spark session lacks a setting the connector needs."""


class StateFormatError(RuntimeError):
    """A bucket's stored state cannot be read by this query (other layout or bucket count)."""


def ensure_state_store(spark: SparkSession) -> None:
    """Make streaming queries of this session use RocksDB (transformWithState needs it).

    Sets ``spark.sql.streaming.stateStore.providerClass`` when the session leaves it unset;
    raises :class:`SparkConfigError` naming the setting when it is set to another provider.
    """
    current = spark.conf.get(PROVIDER_CONF, _UNSET)
    if current == ROCKSDB_PROVIDER:
        return
    if current == _UNSET:
        spark.conf.set(PROVIDER_CONF, ROCKSDB_PROVIDER)
        log.warning(
            "flowcep: set %s=%s on this session (transformWithState needs it)",
            PROVIDER_CONF,
            ROCKSDB_PROVIDER,
        )
        return
    raise SparkConfigError(
        "flowcep's streaming detection runs on transformWithState, which needs the RocksDB state store; "
        f"this session has {PROVIDER_CONF}={current}. Set "
        f"{PROVIDER_CONF}={ROCKSDB_PROVIDER} (SparkSession.builder.config(...) or spark.conf.set(...))"
    )


def build_stream(
    df: DataFrame,
    ms: Column,
    matcher: Matcher,
    key_names: list[str] | None,
    delay: int,
    ttl: int | None,
    buckets: int,
    out_schema: T.StructType,
) -> DataFrame:
    ensure_state_store(df.sparkSession)
    if key_names is None:
        bucket = F.lit(0)
    else:
        # Spark's own hash (Murmur3 of the key columns): the same bucket for a key in every
        # micro-batch and after every restart
        bucket = F.pmod(F.hash(*[F.col(c) for c in key_names]), F.lit(buckets))
    # The watermark is taken on a helper column that is dropped before the stateful operator:
    # Spark then tracks the watermark but does not filter late rows itself, so the operator sees
    # them and reports them as kind 'late' (and rows without a timestamp as 'invalid').
    prepared = (
        df.withColumn(_MS, ms)  # the event time, after the user's columns
        .withColumn(_BUCKET, bucket)  # the last column
        .withColumn(_WM, F.timestamp_millis(F.coalesce(F.col(_MS), F.lit(OLDEST_MS))))
        .withWatermark(_WM, f"{delay} milliseconds")
        .drop(_WM)
    )
    # the events in chunks, a bucket's events of a partition in one row (connectors/spark/chunks.py)
    converters = [*(py_converter(f.dataType) for f in df.schema.fields), None]  # (the event time)
    chunked = prepared.mapInArrow(chunker(converters), CHUNK_SCHEMA)
    processor = BucketProcessor(matcher, delay, ttl, buckets)
    wire = matcher.internal_schema if matcher.mode == "default" else out_schema
    return chunked.groupBy("bucket").transformWithState(processor, wire, "Append", "EventTime")


class BucketProcessor(StatefulProcessor):
    """The operator snapshot of a bucket of keys in one value state, a timer at its next deadline.

    The state row is ``(format, buckets, timer, snapshot, latest)``: this layout's version, the
    number of buckets it was written with, the registered timer, the operator's snapshot
    (``CepOperator.snapshot(canonical=False)``; an event hierarchy's bucket stays on the engine
    that wrote it, see ``Matcher.restored``) and, with ``state_ttl``, each key's latest event
    time (pickled dict).
    """

    def __init__(
        self,
        matcher: Matcher,
        delay: int,
        ttl_ms: int | None,
        buckets: int,
    ) -> None:
        self.matcher = matcher
        self.delay = delay
        self.ttl_ms = ttl_ms
        self.buckets = buckets

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState(STATE_NAME, STATE_SCHEMA)
        m = self.matcher
        self._make = functools.partial(tuple.__new__, m.event_class)
        positions = m.key_positions
        self._single = positions[0] if positions is not None and len(positions) == 1 else None
        self._positions = positions
        self._key_of = m.key_of()
        m.open_task()

    # -- the state

    def _load(self, bucket: Any) -> tuple[Any, int | None, dict[Any, int], bool]:
        """The bucket's operator, timer and latest event times; whether it had state."""
        op = self.matcher.operator()
        # exists() first: get() on an absent value logs a warning per new bucket
        if not self.state.exists():
            return op, None, {}, False
        value = self.state.get()
        if value is None:
            return op, None, {}, False
        fmt, buckets, timer, snapshot, latest = value
        if fmt != STATE_FORMAT:
            raise StateFormatError(
                f"flowcep: bucket {bucket} holds state of layout {fmt}; this flowcep reads layout "
                f"{STATE_FORMAT}. Start the query on a new checkpoint"
            )
        if buckets != self.buckets:
            raise StateFormatError(
                f"flowcep: the checkpoint's state was written with buckets={buckets}, this query has "
                f"buckets={self.buckets}; keys would land in other buckets. Use buckets={buckets}, "
                "or a new checkpoint"
            )
        try:
            op = self.matcher.restored(op, bytes(snapshot))
        except ValueError as exc:  # SnapshotError: another pattern, format or garbage
            raise StateFormatError(f"flowcep: cannot restore bucket {bucket}: {exc}") from exc
        return op, timer, pickle.loads(latest) if latest else {}, True

    def _store(
        self, op: Any, had: bool, timer: int | None, latest: dict[Any, int], fired: int | None
    ) -> None:
        ttl = self.ttl_ms
        if op.has_state():
            target = op.next_deadline()
            blob: bytes | None = op.snapshot(canonical=False)
            if ttl is not None:
                held = op.keys()
                latest = {k: latest[k] for k in held if k in latest}
                if latest:
                    expiry = min(latest.values()) + ttl
                    target = expiry if target is None else min(target, expiry)
        else:
            target = blob = None
        handle = self.handle
        if timer is not None and timer != target and timer != fired:
            handle.deleteTimer(timer)
        if target is not None and target != timer:
            handle.registerTimer(target)
        if blob is not None:
            kept = pickle.dumps(latest, pickle.HIGHEST_PROTOCOL) if ttl is not None and latest else None
            self.state.update((STATE_FORMAT, self.buckets, target, blob, kept))
        elif had:
            self.state.clear()

    def _advance(self, op: Any, watermark: int, latest: dict[Any, int], out: list[Any]) -> None:
        """Bring the operator to Spark's watermark; then drop keys idle for ``state_ttl``."""
        if watermark > 0 and watermark > op.current_watermark:  # 0: no watermark yet
            self.matcher.emit(op.process_watermark(watermark), out)
        ttl = self.ttl_ms
        if ttl is not None and latest:
            for k, t in list(latest.items()):
                if watermark >= t + ttl:
                    op.discard_key(k)  # whatever it still holds is dropped, silently
                    del latest[k]

    # -- Spark's calls

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Iterator[Row]:  # noqa: N802,N803
        # the collector's thresholds raised while the bucket runs, as they were after it (see
        # flowcep.runtime.gctuning): a bucket's restored state is young garbage-free objects that
        # the default thresholds would walk again and again
        with tuned_gc():
            return self._input_rows(key, rows, timerValues)

    def _input_rows(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Iterator[Row]:  # noqa: N803
        op, timer, latest, had = self._load(key[0])
        out: list[Any] = []
        m = self.matcher
        self._advance(op, timerValues.getCurrentWatermarkInMs(), latest, out)
        make = self._make
        single = self._single
        positions = self._positions
        track = self.ttl_ms is not None
        key_of = self._key_of
        latest_ms: int | None = None
        item = tuple.__getitem__  # not Row.__getitem__, which is Python code
        # the bucket's events by key, each key's in the order they came
        by_key: dict[Any, list[Any]] = {}
        for row in rows:
            for items in unchunk(item(row, 1)):  # (the row's first cell is the bucket)
                event = make(items)  # the user's columns and the event time
                ms = item(event, -1)
                if single is not None:
                    bad_key = item(event, single) is None
                else:
                    bad_key = positions is not None and any(item(event, i) is None for i in positions)
                if ms is None or bad_key:
                    m.invalid(m.row_key(event), event, ms, out)
                    continue
                k = key_of(event) if key_of is not None else None
                listed = by_key.get(k)
                if listed is None:
                    by_key[k] = [event]
                else:
                    listed.append(event)
                if latest_ms is None or ms > latest_ms:
                    latest_ms = ms
                if track and latest.get(k, ms - 1) < ms:
                    latest[k] = ms
        # The bucket's own watermark: Spark's next one is at least (max event time seen) - delay,
        # and rows at or before it will then be late, so nothing still to come can precede this.
        # It releases output a micro-batch early, and the rows of this batch need not be stored
        # as buffered elements.
        own = None if latest_ms is None else latest_ms - self.delay
        if own is not None and own > op.current_watermark:
            self._feed_keys(op, by_key, own, out)
            m.emit(op.process_watermark(own), out)
        else:
            self._feed_one_by_one(op, by_key, out)
        self._store(op, had, timer, latest, None)
        if m.gauges:
            m.gauge_row(op, out)
        return m.as_rows(out)

    def _feed_keys(self, op: Any, by_key: dict[Any, list[Any]], watermark: int, out: list[Any]) -> None:
        """Each key's events up to ``watermark`` through the NFA at once, where they came in time
        order (``CepOperator.process_key_elements``); else (or for an event hierarchy) one by one.
        The caller then brings the operator to ``watermark``."""
        process_key = getattr(op, "process_key_elements", None)
        if process_key is None:  # an event hierarchy's or a rule set's operator
            self._feed_one_by_one(op, by_key, out)
            return
        emit = self.matcher.emit
        item = tuple.__getitem__
        for events in by_key.values():
            times = [item(e, -1) for e in events]
            if len(times) == 1 or times == sorted(times):
                outputs = process_key(events, times, watermark)
                if outputs:
                    emit(outputs, out)
            else:  # (the operator orders them)
                self._feed_one_by_one(op, {None: events}, out)

    def _feed_one_by_one(self, op: Any, by_key: dict[Any, list[Any]], out: list[Any]) -> None:
        """Each event through ``process_element`` (buffered under its key until the watermark)."""
        m = self.matcher
        process = m.processor(op)
        emit = m.emit
        item = tuple.__getitem__
        for events in by_key.values():
            for e in events:
                outputs = process(e, item(e, -1))
                if outputs:
                    emit(outputs, out)

    def handleExpiredTimer(  # noqa: N802
        self,
        key: Any,
        timerValues: TimerValues,  # noqa: N803
        expiredTimerInfo: ExpiredTimerInfo,  # noqa: N803
    ) -> Iterator[Row]:
        with tuned_gc():
            return self._expired_timer(key, timerValues, expiredTimerInfo)

    def _expired_timer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Row]:  # noqa: N803
        op, timer, latest, had = self._load(key[0])
        if not had:  # already cleared
            return iter(())
        out: list[Any] = []
        self._advance(op, timerValues.getCurrentWatermarkInMs(), latest, out)
        self._store(op, had, timer, latest, expiredTimerInfo.getExpiryTimeInMs())
        if self.matcher.gauges:
            self.matcher.gauge_row(op, out)
        return self.matcher.as_rows(out)

    def close(self) -> None:
        self.matcher.close_task()
