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
