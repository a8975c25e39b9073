"""Timestamps and durations as users write them on a command line or in a data file.

Timestamps become integer milliseconds since the Unix epoch, the unit Flink uses for event
time. Accepted: integers (already milliseconds), integral floats, digit strings, and ISO-8601
date-times (``2026-03-02T09:30:00Z``, ``2026-03-02 09:30:00.250+01:00``, ``2026-03-02``);
a date-time without an offset is read as UTC. On Python before 3.11 (PyPy 3.9) ISO-8601 is read
by that version's ``datetime.fromisoformat`` plus a ``Z`` offset and 1 to 6 fraction digits;
the basic format (``20260302T093000``) needs Python 3.11.

Durations become integer milliseconds, read by ``flowcep.pattern.durations`` as everywhere:
``250`` (ms), ``250ms``, ``5s``, ``1.5s``, ``10 seconds``, ``2m``/``2min``, ``1h``, ``1d``,
combinations such as ``1h30m``, ISO-8601 ``PT5M``, or a ``timedelta``.
"""

from __future__ import annotations

import math
import re
import sys
from datetime import date, datetime, timedelta, timezone
from typing import Any

from flowcep.pattern import durations

UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_INT_RE = re.compile(r"[+-]?\d+")


def parse_timestamp(value: Any) -> int:
    """Milliseconds since the epoch for ``value``; ``ValueError`` says why it cannot be read."""
    if isinstance(value, bool):  # bool is an int subclass; a True timestamp is surely a mistake
        raise ValueError(f"a boolean ({value!r}) is not a timestamp")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError(f"{value!r} is not a whole number of milliseconds")
    if isinstance(value, datetime):
        return _datetime_ms(value)
    if isinstance(value, date):
        return _datetime_ms(datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("the timestamp is empty")
        if _INT_RE.fullmatch(text):
            return int(text)
        try:
            parsed = _fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"{value!r} is neither milliseconds since the epoch nor an ISO-8601 date-time"
            ) from None
        return _datetime_ms(parsed)
    if value is None:
        raise ValueError("the timestamp is missing (null)")
    raise ValueError(f"a {type(value).__name__} ({value!r}) is not a timestamp")


if sys.version_info >= (3, 11):
    _fromisoformat = datetime.fromisoformat
else:
    _FRACTION_RE = re.compile(r"(T|\s)(\d\d:\d\d:\d\d)\.(\d{1,6})(?!\d)")

    def _fromisoformat(text: str) -> datetime:
        """What 3.11's ``fromisoformat`` reads of the extended format, on 3.9 and 3.10."""
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        text = _FRACTION_RE.sub(lambda m: f"{m[1]}{m[2]}.{m[3]:0<6}", text, count=1)
        return datetime.fromisoformat(text)


def _datetime_ms(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // _MS


def format_timestamp(ms: int | None) -> str:
    """ISO-8601 UTC text for a millisecond timestamp (for humans; JSON output keeps the int)."""
    if ms is None:
        return "-"
    try:
        dt = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return str(ms)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"


def parse_duration(value: Any, what: str = "duration") -> int:
    """Milliseconds for ``value`` (``flowcep.pattern.durations``, the reader every API shares);
    ``ValueError`` on anything else or a negative duration."""
    try:
        return durations.parse_duration(value, what)
    except TypeError as e:
        raise ValueError(str(e)) from None


def format_duration(ms: int | None) -> str:
    """Short text for a duration in ms: ``1h``, ``15m``, ``90s``, ``250ms``, ``1h30m``."""
    if ms is None:
        return "-"
    if ms == 0:
        return "0ms"
    parts = []
    rest = ms
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    if rest:
        parts.append(f"{rest}ms")
    return "".join(parts)
