"""JSON-lines output of ``flowcep run`` and the progress/summary lines on stderr.

One JSON object per line, always with ``kind`` (``match``, ``timeout``, ``late`` or
``bad_record``), ``key`` and ``timestamp`` (milliseconds), then:

* ``match``: ``"match": {step: [events...]}``, or ``"value"`` when the pattern file has ``select``;
* ``timeout``: ``"match"`` with the partial match, or ``"value"`` from the file's ``timeout``;
* ``late``: ``"event"``, the event that arrived behind the watermark;
* ``bad_record``: ``"line"`` (where the record was read), ``"event"`` and ``"error"``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from datetime import time as dtime
from decimal import Decimal
from typing import IO, Any

from flowcep.cli_support.inputs import ReadProgress


def to_jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: datetimes as ISO text, sets and tuples as lists, objects as dicts."""
    if isinstance(value, (datetime, date, dtime)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "__attrs_attrs__"):
        return {a.name: getattr(value, a.name) for a in value.__attrs_attrs__}
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "_asdict"):
        return value._asdict()
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    if hasattr(value, "__iter__"):
        return list(value)
    return repr(value)


def _clean_floats(value: Any) -> Any:
    # JSON has no NaN/Infinity; write null rather than invalid JSON.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_floats(v) for v in value]
    return value


def _dumps_checked(obj: Any) -> str:
    try:
        return json.dumps(
            obj, default=to_jsonable, ensure_ascii=False, allow_nan=False, separators=(", ", ": ")
        )
    except ValueError:
        return json.dumps(
            _clean_floats(obj), default=to_jsonable, ensure_ascii=False, separators=(", ", ": ")
        )


# CPython's C encoder, made once: json.dumps makes one per call (with these options), and
# checks every container for cycles, which a cycle fails anyway by recursing too deep; on
# either error, the checked json.dumps above writes what it always wrote. (PyPy has no C
# encoder: an encoder made once, with the same options.)
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
if _C_ENCODER is not None:
    _encode_chunks = _C_ENCODER(
        None, to_jsonable, json.encoder.encode_basestring, None, ": ", ", ", False, False, False
    )

    def _encode(obj: Any) -> str:
        return "".join(_encode_chunks(obj, 0))

else:
    _encode = json.JSONEncoder(  # type: ignore[assignment]
        default=to_jsonable, ensure_ascii=False, allow_nan=False, separators=(", ", ": ")
    ).encode
encode_string = json.encoder.encode_basestring


def dumps(obj: Any) -> str:
    """One compact JSON line (no trailing newline)."""
    try:
        return _encode(obj)
    except (ValueError, RecursionError):  # NaN or infinity; a cycle
        return _dumps_checked(obj)


def result_line(kind: str, key: Any, timestamp: Any, field: str, value: Any) -> str:
    """``dumps({"kind": kind, "key": key, "timestamp": timestamp, field: value}) + "\\n"``,
    for a ``kind`` and ``field`` without characters to escape, made of its parts."""
    if type(key) is str:
        key_text = encode_string(key)
    else:
        key_text = dumps(key)
    ts_text = int.__repr__(timestamp) if type(timestamp) is int else dumps(timestamp)
    return f'{{"kind": "{kind}", "key": {key_text}, "timestamp": {ts_text}, "{field}": {dumps(value)}}}\n'


class ProgressLine:
    """A one-line progress indicator on stderr, redrawn at most every ``interval`` seconds.

    It stays silent for the first ``delay`` seconds, so short inputs print nothing but the summary.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        enabled: bool = True,
        delay: float = 1.0,
        interval: float = 0.25,
        clock: Any = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.clock = clock
        self.start = clock()
        self.delay = delay
        self.interval = interval
        self.next_draw = self.start + delay
        self.drawn = False
        self.width = 0

    def update(self, events: int, counts: Mapping[str, int], read: ReadProgress | None = None) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now < self.next_draw:
            return
        self.next_draw = now + self.interval
        elapsed = max(now - self.start, 1e-9)
        parts = [f"{events:,} events", f"{events / elapsed:,.0f}/s"]
        fraction = read.fraction() if read is not None else None
        if fraction is not None:
            bar_len = 20
            filled = int(fraction * bar_len)
            parts.insert(0, f"[{'#' * filled}{'.' * (bar_len - filled)}] {fraction * 100:3.0f}%")
        parts.append(f"{counts.get('match', 0):,} matches")
        if counts.get("timeout"):
            parts.append(f"{counts['timeout']:,} timeouts")
        if counts.get("late"):
            parts.append(f"{counts['late']:,} late")
        self._draw("  ".join(parts))

    def _draw(self, text: str) -> None:
        pad = max(0, self.width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.width = len(text)
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.drawn = False


def summary_line(events: int, seconds: float, counts: Mapping[str, int]) -> str:
    """The closing summary, e.g. ``flowcep: 1,200 events in 0.05 s (24,000 events/s): 3 matches, ...``."""
    rate = events / seconds if seconds > 0 else float("inf")
    rate_text = f"{rate:,.0f} events/s" if math.isfinite(rate) else "- events/s"

    def n(kind: str, word: str) -> str:
        c = counts.get(kind, 0)
        return f"{c:,} {word}{'' if c == 1 else 'es' if word.endswith('ch') else 's'}"

    parts = [n("match", "match"), n("timeout", "timeout"), f"{counts.get('late', 0):,} late"]
    if counts.get("bad_record"):
        parts.append(n("bad_record", "bad record"))
    if counts.get("dropped"):
        parts.append(f"{counts['dropped']:,} partial matches dropped")
    if counts.get("invalid"):  # the spark engine's name for rows without a usable key or timestamp
        parts.append(f"{counts['invalid']:,} invalid")
    return f"flowcep: {events:,} events in {seconds:.2f} s ({rate_text}): " + ", ".join(parts)
