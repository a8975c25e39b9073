"""Streaming rows in one text column: what Spark hands transformWithState, and how to read it back.

PySpark's row-based ``transformWithState`` turns every cell of its input into a Python value
with its own Arrow scalar (about 1.5 µs a cell on this machine kind), so a row of six columns
costs more than matching it. The connector therefore packs the event's plain columns (strings,
booleans, integers, floating point) into one JSON text column on the JVM side (``to_json``) and
reads it back with ``json.loads``, one cell and one C call per row. Columns of other types
(timestamps, dates, decimals, binary, nested) travel as their own cells, as before, so they keep
the values the Arrow conversion gives them.

The values read back equal Spark's own: integers are exact in JSON, floats are written as Java's
round-tripping ``Double.toString`` (32-bit floats are widened to double first, exactly), nulls
are kept (``ignoreNullFields=false``), and the non-finite values Spark writes as the strings
``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` are turned back into floats.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .values import PACKED_COLUMN, quote

_EXACT = (T.StringType, T.BooleanType, T.LongType, T.IntegerType, T.ShortType, T.ByteType)
_FLOATING = (T.DoubleType, T.FloatType)

Unpack = Callable[[tuple[Any, ...]], tuple[Any, ...]]


class RowPacking:
    """Which of an event's items travel packed, and how a received row becomes the event's items.

    ``types`` are the Spark types of the event's items in order (the user's columns, then the
    event time). Packing pays when at least two items can be packed; otherwise nothing is.
    """

    __slots__ = ("floating", "loose", "packed", "widened")

    def __init__(self, types: Sequence[T.DataType]) -> None:
        packable = [i for i, t in enumerate(types) if isinstance(t, _EXACT + _FLOATING)]
        if len(packable) < 2:
            packable = []
        self.packed = tuple(packable)
        self.floating = tuple(i for i in packable if isinstance(types[i], _FLOATING))
        self.widened = tuple(i for i in packable if isinstance(types[i], T.FloatType))
        self.loose = tuple(i for i in range(len(types)) if i not in packable)

    @property
    def enabled(self) -> bool:
        return bool(self.packed)

    def columns(self, names: Sequence[str]) -> list[Column]:
        """The columns that carry the event: the packed text first, then the loose items."""
        if not self.packed:
            return [F.col(quote(names[i])) for i in range(len(names))]
        fields = []
        for n, i in enumerate(self.packed):
            c = F.col(quote(names[i]))
            if i in self.widened:
                c = c.cast("double")  # exact; Float.toString would not read back as the same double
            fields.append(c.alias(str(n)))
        packed = F.to_json(F.struct(*fields), {"ignoreNullFields": "false"}).alias(PACKED_COLUMN)
        return [packed, *(F.col(quote(names[i])) for i in self.loose)]

    def unpacker(self) -> Unpack:
        """A function from a received row (without its bucket) to the event's items."""
        if not self.packed:
            return tuple
        width = len(self.packed) + len(self.loose)
        loads = json.loads
        get = itemgetter(*(str(n) for n in range(len(self.packed))))
        floating = tuple(self.packed.index(i) for i in self.floating)

        def fix(values: tuple[Any, ...]) -> tuple[Any, ...]:
            # Spark writes non-finite doubles as strings; only then is a float item a str
            for n in floating:
                if values[n].__class__ is str:
                    values = (*values[:n], float(values[n]), *values[n + 1 :])
            return values

        if not self.loose:
            if not floating:
                return lambda row: get(loads(row[0]))
            return lambda row: fix(get(loads(row[0])))

        # mixed: put the packed and loose items back in the event's order
        order = [0] * width
        for n, i in enumerate(self.packed):
            order[i] = n
        for n, i in enumerate(self.loose):
            order[i] = len(self.packed) + n
        arrange = itemgetter(*order)

        def mixed(row: tuple[Any, ...]) -> tuple[Any, ...]:
            packed = get(loads(row[0]))
            if floating:
                packed = fix(packed)
            return arrange((*packed, *row[1:]))

        return mixed
