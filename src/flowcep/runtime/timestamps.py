"""Event times and clocks: the range of Flink timestamps, the check of one, the processing-time clock."""

from __future__ import annotations

import math
import operator as _op
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from flowcep.pattern.context import wall_clock_millis

LONG_MIN: Final = -(2**63)
# not 2**63 - 1: on PyPy that is a big-int object (arithmetic on one that overflowed stays one),
# and storing it in an instance's int attribute (flush's watermark) turns that class's unboxed
# int attributes into boxed ones for the rest of the process, and every compiled trace that read
# one is compiled again. ~LONG_MIN is a machine-sized int object there.
LONG_MAX: Final = ~LONG_MIN


class TimestampError(Exception):
    """A value that is not a timestamp (the operator turns it into a bad record or a ValueError)."""


def to_timestamp(value: Any) -> int:
    """Validate a timestamp: an int of milliseconds in Java's long range.

    ``bool`` is refused; a float is accepted only when it is a whole number (``5.0`` -> ``5``);
    integer-like objects (numpy integers) go through ``__index__``.
    """
    kind = type(value)
    if kind is not int:
        if kind is bool:
            raise TimestampError(f"a bool ({value!r}) is not a timestamp; expected an int of milliseconds")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise TimestampError(
                    f"timestamp {value!r} is not a whole number of milliseconds; expected an int"
                )
            value = int(value)
        elif isinstance(value, datetime):
            raise TimestampError(
                f"timestamp {value!r} is a datetime; return epoch milliseconds, e.g. int(dt.timestamp() * 1000)"
            )
        else:
            try:
                value = _op.index(value)
            except TypeError:
                raise TimestampError(
                    f"timestamp {value!r} ({kind.__name__}) is not an int of milliseconds"
                ) from None
    if not LONG_MIN <= value <= LONG_MAX:
        raise TimestampError(f"timestamp {value} is outside the 64-bit range of Flink timestamps")
    if value == LONG_MAX:
        return LONG_MAX  # Flink's end-of-input watermark, as the one object that stays small on PyPy
    return value  # type: ignore[no-any-return]


class ProcessingClock:
    """Processing time as the operator sees it: ``read()``'s milliseconds, checked, never running
    backwards (``last``: the latest time it gave, part of a snapshot)."""

    __slots__ = ("read", "last")

    def __init__(self, read: Callable[[], int] | None) -> None:
        self.read: Callable[[], int] = read if read is not None else wall_clock_millis
        self.last = LONG_MIN

    def now(self) -> int:
        try:
            now = to_timestamp(self.read())
        except TimestampError as exc:
            raise ValueError(f"the processing-time clock returned an invalid time: {exc}") from None
        if now < self.last:
            now = self.last
        self.last = now
        return now
