"""flowcep patterns on PySpark DataFrames: batch and Structured Streaming.

One entry point, :func:`detect`, takes a DataFrame (batch or streaming), a flowcep ``Pattern``,
the key column(s) and the event-time column, and returns a DataFrame of results. Matching is
done by the embedded runtime (``flowcep.runtime.CepOperator``), one operator state per key:

* batch: the rows are partitioned by key and sorted by event time (``mapInArrow``); each key's
  rows go through a fresh operator, which is flushed at the end of the key;
* streaming: ``groupBy(key).transformWithState`` in ``EventTime`` mode. The operator's snapshot
  bytes are kept in a value state per key, and an event-time timer at ``next_deadline()`` makes
  timeouts and pending ``not_followed_by`` matches fire when Spark's watermark passes, even if
  the key gets no new row.

See docs/spark.md for the output schema, the time semantics and the differences with the
pure-Python runtime.
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import keyword
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from operator import itemgetter
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

__all__ = [
    "DEFAULT_OUTPUT_SCHEMA",
    "PROVIDER_CONF",
    "ROCKSDB_PROVIDER",
    "InvalidRowError",
    "SparkConfigError",
    "detect",
    "duration_ms",
    "ensure_state_store",
    "run_cli",
]

log = logging.getLogger(__name__)

PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

#: The output of :func:`detect` without ``select``.
DEFAULT_OUTPUT_SCHEMA = (
    "key string, kind string, timestamp timestamp, first_ts timestamp, last_ts timestamp, events string"
)
# what the Python side emits for the default schema; times become timestamps in a projection after it
_INTERNAL_SCHEMA = "key string, kind string, timestamp long, first_ts long, last_ts long, events string"
_INTERNAL_FIELDS = ["key", "kind", "timestamp", "first_ts", "last_ts", "events"]
_CLI_SCHEMA = "kind string, key string, timestamp long, record string"
_CLI_FIELDS = ["kind", "key", "timestamp", "record"]

# hidden columns added to the input; never seen by conditions or select
_MS = "__flowcep_ts_ms"
_WM = "__flowcep_watermark"
_SEQ = "__flowcep_seq"
_NOKEY = "__flowcep_nokey"
_HIDDEN = (_MS, _WM, _SEQ, _NOKEY)
_STATE_NAME = "flowcep_operator"
_STATE_SCHEMA = "blob binary, timer long, last long"
# the range of Spark timestamps; event times outside it are unparsable, output times outside it null
_OLDEST_MS = -62135596800000  # 0001-01-01T00:00:00Z
_NEWEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
_OUTPUT_CHUNK = 4096  # rows per Arrow batch written back to Spark

_UNSET = "__flowcep_unset__"
_DURATION_RE = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")
_UNIT_MS = {
    "": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip


class SparkConfigError(RuntimeError):
    """The Spark session lacks a setting the connector needs."""


class InvalidRowError(ValueError):
    """A row with a null key or a null/unparsable timestamp, with ``on_invalid="raise"``."""


# ----------------------------------------------------------------------------- values and times


def duration_ms(value: int | float | timedelta | str | None, what: str = "duration") -> int:
    """Milliseconds for ``value``: an int (ms), a ``timedelta``, or text like ``"10 seconds"``/``"500ms"``."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise TypeError(f"{what}: a boolean is not a duration")
    if isinstance(value, timedelta):
        ms = value // timedelta(milliseconds=1)
    elif isinstance(value, int):
        ms = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ms = int(value)
    elif isinstance(value, str):
        m = _DURATION_RE.match(value.lower())
        if not m or m.group(2) not in _UNIT_MS:
            raise ValueError(
                f"{what}: cannot read {value!r} (write e.g. 500, '500 milliseconds', '10 seconds')"
            )
        ms = int(m.group(1)) * _UNIT_MS[m.group(2)]
    else:
        raise TypeError(f"{what}: expected ms, a timedelta or text, got {type(value).__name__}")
    if ms < 0:
        raise ValueError(f"{what} must not be negative, got {value!r}")
    return ms


