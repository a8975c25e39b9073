"""Local DataFrames in and out: ``detect`` over pandas, polars and Arrow, in this process.

Every input goes through Arrow (pandas and polars convert to it, record batches are it), rows
reach the conditions as dicts of their columns, and the results come back as the input's kind of
frame, in the Spark connector's default schema (``key``, ``kind``, ``timestamp``, ``first_ts``,
``last_ts``, ``events``) or in the user's ``select`` rows. Matching is ``CEP.pattern``'s: rows in
input order, the watermark ``out_of_orderness`` behind the latest time, a final flush.

Needs ``pyarrow`` (the extra ``flowcep[frames]``), and pandas or polars for their frames.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowcep.connectors.jsontext import dumps
from flowcep.connectors.selecting import select_arity
from flowcep.pattern.durations import parse_duration
from flowcep.runtime import CepOperator

__all__ = ["DEFAULT_SCHEMA", "InvalidRowError", "detect"]

_TIME = pa.timestamp("ms", tz="UTC")
#: The output without ``select``: the Spark connector's default schema, times in UTC.
DEFAULT_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("kind", pa.string()),
        ("timestamp", _TIME),
        ("first_ts", _TIME),
        ("last_ts", _TIME),
        ("events", pa.string()),
    ]
)
# output times outside Spark's timestamp range (the final flush's watermark) are null, as there
_OLDEST_MS = -62135596800000  # 0001-01-01T00:00:00Z
_NEWEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class InvalidRowError(ValueError):
    """A row with a null key or event time, or on which a condition raised, with ``on_error="raise"``."""


def detect(
    data: Any,
    pattern: Any,
    *,
    key: str | list[str] | None,
    timestamp: str,
    out_of_orderness: Any = 0,
    select: Callable[..., Any] | None = None,
    output_schema: pa.Schema | list[str] | None = None,
    on_error: str = "side_output",
) -> Any:
    """The pattern's results over the rows of ``data``, as a frame of the same library.

    ``data``: a pandas or polars DataFrame, a ``pyarrow.Table`` or ``RecordBatch`` (result: that
    kind of frame; a ``pyarrow.Table`` for Arrow), or a ``RecordBatchReader`` or any iterable of
    record batches (result: a ``pyarrow.Table``; the batches are read one at a time).
    ``timestamp``: a timestamp, date or integer (epoch ms) column. ``key``: a column, a list of
    columns, or None (one key). ``select(match)`` or ``select(kind, key, events)`` returns a
    tuple, a dict, a list of those, or None; ``output_schema`` names its columns (a
    ``pyarrow.Schema``, or a list of names whose types Arrow infers; needed for tuples).
    """
    if on_error not in ("side_output", "raise"):
        raise ValueError(f"on_error must be 'side_output' or 'raise', got {on_error!r}")
    if output_schema is not None and select is None:
        raise ValueError("output_schema goes with select")
    batches, back = _batches(data)
    keys = [key] if isinstance(key, str) else list(key) if key is not None else None
    run = _Run(
        pattern, keys, timestamp, parse_duration(out_of_orderness or 0, "out_of_orderness"), select, on_error
    )
    out: list[Any] = []
    for batch in batches:
        run.batch(batch, out)
    run.finish(out)
    return back(_table(out, select, output_schema))


def _batches(data: Any) -> tuple[Iterable[pa.RecordBatch], Callable[[pa.Table], Any]]:
    """The input as record batches, and how to turn the result table back into its library."""
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False).to_batches(), _to_pandas
    if module == "polars":
        return data.to_arrow().to_batches(), _to_polars
    if isinstance(data, pa.Table):
        return data.to_batches(), _same
    if isinstance(data, pa.RecordBatch):
        return [data], _same
    if isinstance(data, (pa.RecordBatchReader, Iterator)) or hasattr(data, "__iter__"):
        return _checked_batches(data), _same
    raise TypeError(
        f"detect takes a pandas or polars DataFrame, a pyarrow Table or RecordBatch, or an iterable "
        f"of record batches; got {type(data).__name__}"
    )


def _checked_batches(batches: Iterable[Any]) -> Iterator[pa.RecordBatch]:
    for i, batch in enumerate(batches):
        if not isinstance(batch, pa.RecordBatch):
            raise TypeError(f"item {i} of the input is a {type(batch).__name__}, not a pyarrow.RecordBatch")
        yield batch


def _same(table: pa.Table) -> pa.Table:
    return table


def _to_pandas(table: pa.Table) -> Any:
    return table.to_pandas()


def _to_polars(table: pa.Table) -> Any:
    import polars

    return polars.from_arrow(table)


def _event_times(batch: pa.RecordBatch, name: str) -> list[int | None]:
    """Epoch milliseconds of the event-time column (null stays null)."""
    try:
        column = batch.column(name)
    except KeyError:
        raise KeyError(f"no timestamp column {name!r}; the columns are {batch.schema.names}") from None
    kind = column.type
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        column = pc.cast(column, pa.timestamp("ms", tz=getattr(kind, "tz", None)), safe=False)
    elif not pa.types.is_integer(kind):
        raise TypeError(
            f"the timestamp column {name!r} has type {kind}; use a timestamp, date or integer (epoch ms) column"
        )
    return pc.cast(column, pa.int64()).to_pylist()  # type: ignore[no-any-return]


def _rows(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    """The rows of a batch as dicts of their columns' Python values."""
    names = batch.schema.names
    return [dict(zip(names, values)) for values in zip(*[_values(c) for c in batch.columns])]


