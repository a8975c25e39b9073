"""Result rows as JSON text: the ``events`` column of the Spark connector and of local DataFrames.

Pure Python (no engine imported), so that every connector writes the same JSON: timestamps and
dates in ISO-8601, decimals as numbers, binary as base64, NaN and infinities as null.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any


def json_default(value: Any) -> Any:
    """``json.dumps`` fallback for row values."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if hasattr(value, "__iter__"):
        return list(value)
    return repr(value)


def _encoder() -> Callable[[Any], str]:
    """One encoder for every call: ``json.dumps`` with options builds a new one each time, and
    ``JSONEncoder.encode`` its C function (together ~2 µs of a match's 7). The C function is
    private to the json module; without it (not CPython), the encoder's own ``encode``."""
    try:
        from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - not CPython
        c_make_encoder = None
    if c_make_encoder is None:  # pragma: no cover - not CPython
        return json.JSONEncoder(default=json_default, ensure_ascii=False, allow_nan=False).encode
    # no circular-reference markers (rows are trees), not sorted, no skipped keys, no NaN
    chunks = c_make_encoder(None, json_default, encode_basestring, None, ": ", ", ", False, False, False)
    return lambda value: "".join(chunks(value, 0))


_ENCODE = _encoder()


def dumps(value: Any) -> str:
    """JSON text of a row value; NaN and infinities (which JSON lacks) as null."""
    try:
        return _ENCODE(value)
    except ValueError:
        return json.dumps(_no_nan(value), default=json_default, ensure_ascii=False)


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, tuple) and hasattr(value, "asDict"):  # a pyspark Row: by column name
        return _no_nan(value.asDict(True))
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value


def _float_text(value: float) -> str:
    return float.__repr__(value) if math.isfinite(value) else "null"


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


def _null_text(value: None) -> str:
    return "null"


# each plain type's text (encode_basestring: the C function on CPython)
_VALUE_TEXT: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _float_text,
    bool: _bool_text,
    type(None): _null_text,
}


def row_encoder(fields: tuple[str, ...], extra: int = 0) -> Callable[[Any], str] | None:
    """A function giving ``dumps(dict(zip(fields, row)))`` for a row of ``len(fields) + extra``
    items (the last ``extra`` left out), without the dict: each value of a plain type (text,
    integer, float, boolean, null) written by its own small function, any other through
    ``dumps``; the same text. None when two fields share a name (the dict would keep one).

    The function is generated for the fields: one unpacking and one ``%`` format, about half
    the time of building the dict and encoding it (docs/spark.md)."""
    if len(set(fields)) != len(fields):
        return None
    items = [f"v{i}" for i in range(len(fields))] + ["_"] * extra
    template = "{" + ", ".join(dumps(name).replace("%", "%%") + ": %s" for name in fields) + "}"
    # (each value: its type's function, else dumps)
    values = "".join(f"(known.get(type(v{i})) or other)(v{i}), " for i in range(len(fields)))
    source = (
        "def encode(row, known=known, other=other):\n"
        f"    [{', '.join(items)}] = row\n"
        f"    return {template!r} % ({values})\n"
    )
    namespace: dict[str, Any] = {"known": _VALUE_TEXT, "other": dumps}
    exec(compile(source, f"<flowcep row_encoder {len(fields)} fields>", "exec"), namespace)  # noqa: S102
    encode: Callable[[Any], str] = namespace["encode"]
    return encode
