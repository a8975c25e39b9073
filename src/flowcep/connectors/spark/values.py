"""Row values and times: event time as epoch milliseconds, events as rows, results as JSON."""

from __future__ import annotations

import functools
import keyword
from collections.abc import Callable, Sequence
from datetime import timedelta
from operator import itemgetter
from typing import Any

from flowcep.connectors.jsontext import dumps as dumps  # (its import path in the connector)
from flowcep.pattern.durations import parse_duration

try:  # the C accessor of namedtuple fields: reads the tuple's item, no __getitem__ call
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - not CPython
    _tuplegetter = None

from pyspark.sql import Column, Row
from pyspark.sql import functions as F
from pyspark.sql import types as T

# hidden columns the connector adds to the input; never seen by conditions or select
TS_MS_COLUMN = "__flowcep_ts_ms"  # the event time in epoch ms, after the user's columns
WATERMARK_COLUMN = "__flowcep_watermark"  # streaming: what Spark's watermark is taken on
SEQ_COLUMN = "__flowcep_seq"  # batch: the input order, for ties in event time
BUCKET_COLUMN = "__flowcep_bucket"  # streaming: the key's bucket, the last column
HIDDEN_COLUMNS = (TS_MS_COLUMN, WATERMARK_COLUMN, SEQ_COLUMN, BUCKET_COLUMN)

# the range of Spark timestamps; event times outside it are unparsable, output times outside it null
OLDEST_MS = -62135596800000  # 0001-01-01T00:00:00Z
NEWEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def duration_ms(value: int | float | timedelta | str | None, what: str = "duration") -> int:
    """Milliseconds for ``value`` (``flowcep.pattern.durations``, the reader every API shares):
    an int (ms), a ``timedelta``, or text like ``"10 seconds"``, ``"500ms"``, ``"1h30m"``,
    ``"PT5M"``; None is 0. Negative durations are refused."""
    return 0 if value is None else parse_duration(value, what)


def timestamp_ms(dtype: T.DataType, name: str) -> Column:
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
        ms = F.when(col == F.floor(col), F.expr(f"try_cast({quote(name)} as long)"))
    elif isinstance(dtype, T.StringType):
        digits = col.rlike(r"^\s*[+-]?\d{1,18}\s*$")
        ms = F.when(digits, F.trim(col).cast("long")).otherwise(
            F.unix_millis(F.expr(f"try_cast({quote(name)} as timestamp)"))
        )
    else:
        raise TypeError(
            f"the timestamp column has type {dtype.simpleString()}; use a timestamp, date, "
            "integer (epoch milliseconds) or string (ISO-8601 or epoch milliseconds) column"
        )
    return F.when(ms.between(OLDEST_MS, NEWEST_MS), ms)


def quote(name: str) -> str:
    """A column reference in SQL text (try_cast has no Python function in every 4.x)."""
    return "`" + name.replace("`", "``") + "`"


# ----------------------------------------------------------------------------- events


def item_reader(index: int) -> Any:
    """A descriptor reading item ``index`` of a tuple, without the tuple type's ``__getitem__``.

    ``Row.__getitem__`` is Python code (it also takes column names); ``itemgetter`` on a Row
    calls it, about six times slower than namedtuple's C accessor, which this is on CPython.
    """
    if _tuplegetter is not None:
        return _tuplegetter(index, None)
    return property(itemgetter(index))


@functools.lru_cache(maxsize=256)
def event_class(fields: tuple[str, ...]) -> type[Row]:
    """A ``Row`` subclass whose columns are properties: ``e.amount`` without ``Row.__getattr__``.

    Its tuple carries the connector's event time (ms) as one more, unnamed, last item. Read the
    connector's items with ``tuple.__getitem__(e, i)``: ``e[i]`` runs ``Row.__getitem__``.
    """
    names = list(fields)

    def __reduce__(self: Row) -> tuple[Any, ...]:  # noqa: N807 - pickles into the same class
        return _event, (fields, tuple(self))

    namespace: dict[str, Any] = {"__fields__": names, "__reduce__": __reduce__, "__module__": __name__}
    for i, name in enumerate(fields):
        if name.isidentifier() and not keyword.iskeyword(name) and not hasattr(Row, name):
            namespace[name] = item_reader(i)
    return type("Event", (Row,), namespace)


@functools.lru_cache(maxsize=64)
def result_class(fields: tuple[str, ...]) -> type[Row]:
    """A ``Row`` class for flat result tuples (no ``Row``, list or dict among the values).

    pyspark turns each row a stateful processor returns into a dict with ``asDict(True)``, whose
    recursive walk is Python code per value; a flat result needs none of it.
    """

    def as_dict(self: Row, recursive: bool = False) -> dict[str, Any]:  # noqa: N802 - Row's name
        return dict(zip(fields, self))

    namespace: dict[str, Any] = {"__fields__": list(fields), "asDict": as_dict, "__module__": __name__}
    return type("Result", (Row,), namespace)


def _event(fields: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """An event (a ``Row``) of ``fields`` from ``values`` (unpickling entry point)."""
    return tuple.__new__(event_class(fields), values)


def read_columns(batch: Any, converters: Sequence[Callable[[Any], Any] | None]) -> list[list[Any]]:
    """The first ``len(converters)`` columns of an Arrow batch as Python lists, one C call a
    column (``to_pylist``), each value then through its column's converter (``py_converter``:
    None leaves it as it is)."""
    columns = [batch.column(i).to_pylist() for i in range(len(converters))]
    for i, convert in enumerate(converters):
        if convert is not None:
            columns[i] = [convert(v) for v in columns[i]]
    return columns


def py_converter(dt: T.DataType) -> Callable[[Any], Any] | None:
    """How to turn an Arrow ``to_pylist`` value into what a Spark ``Row`` holds (None: as is)."""
    if isinstance(dt, T.StructType):
        subs = [(f.name, py_converter(f.dataType)) for f in dt.fields]

        def struct(v: Any) -> Any:
            if v is None:
                return None
            return Row(**{n: (c(v[n]) if c is not None else v[n]) for n, c in subs})

        return struct
    if isinstance(dt, T.ArrayType):
        inner = py_converter(dt.elementType)
        if inner is None:
            return None
        return lambda v: None if v is None else [inner(x) for x in v]
    if isinstance(dt, T.MapType):
        kc, vc = py_converter(dt.keyType), py_converter(dt.valueType)

        def mapping(v: Any) -> Any:
            if v is None:
                return None
            return {(kc(k) if kc else k): (vc(x) if vc else x) for k, x in v}

        return mapping
    return None