# a UTC timestamp column through timedelta: pyarrow makes each value with a zoneinfo, ~20 µs a value
_UNITS = {"s": 1_000_000, "ms": 1_000, "us": 1}
_UTC_NAMES = ("UTC", "Etc/UTC", "+00:00", "Z")


def _values(column: pa.Array) -> list[Any]:
    kind = column.type
    if pa.types.is_timestamp(kind) and kind.unit in _UNITS and kind.tz in _UTC_NAMES:
        factor = _UNITS[kind.unit]
        epoch, delta = _EPOCH, timedelta
        return [
            None if v is None else epoch + delta(microseconds=v * factor)
            for v in column.cast(pa.int64()).to_pylist()
        ]
    return column.to_pylist()  # type: ignore[no-any-return]


def _ms(value: Any) -> int:
    """An event's time from its column's Python value (what ``_event_times`` computed in Arrow)."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return (value - _EPOCH) // _MS_DELTA
    if isinstance(value, date):
        return (value - _EPOCH.date()).days * 86_400_000
    return int(value)


_MS_DELTA = timedelta(milliseconds=1)


class _Run:
    """One operator over all batches, and its outputs as result rows."""

    def __init__(
        self,
        pattern: Any,
        keys: list[str] | None,
        timestamp: str,
        out_of_orderness: int,
        select: Callable[..., Any] | None,
        on_error: str,
    ) -> None:
        self.keys = keys
        self.timestamp = timestamp
        self.select = select
        self.arity = select_arity(select) if select is not None else 0
        self.on_error = on_error
        key_by: Callable[[Any], Any] | None = None
        if keys is not None:
            key_by = operator.itemgetter(*keys)  # one column: its value; several: a tuple
        self.op = CepOperator(
            pattern, key_by=key_by, out_of_orderness=out_of_orderness, on_error="side_output"
        )

    def batch(self, batch: pa.RecordBatch, out: list[Any]) -> None:
        times = _event_times(batch, self.timestamp)
        keys = self.keys or []
        missing = [k for k in keys if k not in batch.schema.names]
        if missing:
            raise KeyError(f"no key column(s) {missing}; the columns are {batch.schema.names}")
        process = self.op.process_element
        emit = self.emit
        nulls = batch.column(self.timestamp).null_count + sum(batch.column(k).null_count for k in keys)
        for row, ms in zip(_rows(batch), times):
            if nulls and (ms is None or any(row[k] is None for k in keys)):
                self.invalid(row, ms, out)
                continue
            outputs = process(row, ms)
            if outputs:
                emit(outputs, out)

    def finish(self, out: list[Any]) -> None:
        self.emit(self.op.flush(), out)

    def invalid(self, row: dict[str, Any], ms: int | None, out: list[Any]) -> None:
        if self.keys is not None and any(row[k] is None for k in self.keys):
            reason = f"the key column(s) {', '.join(self.keys)} are null"
        else:
            reason = f"the timestamp column {self.timestamp} is null"
        self.result(self.row_key(row), "invalid", ms, {"invalid": [row]}, ms, ms, out, reason)

    def row_key(self, row: dict[str, Any]) -> Any:
        keys = self.keys
        if keys is None:
            return None
        return row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)

    def emit(self, outputs: Iterable[Any], out: list[Any]) -> None:
        ts_name = self.timestamp
        for o in outputs:
            kind, value = o.kind, o.value
            if kind == "match" or kind == "timeout":
                times = [_ms(e[ts_name]) for events in value.values() for e in events]
                first = min(times) if times else None
                last = max(times) if times else None
                self.result(o.key, kind, o.timestamp, value, first, last, out)
            elif kind == "late":
                self.result(o.key, "late", o.timestamp, {"late": [value]}, o.timestamp, o.timestamp, out)
            else:  # a condition raised on the row
                bad = value
                reason = f"pattern step {bad.step!r}: {bad.error}" if bad.step is not None else bad.error
                ms = o.timestamp
                self.result(o.key, "invalid", ms, {"invalid": [bad.record]}, ms, ms, out, reason)

    def key_text(self, key: Any) -> str | None:
        if self.keys is None or key is None:
            return None
        if len(self.keys) > 1:
            return dumps(list(key))
        return key if isinstance(key, str) else dumps(key) if isinstance(key, dict) else str(key)

    def result(
        self,
        key: Any,
        kind: str,
        ts: int | None,
        value: dict[str, list[Any]],
        first: int | None,
        last: int | None,
        out: list[Any],
        reason: str | None = None,
    ) -> None:
        if kind == "invalid" and self.on_error == "raise":
            raise InvalidRowError(f"flowcep: invalid row: {reason}: {value['invalid'][0]!r}")
        select = self.select
        if select is None:
            doc: dict[str, Any] = dict(value)
            if reason is not None:
                doc["reason"] = reason
            out.append((self.key_text(key), kind, _in_range(ts), first, last, dumps(doc)))
        elif self.arity == 1:
            if kind == "match":
                _add_selected(select(value), out)
        else:
            _add_selected(select(kind, self.key_text(key), value), out)


def _in_range(ms: int | None) -> int | None:
    return ms if ms is not None and _OLDEST_MS <= ms <= _NEWEST_MS else None


def _add_selected(result: Any, out: list[Any]) -> None:
    if result is None:
        return
    if isinstance(result, list):
        for r in result:
            _add_selected(r, out)
    else:
        out.append(result)


def _table(
    out: list[Any], select: Callable[..., Any] | None, schema: pa.Schema | list[str] | None
) -> pa.Table:
    if select is None:
        columns: list[Any] = list(zip(*out)) if out else [() for _ in DEFAULT_SCHEMA]
        return pa.Table.from_arrays(
            [pa.array(c, f.type) for c, f in zip(columns, DEFAULT_SCHEMA)], schema=DEFAULT_SCHEMA
        )
    names = schema.names if isinstance(schema, pa.Schema) else schema
    rows = []
    for r in out:
        if isinstance(r, dict):
            rows.append(r)
        elif names is None:
            raise TypeError(
                f"select returned {r!r}: return a dict, or give output_schema to name a tuple's fields"
            )
        else:
            values = r if isinstance(r, tuple) else (r,)
            if len(values) != len(names):
                raise ValueError(f"select returned {r!r}: {len(values)} values for the columns {names}")
            rows.append(dict(zip(names, values)))
    if isinstance(schema, pa.Schema):
        return pa.Table.from_pylist(rows, schema=schema)
    table = pa.Table.from_pylist(rows)
    return table.select(names) if names is not None and rows else table
