"""The run-time helpers compiled expressions call: SQL arithmetic, aggregates, scalar functions.

NULL (None) in gives NULL out, except where SQL says otherwise (COALESCE, COUNT). Integer
arithmetic follows Java's, as Flink SQL computes it: ``/`` and ``%`` on two integers truncate
toward zero, and AVG over integers is an integer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def java_div(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if _is_int(a) and _is_int(b):
        if b == 0:
            raise ZeroDivisionError("division by zero")
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a / b


def java_mod(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if _is_int(a) and _is_int(b):
        if b == 0:
            raise ZeroDivisionError("division by zero")
        return a - b * java_div(a, b)
    return math.fmod(a, b)


def concat(*args: Any) -> Any:
    if any(a is None for a in args):
        return None
    return "".join(a if isinstance(a, str) else str(a) for a in args)


def agg_sum(values: Sequence[Any]) -> Any:
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def agg_avg(values: Sequence[Any]) -> Any:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return java_div(sum(values), len(values))


def agg_min(values: Sequence[Any]) -> Any:
    values = [v for v in values if v is not None]
    return min(values) if values else None


def agg_max(values: Sequence[Any]) -> Any:
    values = [v for v in values if v is not None]
    return max(values) if values else None


def agg_count(values: Sequence[Any]) -> int:
    return sum(1 for v in values if v is not None)


AGGREGATE_FUNCTIONS: dict[str, Callable[[Sequence[Any]], Any]] = {
    "SUM": agg_sum,
    "AVG": agg_avg,
    "MIN": agg_min,
    "MAX": agg_max,
    "COUNT": agg_count,
}


def like_regex(pattern: str, escape: str | None = None) -> re.Pattern[str]:
    """The regular expression of a LIKE pattern, matched against the whole string."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _nulls_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any) -> Any:
        return None if any(a is None for a in args) else fn(*args)

    wrapped.__name__ = fn.__name__
    return wrapped


def _substring(s: str, start: int, length: int | None = None) -> str:
    begin = max(start - 1, 0) if start > 0 else max(len(s) + start, 0)
    return s[begin:] if length is None else s[begin : begin + max(length, 0)]


def _coalesce(*args: Any) -> Any:
    for a in args:
        if a is not None:
            return a
    return None


def _to_int(x: Any) -> int:
    if isinstance(x, str):
        return int(x.strip())
    return int(x)  # int() truncates toward zero, as Java's cast does


def _to_bool(x: Any) -> bool:
    if isinstance(x, str):
        text = x.strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ValueError(f"cannot cast {x!r} to BOOLEAN")
    return bool(x)


def _to_str(x: Any) -> str:
    if isinstance(x, bool):
        return "TRUE" if x else "FALSE"
    return str(x)


# name -> (function, least and most arguments)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "UPPER": (_nulls_out(str.upper), 1, 1),
    "LOWER": (_nulls_out(str.lower), 1, 1),
    "TRIM": (_nulls_out(str.strip), 1, 1),
    "CHAR_LENGTH": (_nulls_out(len), 1, 1),
    "CHARACTER_LENGTH": (_nulls_out(len), 1, 1),
    "SUBSTRING": (_nulls_out(_substring), 2, 3),
    "CONCAT": (concat, 1, 255),
    "ABS": (_nulls_out(abs), 1, 1),
    "MOD": (java_mod, 2, 2),
    "POWER": (_nulls_out(lambda a, b: float(a) ** b), 2, 2),
    "SQRT": (_nulls_out(math.sqrt), 1, 1),
    "FLOOR": (_nulls_out(lambda x: x if isinstance(x, int) else float(math.floor(x))), 1, 1),
    "CEIL": (_nulls_out(lambda x: x if isinstance(x, int) else float(math.ceil(x))), 1, 1),
    "COALESCE": (_coalesce, 1, 255),
}

CASTS: dict[str, Callable[[Any], Any]] = {
    "INT": _nulls_out(_to_int),
    "BIGINT": _nulls_out(_to_int),
    "DOUBLE": _nulls_out(float),
    "STRING": _nulls_out(_to_str),
    "BOOLEAN": _nulls_out(_to_bool),
}