def _timestamp_ms(dtype: T.DataType, name: str) -> Column:
    """Epoch milliseconds of the event-time column, null where missing or unparsable."""
    col = F.col(name)
    if isinstance(dtype, T.TimestampType):
        ms = F.unix_millis(col)
    elif isinstance(dtype, T.TimestampNTZType | T.DateType):
        ms = F.unix_millis(col.cast("timestamp"))
    elif isinstance(dtype, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        ms = col.cast("long")
    elif isinstance(dtype, T.FloatType | T.DoubleType | T.DecimalType):
        # whole numbers of milliseconds only, as the command line reads them
        ms = F.when(col == F.floor(col), F.expr(f"try_cast({_quote(name)} as long)"))
    elif isinstance(dtype, T.StringType):
        digits = col.rlike(r"^\s*[+-]?\d{1,18}\s*$")
        ms = F.when(digits, F.trim(col).cast("long")).otherwise(
            F.unix_millis(F.expr(f"try_cast({_quote(name)} as timestamp)"))
        )
    else:
        raise TypeError(
            f"the timestamp column has type {dtype.simpleString()}; use a timestamp, date, "
            "integer (epoch milliseconds) or string (ISO-8601 or epoch milliseconds) column"
        )
    return F.when(ms.between(_OLDEST_MS, _NEWEST_MS), ms)


def _quote(name: str) -> str:
    # a column reference in SQL text (try_cast has no Python function in every 4.x)
    return "`" + name.replace("`", "``") + "`"


def _json_default(value: Any) -> Any:
    """``json.dumps`` fallback for Spark values."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if hasattr(value, "__iter__"):
        return list(value)
    return repr(value)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, default=_json_default, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN/Infinity: JSON has none; write null
        return json.dumps(_no_nan(value), default=_json_default, ensure_ascii=False)


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Row):
        return _no_nan(value.asDict(True))
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value


# ----------------------------------------------------------------------------- events


@functools.lru_cache(maxsize=256)
def _event_class(fields: tuple[str, ...]) -> type[Row]:
    """A ``Row`` subclass whose columns are properties: ``e.amount`` without ``Row.__getattr__``.

    Its tuple may carry the connector's event time (ms) as one more, unnamed, last item.
    """
    names = list(fields)

    def __reduce__(self: Row) -> tuple[Any, ...]:  # noqa: N807 - pickles into the same class
        return _event, (fields, tuple(self))

    namespace: dict[str, Any] = {"__fields__": names, "__reduce__": __reduce__, "__module__": __name__}
    for i, name in enumerate(fields):
        if name.isidentifier() and not keyword.iskeyword(name) and not hasattr(Row, name):
            namespace[name] = property(itemgetter(i))
    return type("Event", (Row,), namespace)


def _event(fields: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """An event (a ``Row``) of ``fields`` from ``values`` (unpickling entry point)."""
    return tuple.__new__(_event_class(fields), values)


def _py_converter(dt: T.DataType) -> Callable[[Any], Any] | None:
    """How to turn an Arrow ``to_pylist`` value into what a Spark ``Row`` holds (None: as is)."""
    if isinstance(dt, T.StructType):
        subs = [(f.name, _py_converter(f.dataType)) for f in dt.fields]

        def struct(v: Any) -> Any:
            if v is None:
                return None
            return Row(**{n: (c(v[n]) if c is not None else v[n]) for n, c in subs})

        return struct
    if isinstance(dt, T.ArrayType):
        inner = _py_converter(dt.elementType)
        if inner is None:
            return None
        return lambda v: None if v is None else [inner(x) for x in v]
    if isinstance(dt, T.MapType):
        kc, vc = _py_converter(dt.keyType), _py_converter(dt.valueType)

        def mapping(v: Any) -> Any:
            if v is None:
                return None
            return {(kc(k) if kc else k): (vc(x) if vc else x) for k, x in v}

        return mapping
    return None


def _select_arity(fn: Callable[..., Any]) -> int:
    """1 for ``select(match)``, 3 for ``select(kind, key, events)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 1
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = len([p for p in positional if p.default is p.empty])
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if required == 1:
        return 1
    if required == 3 or (required < 3 and (len(positional) >= 3 or varargs)):
        return 3
    if required == 0 and positional:
        return 1
    raise TypeError("select must take one argument (match) or three (kind, key, events)")


# ----------------------------------------------------------------------------- the per-key matcher


class _Matcher:
    """Everything a worker needs to run the pattern over the rows of one key (no Spark state).

    ``mode``: ``default`` (tuples of ``_INTERNAL_FIELDS``), ``select1``/``select3`` (dicts from the
    user's select), ``cli`` (tuples of ``_CLI_FIELDS``: a JSON record per result).
    """

    def __init__(
        self,
        pattern: Any,
        *,
        delay: int,
        user_fields: list[str],
        key_names: list[str] | None,
        timestamp: str,
        mode: str,
        select: Callable[..., Any] | None,
        output_fields: list[str],
        on_invalid: str,
        recursive: bool,
    ) -> None:
        self.pattern = pattern
        self.delay = delay
        self.user_fields = tuple(user_fields)
        self.key_names = key_names
        self.timestamp = timestamp
        self.ts_index = user_fields.index(timestamp)
        self.mode = mode
        self.select = select
        self.output_fields = output_fields
        self.on_invalid = on_invalid
        self.recursive = recursive
        self._init_caches()

    def _init_caches(self) -> None:
        self._op: Any = None
        self._fresh: bytes | None = None
        self.event_class = _event_class(self.user_fields)
        self.event_fields: list[str] = self.event_class.__fields__  # type: ignore[attr-defined]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_op", "_fresh", "event_class", "event_fields"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_caches()

    # -- the operator: one per worker process, reset per key from a snapshot

    def operator(self, blob: bytes | None) -> Any:
        op = self._op
        if op is None:
            from flowcep.runtime import CepOperator

            # no generated watermark: the connector drives event time (Spark's watermark, or
            # the end of a key's rows in batch)
            op = self._op = CepOperator(
                self.pattern,
                out_of_orderness=None,
                on_error="raise" if self.on_invalid == "raise" else "side_output",
            )
            self._fresh = op.snapshot()
            if blob is None:
                return op
        op.restore(blob if blob is not None else self._fresh)
        return op

    # -- batch: one key's events, sorted by time; then the end of input

    def run_key(self, key: tuple[Any, ...], events: Iterable[Row], out: list[Any]) -> None:
        op = self.operator(None)
        keyed = self.key_names is not None
        bad_key = keyed and None in key
        process = op.process_element
        emit = self._emit
        for e in events:
            ms = e[-1]
            if ms is None or bad_key:
                self._invalid(key, e, ms, out)
                continue
            outputs = process(e, ms)
            if outputs:
                emit(key, outputs, out)
        emit(key, op.flush(), out)

    # -- streaming: a micro-batch of one key, and timers

    def run_rows(
        self, key: tuple[Any, ...], rows: Iterable[Row], watermark: int, blob: bytes | None
    ) -> tuple[list[Any], bytes | None, int | None, int | None]:
        """One micro-batch of rows of one key.

        Returns the output, the new snapshot (None: no state), its deadline and the latest event
        time among the rows (None: no valid row).
        """
        out: list[Any] = []
        op = self.operator(blob)
        if watermark > 0:  # Spark's watermark: rows at or before it are late (0: none yet)
            self._emit(key, op.process_watermark(watermark), out)
        cls = self.event_class
        fields = self.event_fields
        setclass = object.__setattr__
        bad_key = self.key_names is not None and None in key
        valid: list[tuple[int, Row]] = []
        latest = None
        for row in rows:
            setclass(row, "__class__", cls)  # the same tuple, seen through the event class
            row.__fields__ = fields  # hides the connector's columns
            ms = row[-1]
            if ms is None or bad_key:
                self._invalid(key, row, ms, out)
            else:
                valid.append((ms, row))
        if valid:
            valid.sort(key=itemgetter(0))  # stable: ties keep their arrival order
            process = op.process_element
            emit = self._emit
            for ms, row in valid:
                outputs = process(row, ms)
                if outputs:
                    emit(key, outputs, out)
            # The key's own watermark: Spark's next one is at least (max event time seen) - delay,
            # and rows at or before it will be late, so nothing still to come can precede this.
            # It releases output a micro-batch early and changes nothing else.
            latest = valid[-1][0]
            own = latest - self.delay
            if own > op.current_watermark:
                self._emit(key, op.process_watermark(own), out)
        return (out, *self._save(op), latest)

    def run_timer(
        self, key: tuple[Any, ...], watermark: int, blob: bytes
    ) -> tuple[list[Any], bytes | None, int | None]:
        """Spark's watermark passed the key's deadline."""
        out: list[Any] = []
        op = self.operator(blob)
        self._emit(key, op.process_watermark(watermark), out)
        return (out, *self._save(op))

    @staticmethod
    def _save(op: Any) -> tuple[bytes | None, int | None]:
        if not op.has_state():
            return None, None
        return op.snapshot(), op.next_deadline()

    # -- results

    def _invalid(self, key: tuple[Any, ...], row: Row, ms: int | None, out: list[Any]) -> None:
        if self.key_names is not None and None in key:
            reason = f"the key column(s) {', '.join(self.key_names)} are null"
        elif row[self.ts_index] is None:
            reason = f"the timestamp column {self.timestamp} is null"
        else:
            reason = f"the timestamp {row[self.ts_index]!r} in column {self.timestamp} cannot be parsed"
        if self.on_invalid == "raise":
            raise InvalidRowError(f"flowcep: invalid row: {reason}: {row!r}")
        self._result(key, "invalid", ms, {"invalid": [row]}, ms, ms, out, reason)

    def _emit(self, key: tuple[Any, ...], outputs: Iterable[Any], out: list[Any]) -> None:
        for o in outputs:
            kind = o.kind
            value = o.value
            if kind == "match" or kind == "timeout":
                first = last = None
                for events in value.values():
                    for e in events:
                        ms = e[-1]
                        if first is None or ms < first:
                            first = ms
                        if last is None or ms > last:
                            last = ms
                self._result(key, kind, o.timestamp, value, first, last, out)
            elif kind == "late":
                ms = value[-1]
                self._result(key, "late", o.timestamp, {"late": [value]}, ms, ms, out)
            else:  # a bad record: a condition raised on the row
                record = getattr(value, "record", value)
                step = getattr(value, "step", None)
                error = getattr(value, "error", str(value))
                reason = f"pattern step {step!r}: {error}" if step is not None else str(error)
                ms = record[-1] if isinstance(record, Row) else None
                self._result(key, "invalid", o.timestamp, {"invalid": [record]}, ms, ms, out, reason)

    def _key_text(self, key: tuple[Any, ...]) -> str | None:
        if self.key_names is None:
            return None
        if len(key) == 1:
            k = key[0]
            return (
                k if k is None or isinstance(k, str) else _dumps(k) if isinstance(k, Row | dict) else str(k)
            )
        return _dumps([k.asDict(True) if isinstance(k, Row) else k for k in key])

    def _row_dict(self, e: Any) -> Any:
        return e.asDict(self.recursive) if isinstance(e, Row) else e

    def _events(self, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        row = self._row_dict
        return {step: [row(e) for e in events] for step, events in value.items()}

    def _result(
        self,
        key: tuple[Any, ...],
        kind: str,
        ts: int | None,
        value: dict[str, list[Any]],
        first: int | None,
        last: int | None,
        out: list[Any],
        reason: str | None = None,
    ) -> None:
        mode = self.mode
        if mode == "default":
            doc: dict[str, Any] = self._events(value)
            if reason is not None:
                doc["reason"] = reason
            out.append((self._key_text(key), kind, ts, first, last, _dumps(doc)))
        elif mode == "cli":
            record: dict[str, Any]
            if kind == "match":
                record = (
                    {"value": self.select(value)}
                    if self.select is not None
                    else {"match": self._events(value)}
                )
            elif kind == "timeout":
                record = {"match": self._events(value)}
            else:
                (row,) = value[kind]
                record = {"event": self._row_dict(row)}
                if reason is not None:
                    record["error"] = reason
            out.append((kind, self._key_text(key), ts, _dumps(record)))
        else:
            select = self.select
            assert select is not None
            if mode == "select1":
                if kind != "match":
                    return
                result = select(value)
            else:
                result = select(kind, self._key_text(key), value)
            self._selected(result, out)

    def _selected(self, result: Any, out: list[Any]) -> None:
        if result is None:
            return
        if isinstance(result, list):
            for r in result:
                self._selected(r, out)
        elif isinstance(result, Row):
            fields = getattr(result, "__fields__", None)
            out.append(result.asDict(True) if fields else dict(zip(self.output_fields, result, strict=False)))
        elif isinstance(result, dict):
            out.append(result)
        elif isinstance(result, tuple):
            out.append(dict(zip(self.output_fields, result, strict=False)))
        else:
            out.append({self.output_fields[0]: result})

    def as_rows(self, out: list[Any]) -> Iterator[Row]:
        """Results as ``Row``s (what transformWithState returns)."""
        if self.mode in ("default", "cli"):
            make = Row(*self.output_fields)
            return (make(*t) for t in out)
        return (Row(**d) for d in out)


# ----------------------------------------------------------------------------- batch


class _BatchRunner:
    """``mapInArrow`` function: partitions arrive sorted by key, then event time."""

    def __init__(
        self, matcher: _Matcher, key_positions: list[int], arrow_schema: Any, converters: list[Any]
    ) -> None:
        self.matcher = matcher
        self.key_positions = key_positions
        self.arrow_schema = arrow_schema
        self.converters = converters  # per input column: None or a function

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        m = self.matcher
        make = functools.partial(tuple.__new__, m.event_class)
        positions = self.key_positions
        single = positions[0] if len(positions) == 1 else None
        converters = self.converters
        fix = any(c is not None for c in converters)
        out: list[Any] = []
        key: tuple[Any, ...] | None = None
        events: list[Row] = []
        started = False
        for batch in batches:
            columns = [c.to_pylist() for c in batch.columns]
            if fix:
                columns = [
                    col if c is None else [c(v) for v in col]
                    for col, c in zip(columns, converters, strict=True)
                ]
            for values in zip(*columns, strict=True):
                if single is not None:
                    k: tuple[Any, ...] = (values[single],)
                else:
                    k = tuple(values[i] for i in positions)
                if k != key or not started:
                    if started:
                        m.run_key(key, events, out)  # type: ignore[arg-type]
                    key, events, started = k, [], True
                events.append(make(values))
            if len(out) >= _OUTPUT_CHUNK:
                yield self._batch(out)
                out = []
        if started:
            m.run_key(key, events, out)  # type: ignore[arg-type]
        if out:
            yield self._batch(out)

    def _batch(self, out: list[Any]) -> Any:
        import pyarrow as pa

        schema = self.arrow_schema
        if self.matcher.mode in ("default", "cli"):
            columns = list(zip(*out, strict=True))
            arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
            return pa.RecordBatch.from_arrays(arrays, schema=schema)
        return pa.RecordBatch.from_pylist(out, schema=schema)


# ----------------------------------------------------------------------------- streaming


class _StreamProcessor(StatefulProcessor):
    """Streaming: the operator snapshot of each key in a value state, a timer at its next deadline.

    The state is ``(blob, timer, last)``: the snapshot, the registered timer and the key's latest
    event time (for ``state_ttl``, which counts in event time: Spark only has processing-time TTL,
    and not in ``EventTime`` mode).
    """

    def __init__(self, matcher: _Matcher, ttl_ms: int | None) -> None:
        self.matcher = matcher
        self.ttl_ms = ttl_ms

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState(_STATE_NAME, _STATE_SCHEMA)

    def _load(self) -> tuple[bytes | None, int | None, int | None]:
        value = self.state.get()  # None when absent
        if value is None or value[0] is None:
            return None, None, None
        return bytes(value[0]), value[1], value[2]

    def _store(
        self,
        had: bool,
        blob: bytes | None,
        timer: int | None,
        deadline: int | None,
        last: int | None,
        fired: int | None,
    ) -> None:
        target = deadline if blob is not None else None
        if blob is not None and self.ttl_ms is not None and last is not None:
            expiry = last + self.ttl_ms
            target = expiry if target is None else min(target, expiry)
        handle = self.handle
        if timer is not None and timer != target and timer != fired:
            handle.deleteTimer(timer)
        if target is not None and target != timer:
            handle.registerTimer(target)
        if blob is not None:
            self.state.update((blob, target, last))
        elif had:
            self.state.clear()

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Iterator[Row]:  # noqa: N802,N803
        old, timer, last = self._load()
        out, blob, deadline, latest = self.matcher.run_rows(
            tuple(key), rows, timerValues.getCurrentWatermarkInMs(), old
        )
        if latest is not None and (last is None or latest > last):
            last = latest
        self._store(old is not None, blob, timer, deadline, last, None)
        return self.matcher.as_rows(out)

    def handleExpiredTimer(  # noqa: N802
        self,
        key: Any,
        timerValues: TimerValues,  # noqa: N803
        expiredTimerInfo: ExpiredTimerInfo,  # noqa: N803
    ) -> Iterator[Row]:
        blob, timer, last = self._load()
        if blob is None:  # already cleared
            return iter(())
        watermark = timerValues.getCurrentWatermarkInMs()
        out, blob, deadline = self.matcher.run_timer(tuple(key), watermark, blob)
        ttl = self.ttl_ms
        if blob is not None and ttl is not None and last is not None and watermark >= last + ttl:
            blob = None  # idle for state_ttl of event time: what is left is dropped
        self._store(True, blob, timer, deadline, last, expiredTimerInfo.getExpiryTimeInMs())
        return self.matcher.as_rows(out)

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------- the entry point


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


def detect(
    df: DataFrame,
    pattern: Any,
    *,
    key: str | Sequence[str] | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str = 0,
    select: Callable[..., Any] | None = None,
    output_schema: T.StructType | str | None = None,
    on_invalid: str = "output",
    state_ttl: int | timedelta | str | None = None,
) -> DataFrame:
    """Run ``pattern`` over ``df`` per ``key`` in ``timestamp`` order; a DataFrame of results.

    Works on batch and streaming DataFrames. Without ``select`` the output has
    :data:`DEFAULT_OUTPUT_SCHEMA`: ``key``, ``kind`` (``match``, ``timeout``, ``late``,
    ``invalid``), ``timestamp``, ``first_ts``, ``last_ts`` and ``events``, a JSON object mapping
    each pattern step to its rows. With ``select`` (and ``output_schema``), ``select(match)``
    makes the rows of matches, or ``select(kind, key, events)`` those of every result.
    ``out_of_orderness`` is the watermark delay (ms, ``timedelta`` or ``"10 seconds"``),
    ``state_ttl`` (streaming) drops a key's state once Spark's watermark is that far past the
    key's latest event.
    """
    if on_invalid not in ("output", "raise"):
        raise ValueError(f"on_invalid must be 'output' or 'raise', got {on_invalid!r}")
    if (select is None) != (output_schema is None):
        raise ValueError("select and output_schema go together: give both or neither")
    if select is not None and not callable(select):
        raise TypeError(f"select must be callable, got {select!r}")
    delay = duration_ms(out_of_orderness, "out_of_orderness")
    ttl = duration_ms(state_ttl, "state_ttl") if state_ttl is not None else None
    if ttl is not None and ttl <= 0:
        raise ValueError("state_ttl must be positive")
    key_names = [key] if isinstance(key, str) else list(key) if key is not None else None
    if key_names == []:
        raise ValueError("key must name at least one column (or be None for one global key)")
    _check_columns(df, key_names, timestamp)

    if select is None:
        return _build(
            df, pattern, key_names, timestamp, delay, ttl, on_invalid, "default", None, _INTERNAL_SCHEMA
        )
    mode = "select1" if _select_arity(select) == 1 else "select3"
    return _build(df, pattern, key_names, timestamp, delay, ttl, on_invalid, mode, select, output_schema)  # type: ignore[arg-type]


def _check_columns(df: DataFrame, key_names: list[str] | None, timestamp: str) -> None:
    columns = list(df.columns)
    for hidden in _HIDDEN:
        if hidden in columns:
            raise ValueError(f"the input has a column named {hidden}, which flowcep uses internally")
    if timestamp not in columns:
        raise ValueError(f"no timestamp column {timestamp!r} in the input (columns: {', '.join(columns)})")
    for k in key_names or ():
        if k not in columns:
            raise ValueError(f"no key column {k!r} in the input (columns: {', '.join(columns)})")


def _struct(spark: SparkSession, schema: T.StructType | str) -> T.StructType:
    if isinstance(schema, str):
        parsed = T._parse_datatype_string(schema)  # noqa: SLF001 - the DDL parser pyspark uses itself
    else:
        parsed = schema
    if not isinstance(parsed, T.StructType):
        raise TypeError(f"output_schema must be a StructType or a DDL string of fields, got {schema!r}")
    return parsed


def _build(
    df: DataFrame,
    pattern: Any,
    key_names: list[str] | None,
    timestamp: str,
    delay: int,
    ttl: int | None,
    on_invalid: str,
    mode: str,
    select: Callable[..., Any] | None,
    schema: T.StructType | str,
) -> DataFrame:
    from flowcep.nfa import NFACompiler

    NFACompiler.compile(pattern)  # an illegal pattern fails here, not on a worker
    spark = df.sparkSession
    out_schema = _struct(spark, schema)
    user_fields = list(df.columns)
    nested = (T.StructType, T.ArrayType, T.MapType)
    matcher = _Matcher(
        pattern,
        delay=delay,
        user_fields=user_fields,
        key_names=key_names,
        timestamp=timestamp,
        mode=mode,
        select=select,
        output_fields=list(out_schema.fieldNames()),
        on_invalid=on_invalid,
        recursive=any(isinstance(f.dataType, nested) for f in df.schema.fields),
    )
    ms = _timestamp_ms(df.schema[timestamp].dataType, timestamp)
    if df.isStreaming:
        out = _build_stream(df, ms, matcher, key_names, delay, ttl, out_schema)
    else:
        out = _build_batch(df, ms, matcher, key_names, out_schema)
    if mode == "default":
        # a result released by the end of input (final watermark 2**63-1) has a null timestamp
        end = F.when(F.col("timestamp") <= _NEWEST_MS, F.col("timestamp"))
        out = out.select(
            "key",
            "kind",
            F.timestamp_millis(end).alias("timestamp"),
            F.timestamp_millis("first_ts").alias("first_ts"),
            F.timestamp_millis("last_ts").alias("last_ts"),
            "events",
        )
    return out


def _build_batch(
    df: DataFrame, ms: Column, matcher: _Matcher, key_names: list[str] | None, out_schema: T.StructType
) -> DataFrame:
    from pyspark.sql.pandas.types import to_arrow_schema

    # the input order breaks ties in event time, as far as Spark defines one
    prepared = df.withColumn(_SEQ, F.monotonically_increasing_id()).withColumn(_MS, ms)
    if key_names is None:
        prepared = prepared.repartition(1).sortWithinPartitions(F.col(_MS).asc_nulls_first(), _SEQ)
    else:
        prepared = prepared.repartition(*key_names).sortWithinPartitions(
            *key_names, F.col(_MS).asc_nulls_first(), _SEQ
        )
    prepared = prepared.select(*[F.col(_quote(c)) for c in df.columns], F.col(_MS))
    columns = list(df.columns)
    runner = _BatchRunner(
        matcher,
        [columns.index(k) for k in key_names] if key_names is not None else [],
        to_arrow_schema(out_schema, timezone="UTC"),
        [_py_converter(f.dataType) for f in df.schema.fields] + [None],
    )
    return prepared.mapInArrow(runner, out_schema)


def _build_stream(
    df: DataFrame,
    ms: Column,
    matcher: _Matcher,
    key_names: list[str] | None,
    delay: int,
    ttl: int | None,
    out_schema: T.StructType,
) -> DataFrame:
    ensure_state_store(df.sparkSession)
    prepared = df
    group_cols: list[str] = key_names if key_names is not None else []
    if key_names is None:
        prepared = prepared.withColumn(_NOKEY, F.lit(0))
        group_cols = [_NOKEY]
    # The watermark is taken on a helper column that is dropped before the stateful operator:
    # Spark then tracks the watermark but does not filter late rows itself, so the operator sees
    # them and reports them as kind 'late' (and rows without a timestamp as 'invalid').
    prepared = (
        prepared.withColumn(_MS, ms)  # the last column: events carry their time as e[-1]
        .withColumn(_WM, F.timestamp_millis(F.coalesce(F.col(_MS), F.lit(_OLDEST_MS))))
        .withWatermark(_WM, f"{delay} milliseconds")
        .drop(_WM)
    )
    processor = _StreamProcessor(matcher, ttl)
    wire = _INTERNAL_SCHEMA if matcher.mode == "default" else out_schema
    return prepared.groupBy(*group_cols).transformWithState(processor, wire, "Append", "EventTime")


# ----------------------------------------------------------------------------- the command line hook


class CliResults(Iterator[dict[str, Any]]):
    """What :func:`run_cli` returns: an iterator of result records (``events``: not counted, None)."""

    events: int | None = None

    def __init__(self, rows: Iterator[Row], stop: Callable[[], None] | None) -> None:
        self._rows = rows
        self._stop = stop

    def __next__(self) -> dict[str, Any]:
        try:
            row = next(self._rows)
        except StopIteration:
            self.close()
            raise
        record: dict[str, Any] = {"kind": row.kind, "key": row.key, "timestamp": row.timestamp}
        record.update(json.loads(row.record))
        return record

    def close(self) -> None:
        """Stop the Spark session if :func:`run_cli` started it."""
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()


def _cli_session() -> tuple[SparkSession, bool]:
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(os.environ.get("FLOWCEP_SPARK_MASTER", "local[*]"))
        .appName("flowcep")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)))
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def run_cli(
    pattern: Any,
    input_path: str,
    fmt: str | None,
    key: str | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str,
    select: Callable[[Any], Any] | None,
) -> CliResults:
    """``flowcep run --engine spark``: a batch run over one file; yields the CLI's JSON records.

    Records are ``{"kind", "key", "timestamp"}`` plus ``"match"`` ({step: [row dicts]}), or
    ``"value"`` (``select(match)``, when given) for matches, ``"match"`` for timeouts, ``"event"``
    (and ``"error"``) for late and invalid rows; ordered by timestamp, then key. ``fmt`` is
    ``csv``, ``jsonl`` or ``parquet``. The session is the active one, else a local one (UTC)
    that is stopped when the iterator is exhausted or closed.
    """
    spark, own = _cli_session()
    try:
        fmt = (fmt or "").lower()
        if fmt == "csv":
            df = spark.read.option("header", "true").option("inferSchema", "true").csv(input_path)
        elif fmt in ("jsonl", "json", "ndjson"):
            df = spark.read.json(input_path)
        elif fmt == "parquet":
            df = spark.read.parquet(input_path)
        else:
            raise ValueError(f"the spark engine reads csv, jsonl or parquet, not {fmt!r}")
        key_names = [key] if key else None
        _check_columns(df, key_names, timestamp)
        delay = duration_ms(out_of_orderness, "out_of_orderness")
        out = _build(df, pattern, key_names, timestamp, delay, None, "output", "cli", select, _CLI_SCHEMA)
        rows = out.orderBy(F.col("timestamp").asc_nulls_first(), F.col("key").asc_nulls_first(), "kind")
        return CliResults(rows.toLocalIterator(), spark.stop if own else None)
    except BaseException:
        if own:
            spark.stop()
        raise
