"""What the operator emits: ``Output`` records, ``BadRecord`` and ``BadRecordError``, and the
``HeldBackMatchesWarning`` of matches that never come out."""

from __future__ import annotations

from typing import Any, Final

import attrs

MATCH: Final = "match"
TIMEOUT: Final = "timeout"
LATE: Final = "late"
BAD_RECORD: Final = "bad_record"
DROPPED: Final = "dropped"

KINDS: Final = (MATCH, TIMEOUT, LATE, BAD_RECORD, DROPPED)

# stages at which a record can be rejected
STAGE_TIMESTAMP: Final = "timestamp"
STAGE_KEY: Final = "key"
STAGE_CONDITION: Final = "condition"


@attrs.frozen(slots=True)
class Output:
    """One result of the operator.

    ``kind`` is ``"match"`` (``value``: dict step name -> events, in pattern order; ``timestamp``: the
    time the match was produced), ``"timeout"`` (``value``: the partial match; ``timestamp``: the
    timeout time), ``"late"`` (``value``: the event; ``timestamp``: its timestamp), ``"bad_record"``
    (``value``: a ``BadRecord``; ``timestamp``: the record's timestamp if known, else None) or
    ``"dropped"`` (``value``: a ``DroppedPartialMatch`` of the partial-match limit; ``timestamp``:
    the time it was dropped at).
    """

    kind: str
    key: Any
    value: Any
    timestamp: int | None


# Output's slot descriptors: setting a frozen attrs instance's fields through them is a C call
# each, where attrs' __init__ looks up and calls object.__setattr__ per field
_new = object.__new__
_set_kind = Output.__dict__["kind"].__set__
_set_key = Output.__dict__["key"].__set__
_set_value = Output.__dict__["value"].__set__
_set_timestamp = Output.__dict__["timestamp"].__set__


def make_output(kind: str, key: Any, value: Any, timestamp: int | None) -> Output:
    """``Output(kind, key, value, timestamp)`` for the operator's hot path: the same frozen
    record, made through the slot descriptors above, without attrs' ``__init__`` (docs/runtime.md
    §8)."""
    out: Output = _new(Output)
    _set_kind(out, kind)
    _set_key(out, key)
    _set_value(out, value)
    _set_timestamp(out, timestamp)
    return out


@attrs.frozen(slots=True)
class BadRecord:
    """A record the operator could not handle: the record, the problem, and where it happened.

    ``stage`` is ``"timestamp"`` (timestamp extractor raised or returned a non-integer), ``"key"``
    (key extractor raised or returned an unhashable key) or ``"condition"`` (a pattern condition
    raised; ``step`` names the pattern step).
    """

    record: Any
    error: str
    stage: str
    step: str | None = None


class BadRecordError(ValueError):
    """Raised (``on_error="raise"``) for records the operator cannot handle.

    The failing call first finishes its work, so the operator stays consistent: bad records are
    dropped, other records and keys are processed as usual. ``bad_record`` is the first bad
    record (``bad_records`` all of them, in order); ``outputs`` holds everything the call produced,
    so that nothing is lost.
    """

    def __init__(
        self,
        bad_record: BadRecord,
        key: Any = None,
        outputs: list[Output] | None = None,
        bad_records: list[BadRecord] | None = None,
    ) -> None:
        self.bad_record = bad_record
        self.bad_records: list[BadRecord] = bad_records if bad_records is not None else [bad_record]
        self.key = key
        self.outputs: list[Output] = outputs if outputs is not None else []
        message = describe(bad_record)
        if len(self.bad_records) > 1:
            message += f" (and {len(self.bad_records) - 1} more bad records in this call)"
        super().__init__(message)

    @property
    def record(self) -> Any:
        return self.bad_record.record

    @property
    def stage(self) -> str:
        return self.bad_record.stage

    @property
    def step(self) -> str | None:
        return self.bad_record.step


class HeldBackMatchesWarning(UserWarning):
    """At the end of input (``flush``), completed matches were still held back by a skip strategy
    behind an earlier partial match that never closed (a pattern without a window): they never
    come out, as in Flink. ``CepOperator.stats()["held_back_matches"]`` counts them at any time."""


def describe(bad: BadRecord) -> str:
    """A one-line human description of a bad record."""
    where = f"pattern step {bad.step!r}" if bad.step is not None else f"the {bad.stage} stage"
    return f"bad record {_short_repr(bad.record)} at {where}: {bad.error}"


def _short_repr(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not hide the real problem
        text = f"<{type(value).__name__} with failing repr: {exc!r}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exc_text(exc: BaseException) -> str:
    """An exception as ``Type: message`` (or ``Type``), as bad records describe their cause."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
