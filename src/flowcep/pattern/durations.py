"""Durations as users write them, read to integer milliseconds: the one reader behind
``within``, the quantifier windows, the runtime's ``out_of_orderness``, the command line's
``--out-of-orderness`` and the Spark connector's durations.

Accepted (docs/semantics.md §4, "Durations"):

* a ``datetime.timedelta`` (sub-millisecond parts truncated towards zero, as Java's
  ``Duration.toMillis`` does);
* an int: milliseconds, the unit of Flink's ``Duration.ofMillis`` and of flowcep's timestamps;
  a float only when it is a whole number of milliseconds (``10.0``): a number never means
  seconds, so ``within(10.5)`` is refused rather than read as 10 ms or 10.5 s;
* text: milliseconds as digits (``"500"``); a number with a unit (``"500ms"``, ``"10 s"``,
  ``"1.5s"``, ``"10 seconds"``, ``"2 min"``, ``"1 hour"``, ``"1d"``) or several
  (``"1h30m"``, ``"1h 30m"``); ISO-8601 as Java's ``Duration.parse`` writes it (``"PT5M"``,
  ``"PT0.5S"``, ``"P1DT2H"``). Units are case-insensitive; a sign may lead the whole text.

Fractions are exact (``"0.3s"`` is 300 ms) and sub-millisecond parts are truncated towards zero.
Negative durations are refused where a negative one means nothing (a watermark delay); the
windows of ``within`` and the quantifiers take them, as Flink does: a window of at most 0 ms is
no window (docs/semantics.md).
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from fractions import Fraction
from typing import Any, Union

from flowcep.pattern.exceptions import IllegalArgumentException

Duration = Union[timedelta, int, float, str]  # (not timedelta | int: Python 3.9, PyPy)

_ONE_MS = timedelta(milliseconds=1)
_NUMBER = r"\d+(?:\.\d+)?"
_UNIT_MS = {
    "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip
_SIGNED = re.compile(r"\s*([+-]?)\s*(.*?)\s*", re.DOTALL)
_DIGITS = re.compile(r"\d+")
_PART = re.compile(rf"({_NUMBER})\s*([a-z]+)\s*", re.IGNORECASE)
_ISO = re.compile(
    rf"P(?:({_NUMBER})D)?(?:T(?:({_NUMBER})H)?(?:({_NUMBER})M)?(?:({_NUMBER})S)?)?", re.IGNORECASE
)
_ISO_UNITS_MS = (86_400_000, 3_600_000, 60_000, 1000)
FORMS = "500 (ms), '500ms', '5s', '1.5s', '10 seconds', '2 min', '1h30m', 'PT5M' or a timedelta"


def parse_duration(value: Any, what: str = "duration", *, negative: bool = False) -> int:
    """Milliseconds for ``value`` (see the module docstring); ``what`` names it in errors.

    A value of another type raises ``TypeError``, unreadable text ``ValueError``, and a negative
    duration, unless ``negative`` allows it, ``IllegalArgumentException`` (a ``ValueError``).
    """
    if isinstance(value, timedelta):
        ms = value // _ONE_MS if value >= timedelta(0) else -(-value // _ONE_MS)
        below_zero = value < timedelta(0)
    elif isinstance(value, bool):
        raise TypeError(f"{what}: a boolean ({value!r}) is not a duration")
    elif isinstance(value, int):
        ms = value
        below_zero = ms < 0
    elif isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise TypeError(
                f"{what}: {value!r} is not a whole number of milliseconds (a number is milliseconds; "
                f"for seconds write '{value}s' or timedelta(seconds={value}))"
            )
        ms = int(value)
        below_zero = ms < 0
    elif isinstance(value, str):
        exact = _text_ms(value, what)
        ms = math.trunc(exact)
        below_zero = exact < 0
    else:
        raise TypeError(f"{what}: a {type(value).__name__} ({value!r}) is not a duration; write {FORMS}")
    if below_zero and not negative:
        shown = f"{ms} ms" if isinstance(value, int) else f"{value!r} ({ms} ms)"
        raise IllegalArgumentException(f"{what} cannot be negative: {shown}")
    return ms


def _text_ms(value: str, what: str) -> Fraction:
    """The exact milliseconds ``value`` writes."""
    signed = _SIGNED.fullmatch(value)
    assert signed is not None  # (the pattern matches any text)
    sign, text = signed.groups()
    ms = _unsigned_text_ms(text)
    if ms is None:
        raise ValueError(f"{what}: cannot read {value!r} as a duration; write {FORMS}")
    return -ms if sign == "-" else ms


def _unsigned_text_ms(text: str) -> Fraction | None:
    if _DIGITS.fullmatch(text):
        return Fraction(int(text))
    iso = _ISO.fullmatch(text)
    if iso is not None:
        if not any(iso.groups()):
            return None  # "P", "PT": no part
        return sum(
            (Fraction(part) * unit for part, unit in zip(iso.groups(), _ISO_UNITS_MS) if part), Fraction(0)
        )
    total = Fraction(0)
    pos = 0
    for part in _PART.finditer(text):
        unit = _UNIT_MS.get(part.group(2).lower())
        if part.start() != pos or unit is None:
            return None
        total += Fraction(part.group(1)) * unit
        pos = part.end()
    return total if pos and pos == len(text) else None


def to_millis(d: Duration | None) -> int | None:
    """``parse_duration`` of ``d``, refusing negatives; None passes through."""
    return None if d is None else parse_duration(d)


def window_millis(d: Duration | None) -> int | None:
    """``parse_duration`` for the windows of ``within`` and the quantifiers, which Flink also
    takes negative: a window of at most 0 ms is no window at all. None passes through."""
    return None if d is None else parse_duration(d, "window", negative=True)
