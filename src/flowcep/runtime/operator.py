"""The embedded CEP operator: Flink's ``CepOperator`` as a push API.

Event time (the default): every element is checked against the current watermark (``ts <=
watermark`` is late), otherwise buffered per key and timestamp. When the watermark passes
buffered timestamps, each due key runs them in ascending order, each timestamp preceded by
``advance_time(ts)``, equal timestamps in arrival order or stable-sorted by the comparator;
then ``advance_time(watermark)`` times out partial matches and releases pending notFollowedBy
matches. Keys with nothing due are not visited: each key's next due time is indexed (a heap of due
times, the keys due at each in a list).

Processing time: each element is processed at ``clock()`` (``advance_time(now)`` then
``process``); with a comparator, elements are buffered per millisecond and released once the
clock has moved past it, as Flink's processing-time timer does.

Every call returns the outputs that became ready, in emission order (see ``docs/runtime.md``).
"""

from __future__ import annotations

import functools
import heapq
import math
import operator as _op
import sys
import time
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable
from datetime import datetime
from typing import Any, Final

from flowcep.nfa import NFA, NFACompiler
from flowcep.pattern import ConditionError, Pattern, to_millis
from flowcep.runtime.functions import extractor
from flowcep.runtime.output import (
    BAD_RECORD,
    LATE,
    MATCH,
    STAGE_CONDITION,
    STAGE_KEY,
    STAGE_TIMESTAMP,
    TIMEOUT,
    BadRecord,
    BadRecordError,
    HeldBackMatchesWarning,
    Output,
    make_output,
)
from flowcep.runtime.snapshot import SnapshotError, pack, pattern_fingerprint, unpack
from flowcep.sharedbuffer import PathlessBuffer, SharedBuffer
from flowcep.sharedbuffer.sharedbuffer import STALE_COUNTERS

LONG_MIN: Final = -(2**63)
# Snapshots of format version 3 hold, after the largest timestamp, the first timestamp of the firing
# then under way, which nothing reads: the operator no longer keeps it, and writes this in its place.
_NO_FIRE_BASE: Final = LONG_MIN
# not 2**63 - 1: on PyPy that is a big-int object (arithmetic on one that overflowed stays one),
# and storing it in an instance's int attribute (flush's watermark) turns that class's unboxed
# int attributes into boxed ones for the rest of the process: every compiled trace that read one
# fails its guard and is compiled again (W1: 56 loops and bridges, the next operator's first
# 50,000 events at 70,000 events/s). ~LONG_MIN is a machine-sized int object there.
LONG_MAX: Final = ~LONG_MIN

_ON_ERROR: Final = ("raise", "side_output")
# A key's ``due`` when it is not scheduled: no element or timer is due at LONG_MIN (an element
# there is late). An int, not None: PyPy keeps a field that only ever held ints unboxed, and a
# boxed int per scheduling outlived its nursery on W5 (the key is due a millisecond later).
# Compared with ``is``, cheaper on CPython than ``==``: the field holds this very object when not
# scheduled (no due time is LONG_MIN), and PyPy compares ints by value anyway.
_NOT_DUE: Final = LONG_MIN
_UNKNOWN: Final = object()  # "next deadline not known, recompute it"
_SEQ: Final = _op.attrgetter("seq")  # a key state's order of first appearance
# how _pop_due sorts the keys of one due time by ``seq``: PyPy sorts a list of machine ints about
# six times faster than a list by a key function (100,000 keys, one in ten out of place: 3.6
# against 22 ms; W5 sorts that many per millisecond of its stream), CPython three times slower
# (24 against 8 ms), with the Python loops around the sort
_SORT_AS_INTS: Final = sys.implementation.name == "pypy"
_EVENT_TIME: Final = "event-time"
_PROCESSING_TIME: Final = "processing-time"


def wall_clock_millis() -> int:
    """The default processing-time clock: epoch milliseconds."""
    return time.time_ns() // 1_000_000


class _TimestampError(Exception):
    pass


def to_timestamp(value: Any) -> int:
    """Validate a timestamp: an int of milliseconds in Java's long range.

    ``bool`` is refused; a float is accepted only when it is a whole number (``5.0`` -> ``5``);
    integer-like objects (numpy integers) go through ``__index__``.
    """
    kind = type(value)
    if kind is not int:
        if kind is bool:
            raise _TimestampError(f"a bool ({value!r}) is not a timestamp; expected an int of milliseconds")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise _TimestampError(
                    f"timestamp {value!r} is not a whole number of milliseconds; expected an int"
                )
            value = int(value)
        elif isinstance(value, datetime):
            raise _TimestampError(
                f"timestamp {value!r} is a datetime; return epoch milliseconds, "
                "e.g. int(dt.timestamp() * 1000)"
            )
        else:
            try:
                value = _op.index(value)
            except TypeError:
                raise _TimestampError(
                    f"timestamp {value!r} ({kind.__name__}) is not an int of milliseconds"
                ) from None
    if not LONG_MIN <= value <= LONG_MAX:
        raise _TimestampError(f"timestamp {value} is outside the 64-bit range of Flink timestamps")
    if value == LONG_MAX:
        return LONG_MAX  # Flink's end-of-input watermark, as the one object that stays small on PyPy
    return value  # type: ignore[no-any-return]


class _Several(list):  # type: ignore[type-arg]
    """The elements a key buffered at one timestamp, when there are more than one: a lone
    element is buffered as itself (most timestamps hold one), with no list of its own. Private,
    so an event is never one; empty once its elements were consumed by a firing that failed."""

    __slots__ = ()


def _consumed(elements: Any) -> bool:
    """Whether buffered ``elements`` (a lone element or ``_Several``) were all consumed."""
    return type(elements) is _Several and not elements


def _as_list(elements: Any) -> list[Any]:
    """Buffered ``elements`` (a lone element or ``_Several``) as a list of their own."""
    return list(elements) if type(elements) is _Several else [elements]


# a key's ``head`` when it buffers nothing
_EMPTY: Final = object()
# the buffer of a key that holds nothing but window timers (``state`` None): never used
_NO_BUFFER: Final = SharedBuffer()


class _KeyState:
    """Everything the operator holds for one key. ``state`` None: the key holds nothing but
    window timers (its NFA state went, the timers stay registered, as in Flink's CepOperator)."""

    __slots__ = (
        "key",
        "seq",
        "state",
        "buffer",
        "head",
        "head_ts",
        "times",
        "pending",
        "due",
        "timers",
        "deadline",
    )

    def __init__(self, key: Any, seq: int, state: Any, buffer: SharedBuffer) -> None:
        self.key = key
        self.seq = seq  # order of first appearance, the cross-key tie-breaker
        self.state = state
        self.buffer = buffer
        # The buffered elements, by timestamp, in arrival order within one: those of each
        # timestamp are the element itself or ``_Several`` of them. The first timestamp's are
        # ``head`` (_EMPTY: nothing buffered) at ``head_ts``, in the key's own fields: with
        # ordered input a key mostly buffers one timestamp, and with many keys every other
        # object touched per element is a cache miss (docs/runtime.md §8). The
        # later timestamps, ascending, and their elements are ``times`` and ``pending``: lists
        # (not a dict by timestamp: no hashing), made when the key first needs them.
        self.head: Any = _EMPTY
        self.head_ts = 0
        self.times: list[int] | None = None
        self.pending: list[Any] | None = None
        self.due = _NOT_DUE  # when the key is scheduled
        # window timers, ascending: Flink 2.3 registers one at ts + window after an element at ts
        # (> 0) started a partial match; a key is only advanced when one of its timers fires,
        # and the timers outlive the key's state (``state`` None, in the operator's ``_idle``)
        self.timers: list[int] = []
        # the NFA's next timeout (None: none), _UNKNOWN once runs changed since it was computed
        self.deadline: Any = _UNKNOWN


class CepOperator:
    """Flink's ``CepOperator`` over a pushed stream; see the module docstring and docs/runtime.md.

    ``key_by(event)`` gives the key (None: one global key); ``timestamp(event)`` the event time in
    ms (or pass ``process_element(event, timestamp)``). Either may also be a field name: it reads
    the event's key of that name if the event is a dict (any Mapping), else its attribute. ``out_of_orderness`` (ms or ``timedelta``)
    makes the operator generate a bounded-out-of-orderness watermark after every element
    (``max_ts - out_of_orderness - 1``); ``None`` leaves watermarks to ``process_watermark``.
    ``comparator(a, b) -> int`` orders elements with equal timestamps. ``on_error`` is
    ``"raise"`` (``BadRecordError``) or ``"side_output"`` (``Output(kind="bad_record")``).
    """

    # slots: every attribute read is specialised, however many there are (an instance dict's
    # shared keys stop at 30 in CPython 3.11, and past them attribute reads slow down)
    __slots__ = (
        "pattern",
        "nfa",
        "fingerprint",
        "processing_time",
        "on_error",
        "timeout_handling",
        "_key_by",
        "_timestamp",
        "_out_of_orderness",
        "_sort_key",
        "_clock",
        "_raise",
        "_starts_nothing",
        "_keys",
        "_pathless",
        "_dues",
        "_due_keys",
        "_next_seq",
        "_watermark",
        "_max_timestamp",
        "_last_now",
        "_resume",
        "_errors",
        "events_in",
        "late",
        "matches",
        "timeouts",
        "bad_records",
        "_window_timer",
        "_idle",
    )

    def __init__(
        self,
        pattern: Pattern,
        *,
        key_by: Callable[[Any], Hashable] | str | None = None,
        timestamp: Callable[[Any], int] | str | None = None,
        out_of_orderness: Any = 0,
        comparator: Any = None,
        processing_time: bool = False,
        clock: Callable[[], int] | None = None,
        on_error: str = "raise",
        timeout_handling: bool = True,
    ) -> None:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error must be one of {_ON_ERROR}, got {on_error!r}")
        if clock is not None and not callable(clock):
            raise TypeError(f"clock must be a callable, got {clock!r}")
        key_by = extractor("key_by", key_by)
        timestamp = extractor("timestamp", timestamp)
        self.pattern = pattern
        self.nfa: NFA = NFACompiler.compile(pattern, timeout_handling=timeout_handling)
        self.fingerprint = pattern_fingerprint(pattern)
        self.processing_time = bool(processing_time)
        self.on_error = on_error
        self.timeout_handling = timeout_handling
        self._key_by = key_by
        self._timestamp = timestamp
        self._out_of_orderness: int | None = to_millis(out_of_orderness)
        self._sort_key: Callable[[Any], Any] | None = _comparator_key(comparator)
        self._clock: Callable[[], int] = clock if clock is not None else wall_clock_millis
        self._raise = on_error == "raise"
        self._starts_nothing = self.nfa.starts_nothing
        # the window timer's offset in event time (Flink registers one per new partial match), 0: none
        self._window_timer = self.nfa.window_time if self.nfa.window_time > 0 and not self.processing_time else 0
        self._reset()

    def _reset(self) -> None:
        self._keys: dict[Any, _KeyState] = {}
        # keys whose state went while window timers they registered are still to fire: Flink
        # keeps those timers, and one that fires after the key got state again advances it
        # (docs/runtime.md). Each is its _KeyState with nothing but its timers (state None),
        # scheduled at the first: when the last has fired the key leaves.
        self._idle: dict[Any, _KeyState] = {}
        # only skip strategies that prune by the paths of matches read them from the shared
        # buffer; otherwise runs carry their partial matches and one buffer without paths
        # numbers the events of every key (docs/internals.md): a key's ids stay in the order it
        # takes its events, all that they are compared for, and there is one object per key
        # less for the garbage collector to walk (with many keys, much of its work). None: a
        # buffer per key.
        self._pathless: PathlessBuffer | None = None if self.nfa.needs_paths() else PathlessBuffer()
        # the schedule: a heap of due times and, for each, its keys in the order they were
        # scheduled; a key listed at a time is due then if its ``due`` still says so (a key
        # re-scheduled earlier stays listed at the later time; no entry object per listing, one
        # allocation per scheduling less). Many keys often share a due time (one
        # event per key and ms): they leave together, without a heap operation each.
        self._dues: list[int] = []
        self._due_keys: dict[int, list[_KeyState]] = {}
        self._next_seq = 0
        self._watermark = LONG_MIN
        self._max_timestamp = LONG_MIN
        self._last_now = LONG_MIN
        self._resume = False  # a firing was interrupted by an exception
        self._errors: list[tuple[BadRecord, Any, BaseException | None]] = []  # to raise (on_error="raise")
        self.events_in = 0
        self.late = 0
        self.matches = 0
        self.timeouts = 0
        self.bad_records = 0

    # ------------------------------------------------------------------ public API

    @property
    def current_watermark(self) -> int:
        return self._watermark

    def process_element(self, event: Any, timestamp: int | None = None) -> list[Output]:
        """Push one element; return what became ready (late element, matches, timeouts...)."""
        out: list[Output] = []
        if self._resume:
            self._resume_firing(out)
        self._elements((event,), timestamp, out)
        if self._errors:
            self._raise_errors(out)
        return out

    def process_elements(self, events: Iterable[Any]) -> list[Output]:
        """``process_element`` for each event (with ``on_error="raise"``, bad records are raised
        together once all events are consumed)."""
        out: list[Output] = []
        if self._resume:
            self._resume_firing(out)
        self._elements(events, None, out)
        if self._errors:
            self._raise_errors(out)
        return out

    def _elements(self, events: Iterable[Any], timestamp: int | None, out: list[Output]) -> None:
        """Take each element: late, or buffered under its key and timestamp; then advance the
        watermark it generates. ``timestamp`` (not None) overrides the extractor. One loop for
        a whole batch: what stays fixed is read once per batch, not once per element (a call per
        element cost measurably more; docs/runtime.md §8)."""
        if self.processing_time:
            for event in events:
                self.events_in += 1
                self._element_in_processing_time(event, out)
            return
        extractor = self._timestamp
        key_by = self._key_by
        keys = self._keys
        ooo = self._out_of_orderness
        # an inert element may skip a key without state only without a comparator (below)
        starts_nothing = self._starts_nothing if self._sort_key is None else None
        for event in events:
            self.events_in += 1
            # the timestamp
            if timestamp is not None:
                raw = timestamp
            elif extractor is None:
                self._bad(
                    event,
                    None,
                    None,
                    "no timestamp: give the operator a timestamp extractor or call "
                    "process_element(event, timestamp)",
                    STAGE_TIMESTAMP,
                    None,
                    out,
                )
                continue
            else:
                try:
                    raw = extractor(event)
                except Exception as exc:
                    self._bad(
                        event, None, None, f"timestamp extractor raised {_exc_text(exc)}", STAGE_TIMESTAMP, exc, out
                    )
                    continue
            if type(raw) is int and LONG_MIN <= raw <= LONG_MAX:
                ts: int = raw
            else:
                try:
                    ts = to_timestamp(raw)
                except _TimestampError as exc:
                    self._bad(event, None, None, str(exc), STAGE_TIMESTAMP, None, out)
                    continue
            # the key (looking it up also checks that it is hashable)
            if key_by is None:
                key = None
                ks = keys.get(None)
            else:
                try:
                    key = key_by(event)
                    ks = keys.get(key)
                except Exception as exc:
                    self._bad(event, None, ts, f"key extractor failed: {_exc_text(exc)}", STAGE_KEY, exc, out)
                    continue
            # the watermark this element generates (advanced once it is buffered)
            current = self._watermark
            watermark = current
            if ts > self._max_timestamp:
                self._max_timestamp = ts
                if ooo is not None and ts - ooo - 1 > watermark:
                    watermark = ts - ooo - 1
            # late or buffered
            if ts <= current:
                self.late += 1
                out.append(Output(LATE, key, event, ts))
            else:
                # A key without state gets none for an inert element: one that cannot start a
                # match when no element of an earlier time can still come (it would be late
                # under the watermark this element generates) to start one that this element
                # could advance (with a comparator, not even one of the same time). Flink would
                # buffer it, fire its timer and process it without effect.
                if ks is None and not (starts_nothing is not None and ts <= watermark + 1 and starts_nothing(event)):
                    ks = self._new_key(key)
                if ks is not None:
                    head = ks.head
                    if head is _EMPTY:
                        ks.head = event
                        ks.head_ts = ts
                        due = ks.due
                        if due is _NOT_DUE or ts < due:
                            self._push_entry(ks, ts)
                    else:
                        # after the head: the usual cases, a time after the last or equal to it,
                        # written out (_buffer does the others)
                        times = ks.times
                        last = times[-1] if times else ks.head_ts
                        if ts > last and times is not None:
                            times.append(ts)
                            ks.pending.append(event)  # type: ignore[union-attr]  # (a list with times)
                            if ks.due is _NOT_DUE:  # (a key with buffered elements is scheduled)
                                self._push_entry(ks, ks.head_ts)
                        elif ts == last and times:
                            _add(ks.pending, len(times) - 1, event)  # type: ignore[arg-type]
                        else:
                            self._buffer(ks, event, ts)
            if watermark > current:
                # _advance_watermark, written out (a call per element less)
                self._watermark = watermark
                self._fire(watermark, out)

    def process_watermark(self, timestamp: int) -> list[Output]:
        """Advance event time to ``timestamp`` (ignored if not ahead of the current watermark).

        In processing time the value is ignored; the call only releases comparator-buffered
        elements whose millisecond the clock has passed.
        """
        out: list[Output] = []
        if self._resume:
            self._resume_firing(out)
        if self.processing_time:
            if self._sort_key is not None:
                self._fire_processing_time(self._now(), out)
            if self._errors:
                self._raise_errors(out)
            return out
        try:
            watermark = to_timestamp(timestamp)
        except _TimestampError as exc:
            raise ValueError(f"invalid watermark: {exc}") from None
        if watermark > self._watermark:
            self._advance_watermark(watermark, out)
        if self._errors:
            self._raise_errors(out)
        return out

    def flush(self) -> list[Output]:
        """End of input: the final watermark (``2**63 - 1``) releases everything pending.

        In processing time, comparator-buffered elements are processed; partial matches are
        not timed out (Flink only advances processing time when an element arrives).

        Completed matches that a skip strategy still holds back then (behind an earlier partial
        match that never closes: no window) never come out, as in Flink; a
        ``HeldBackMatchesWarning`` says how many.
        """
        if not self.processing_time:
            out = self.process_watermark(LONG_MAX)
        else:
            out = []
            if self._resume:
                self._resume_firing(out)
            self._fire_processing_time(None, out)
            if self._errors:
                self._raise_errors(out)
        self._warn_held_back()
        return out

    def _held_back(self) -> tuple[int, int]:
        """Completed matches held back by a skip strategy, and the keys holding them."""
        matches = keys = 0
        for ks in self._keys.values():
            held = len(ks.state.completed_matches.queue)
            if held:
                matches += held
                keys += 1
        return matches, keys

    def _warn_held_back(self) -> None:
        matches, keys = self._held_back()
        if matches:
            warnings.warn(
                HeldBackMatchesWarning(
                    f"{matches} completed match{'es' if matches != 1 else ''} of {keys} "
                    f"key{'s' if keys != 1 else ''} never came out: the pattern's skip strategy "
                    "holds a completed match back while a partial match that started earlier is "
                    "open, and those never closed (no window). Flink does the same; within(...) "
                    "bounds the wait (docs/semantics.md, section 6)"
                ),
                stacklevel=3,
            )

    def next_deadline(self) -> int | None:
        """The smallest watermark at which a call may produce output or drop state (None: only
        new elements can): the earliest timer of any key, a buffered timestamp or a window
        timer, also one of a key that holds nothing else (see ``has_state``).

        In processing time with a comparator: the clock time at which buffered elements are due.
        """
        if self.processing_time and self._sort_key is None:
            return None
        dues = self._dues
        due_keys = self._due_keys
        while dues:
            due = dues[0]
            for ks in due_keys[due]:
                if ks.due == due:
                    return due
            heapq.heappop(dues)
            del due_keys[due]
        return None

    def has_state(self) -> bool:
        """Whether any key holds buffered elements, partial matches or window timers (Flink keeps
        a key's timers when its state goes: until they fired, a later element of the key is
        advanced at them)."""
        return bool(self._keys) or bool(self._idle)

    def stats(self) -> dict[str, int]:
        """Counters and gauges (gauges are computed on call, in time proportional to the state)."""
        partial = 0
        buffered = 0
        entries = 0
        held_back, _ = self._held_back()
        for ks in self._keys.values():
            partial += ks.state.partial_match_count()
            entries += self.nfa.held_entries(ks.buffer, ks.state)
            for _, elements in _buffered(ks):
                buffered += len(elements) if type(elements) is _Several else 1
        return {
            "events_in": self.events_in,
            "late": self.late,
            "matches": self.matches,
            "timeouts": self.timeouts,
            "bad_records": self.bad_records,
            "partial_matches": partial,
            "held_back_matches": held_back,
            "buffered_events": buffered,
            "shared_buffer_entries": entries,
            "keys": len(self._keys),
            "watermark": self._watermark,
        }

    # ------------------------------------------------------------------ snapshots

    def snapshot(self, *, canonical: bool = True) -> bytes:
        """All per-key state, watermark and counters as versioned bytes.

        ``canonical`` (the default): deterministic bytes, equal for equal states.
        ``canonical=False``: a plain pickle in the same format, about three times faster to
        take; what the connectors store per micro-batch. ``restore`` reads both.
        """
        keys = [
            (
                ks.key,
                ks.seq,
                list(ks.timers),
                ks.state,
                # a buffer that keeps no paths (shared by all keys, below): the runs' partial
                # matches instead
                ks.buffer if self._pathless is None else None,
                [(t, _as_list(elements)) for t, elements in _buffered(ks)],
                None if self._pathless is None else self.nfa.run_matches(ks.buffer, ks.state),
            )
            for ks in self._keys.values()
        ]
        payload = (
            _PROCESSING_TIME if self.processing_time else _EVENT_TIME,
            (
                self._watermark,
                self._max_timestamp,
                _NO_FIRE_BASE,  # (the place of a field nothing read; kept so the layout stays version 3)
                self._last_now,
                self._next_seq,
                self._resume,
            ),
            (self.events_in, self.late, self.matches, self.timeouts, self.bad_records),
            keys,
            # the buffer without paths, by what it holds: the event counters of recent timestamps
            None if self._pathless is None else self._pathless.events_count,
            # the keys that hold nothing but window timers
            [(ks.key, list(ks.timers)) for ks in self._idle.values()],
        )
        return pack(self.fingerprint, payload, canonical)

    def reset(self) -> None:
        """Drop all state: keys, buffered elements, partial matches, watermark and counters."""
        self._reset()

    def discard_key(self, key: Any) -> bool:
        """Drop all one key holds (buffered elements, partial matches, window timers), silently;
        whether it held anything."""
        ks = self._keys.pop(key, None)
        if ks is None:
            ks = self._idle.pop(key, None)
            if ks is None:
                return False
        ks.due = _NOT_DUE  # listed in the schedule still, but no longer due there
        return True

    def keys(self) -> list[Any]:
        """The keys that hold anything (buffered elements, partial matches or window timers)."""
        return [*self._keys, *self._idle]

    def restore(self, data: bytes) -> None:
        """Replace all state by a snapshot's; ``SnapshotError`` for other formats or patterns."""
        payload = unpack(data, self.fingerprint)
        try:
            if len(payload) == 5:  # taken before keys with nothing but window timers were kept
                payload = (*payload, [])
            mode, clocks, counters, keys, event_counts, idle = payload
        except (TypeError, ValueError):
            raise SnapshotError("corrupt flowcep snapshot payload: unexpected layout") from None
        mine = _PROCESSING_TIME if self.processing_time else _EVENT_TIME
        if mode != mine:
            raise SnapshotError(f"snapshot was taken in {mode} mode, this operator runs in {mine}")
        keeps_paths = self._pathless is None
        try:
            if type(event_counts) is not (type(None) if keeps_paths else dict):
                raise ValueError("its event counters do not fit the pattern's skip strategy")
            for _, _, _, state, buffer, _, matches in keys:
                if keeps_paths != (type(buffer) is SharedBuffer) or (matches is None) != keeps_paths:
                    raise ValueError("a key's shared buffer does not fit the pattern's skip strategy")
                if matches is not None:
                    self.nfa.restore_run_matches(state, matches)
            idle = [(key, [int(t) for t in timers]) for key, timers in idle]
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt flowcep snapshot payload: {exc}") from None
        self._reset()
        pathless = self._pathless
        if pathless is not None and isinstance(event_counts, dict):  # checked above
            pathless.events_count = event_counts
        (
            self._watermark,
            self._max_timestamp,
            _,  # the field nothing read (see snapshot())
            self._last_now,
            self._next_seq,
            self._resume,
        ) = clocks
        self.events_in, self.late, self.matches, self.timeouts, self.bad_records = counters
        for key, seq, timers, state, buffer, queue, _ in keys:
            ks = _KeyState(key, seq, state, buffer if pathless is None else pathless)
            ks.timers = list(timers)
            if queue:
                ks.times = [t for t, _ in queue]
                ks.pending = [elements[0] if len(elements) == 1 else _Several(elements) for _, elements in queue]
                _unspill(ks)
            self._keys[key] = ks
            if not self.processing_time or self._sort_key is not None:
                self._schedule(ks)
        for key, timers in idle:
            ks = _KeyState(key, 0, None, _NO_BUFFER)
            ks.timers = timers
            self._idle[key] = ks
            self._schedule(ks)

    # ------------------------------------------------------------------ event time

    def _new_key(self, key: Any) -> _KeyState:
        buffer = self._pathless if self._pathless is not None else SharedBuffer()
        idle = self._idle
        ks = idle.pop(key, None) if idle else None
        if ks is None:
            ks = _KeyState(key, self._next_seq, self.nfa.create_initial_state(), buffer)
        else:
            # state again for a key with window timers left: they stay, scheduled as they are
            ks.seq = self._next_seq
            ks.state = self.nfa.create_initial_state()
            ks.buffer = buffer
        self._next_seq += 1
        self._keys[key] = ks
        return ks

    def _keep_timers(self, ks: _KeyState) -> None:
        """The key's state goes, its window timers (some left) stay, as in Flink's CepOperator."""
        ks.state = None
        ks.buffer = _NO_BUFFER
        ks.times = ks.pending = None
        ks.deadline = _UNKNOWN
        self._idle[ks.key] = ks
        self._push_entry(ks, ks.timers[0])

    def _buffer(self, ks: _KeyState, event: Any, ts: int) -> None:
        """Buffer ``event`` at ``ts`` under the key, wherever ``ts`` falls among its times (the
        usual cases are written out in ``_elements``)."""
        head = ks.head
        if head is _EMPTY:
            ks.head = event
            ks.head_ts = ts
        elif ts == ks.head_ts:
            if type(head) is _Several:
                head.append(event)
            else:
                ks.head = _Several((head, event))
            return
        else:
            times, pending = _lists(ks)
            if ts < ks.head_ts:
                # the element is the new head; the old one goes first in the lists
                times.insert(0, ks.head_ts)
                pending.insert(0, head)
                ks.head = event
                ks.head_ts = ts
            else:
                at = bisect_left(times, ts)
                if at < len(times) and times[at] == ts:
                    _add(pending, at, event)
                    return
                times.insert(at, ts)
                pending.insert(at, event)
        due = ks.due
        if self.processing_time:
            due_at = ts + 1  # the processing-time timer of a millisecond fires once the clock passed it
        else:
            due_at = ts
        if due is _NOT_DUE or due_at < due:
            self._push_entry(ks, due_at)

    def _push_entry(self, ks: _KeyState, due: int) -> None:
        entries = self._due_keys.get(due)
        if entries is None:
            self._due_keys[due] = [ks]
            heapq.heappush(self._dues, due)
        else:
            entries.append(ks)
        ks.due = due

    def _schedule(self, ks: _KeyState) -> None:
        """Index the key at its next due time: first buffered timestamp or next timeout."""
        first = None if ks.head is _EMPTY else ks.head_ts  # the first buffered timestamp
        if self.processing_time:
            # processing-time timeouts are not timer driven: only buffered elements are due
            due = None if first is None else first + 1
        else:
            # Flink 2.3's timers: one per buffered timestamp, plus the window timers
            due = first
            timers = ks.timers
            if timers and (due is None or timers[0] < due):
                due = timers[0]
        if due is None:
            ks.due = _NOT_DUE
        else:
            self._push_entry(ks, due)

    def _settle(self, ks: _KeyState) -> None:
        """Drop the key if nothing is pending, else re-index it."""
        if ks.head is _EMPTY and ks.state.is_empty():
            ks.due = _NOT_DUE
            if self._keys.get(ks.key) is ks:
                del self._keys[ks.key]
        else:
            self._schedule(ks)

    def _advance_watermark(self, watermark: int, out: list[Output]) -> None:
        self._watermark = watermark
        self._fire(watermark, out)

    def _resume_firing(self, out: list[Output]) -> None:
        self._resume = False
        if self.processing_time:
            self._fire_processing_time(self._last_now, out)
        else:
            self._fire(self._watermark, out)

    def _pop_due(self, limit: int | None) -> list[_KeyState]:
        """The keys due at ``limit`` (None: all), off the heap, in Flink's timer order: by the
        key's earliest due timer, ties by first appearance. A key is scheduled at that timer
        (its first buffered time, or window timer in event time), so the order is that of
        ``(due, seq)`` pairs: the heap gives the due times in order, and the keys of each are
        sorted by ``seq`` (by a key function: for 100,000 keys, one in ten out of place, half
        the time of sorting ``(due, seq, key)`` tuples on PyPy, a fifth on CPython)."""
        dues = self._dues
        due_keys = self._due_keys
        due: list[_KeyState] = []
        while dues and (limit is None or dues[0] <= limit):
            at = heapq.heappop(dues)
            listed = due_keys.pop(at)
            if _SORT_AS_INTS and len(listed) > 1:
                keys = _due_by_seq(listed, at, self._next_seq)
            else:
                keys = _due_at(listed, at)
                if len(keys) > 1:
                    keys.sort(key=_SEQ)
            if due:
                due += keys
            else:
                due = keys
        return due

    def _fire(self, watermark: int, out: list[Output]) -> None:
        """Run every key that has buffered elements or timeouts due at ``watermark``."""
        dues = self._dues
        if not dues or dues[0] > watermark:
            return
        entries = self._due_keys[dues[0]]
        if len(entries) == 1 and (
            len(dues) == 1 or dues[1] > watermark and (len(dues) == 2 or dues[2] > watermark)
        ):
            # one entry due (the usual case with few keys): no list, no sort
            at = heapq.heappop(dues)
            del self._due_keys[at]
            ks = entries[0]
            if ks.due != at:
                return
            ks.due = _NOT_DUE
            try:
                self._fire_key(ks, watermark, out)
            except BaseException:
                self._resume = True
                raise
        else:
            self._fire_keys(watermark, out)
        pathless = self._pathless
        if pathless is not None and len(pathless.events_count) > STALE_COUNTERS:
            # no element at or before the watermark is processed after this firing: the
            # arrival counters of those timestamps can go (PathlessBuffer.advance_time's own
            # test, first without the call)
            pathless.advance_time(watermark)

    def _fire_keys(self, watermark: int, out: list[Output]) -> None:
        """``_fire`` when more than one key is due."""
        due = self._pop_due(watermark)
        done = 0
        try:
            for ks in due:
                self._fire_key(ks, watermark, out)
                done += 1
        except BaseException:
            for ks in due[done + 1 :]:
                self._schedule(ks)
            self._resume = True
            raise

    def _fire_key(self, ks: _KeyState, watermark: int, out: list[Output]) -> None:
        state = ks.state
        timers = ks.timers
        if timers and timers[0] <= watermark:
            del timers[: _count_through(timers, watermark)]
        if state is None:
            # a key with nothing but window timers: in Flink their firing advances an empty
            # state, which changes nothing
            if timers:
                self._push_entry(ks, timers[0])
            else:
                ks.due = _NOT_DUE
                if self._idle.get(ks.key) is ks:
                    del self._idle[ks.key]
            return
        head = ks.head
        head_taken = False  # the head's elements were all processed (or consumed, see _feed)
        n = done = 0  # later timestamps due, processed
        pending = ks.pending
        try:
            if head is not _EMPTY and ks.head_ts <= watermark:
                # the head: _fire_time written out (the usual case, one element, without a loop:
                # on PyPy a loop of one turn splits the trace)
                t = ks.head_ts
                # _advance's own test, first without the call: most timestamps time nothing
                # out (the key's next deadline, computed here once its runs changed)
                deadline = ks.deadline
                if deadline is _UNKNOWN:
                    deadline = ks.deadline = self.nfa.next_deadline(state)
                if (deadline is not None and deadline <= t) or state.completed_matches.queue:
                    self._advance(ks, t, out)
                if type(head) is _Several:
                    try:
                        self._feed(ks, head, t, out)
                    except BaseException:
                        head_taken = not head  # (_feed removed what it consumed)
                        raise
                    head_taken = True
                else:
                    head_taken = True  # consumed, also if processing it raises (see _feed)
                    self._feed_event(ks, head, t, out)
                times = ks.times
                if times and pending and times[0] <= watermark:
                    n = _count_through(times, watermark)
                    while done < n:
                        self._fire_time(ks, times[done], pending, done, out)
                        done += 1
            # also when the last buffered timestamp is the watermark: a run that left a proceed
            # edge by ignoring the event keeps its older previous timestamp and may be due now
            deadline = ks.deadline
            if deadline is _UNKNOWN:
                deadline = ks.deadline = self.nfa.next_deadline(state)
            if (deadline is not None and deadline <= watermark) or state.completed_matches.queue:
                self._advance(ks, watermark, out)
        except BaseException:
            if done < n and pending and _consumed(pending[done]):
                done += 1
            raise
        finally:
            if head_taken:
                # the first timestamp left becomes the head
                times = ks.times
                pending = ks.pending
                if times is None or pending is None:
                    ks.head = _EMPTY
                else:
                    if done < len(times):
                        ks.head_ts = times[done]
                        ks.head = pending[done]
                        done += 1
                    else:
                        ks.head = _EMPTY
                    if done:
                        del times[:done]
                        del pending[:done]
            if self._pathless is None:
                # (the buffer all keys share forgets its counters once per firing: _fire)
                ks.buffer.advance_time(watermark)
            state.new_start_partial_match = False
            # timers registered during this firing at or before the watermark fire at once in
            # Flink, only to advance time to the watermark again, which changes nothing
            if timers and timers[0] <= watermark:
                del timers[: _count_through(timers, watermark)]
            # _settle and _schedule in event time, written out (two calls per firing less, which
            # pays on the hot path: docs/runtime.md §8; no return here: it would swallow an exception):
            # the key's next due time is its first buffered timestamp or its first window timer
            if ks.head is not _EMPTY:
                first = ks.head_ts
                self._push_entry(ks, timers[0] if timers and timers[0] < first else first)
            elif state.is_empty():  # nothing pending: the key's state goes, its window timers stay
                if self._keys.get(ks.key) is ks:
                    del self._keys[ks.key]
                if timers:
                    self._keep_timers(ks)
                else:
                    ks.due = _NOT_DUE
            elif timers:
                self._push_entry(ks, timers[0])
            else:
                ks.due = _NOT_DUE

    def _fire_time(self, ks: _KeyState, t: int, pending: list[Any], at: int, out: list[Output]) -> None:
        """Process the key's elements ``pending[at]`` of timestamp ``t`` (its ``at``-th listed),
        after timing out what that time ends (the caller drops them from the key's pending
        elements; one that raises is consumed, see ``_feed``)."""
        state = ks.state
        # _advance's own test, first without the call: most timestamps time nothing out (the
        # key's next deadline, computed here once its runs changed)
        deadline = ks.deadline
        if deadline is _UNKNOWN:
            deadline = ks.deadline = self.nfa.next_deadline(state)
        if (deadline is not None and deadline <= t) or state.completed_matches.queue:
            self._advance(ks, t, out)
        elements = pending[at]
        if type(elements) is _Several:
            self._feed(ks, elements, t, out)
            return
        # the usual case, a lone element: without a loop (on PyPy a loop of one turn splits the
        # trace) and without _feed's call
        try:
            self._feed_event(ks, elements, t, out)
        except BaseException:
            pending[at] = _Several()  # consumed
            raise

    def _advance(self, ks: _KeyState, timestamp: int, out: list[Output]) -> None:
        """``advance_time`` unless no run can time out by ``timestamp`` and no match is held back
        (the key's next deadline is kept in ``ks.deadline`` until its runs change)."""
        nfa = self.nfa
        state = ks.state
        deadline = ks.deadline
        if deadline is _UNKNOWN:
            deadline = ks.deadline = nfa.next_deadline(state)
        if (deadline is None or deadline > timestamp) and (
            not state.completed_matches.queue or nfa.holds_back(state)
        ):
            # the buffer's arrival counters of older timestamps are dropped once per firing
            # (_fire_key, _drain_processing_time): timestamps only grow within one
            return
        ks.deadline = _UNKNOWN
        matches, timed_out = nfa.advance_time(ks.buffer, state, timestamp)
        if matches:
            key = ks.key
            self.matches += len(matches)
            for match in matches:
                out.append(make_output(MATCH, key, match, timestamp))
        if timed_out:
            key = ks.key
            self.timeouts += len(timed_out)
            for partial, at in timed_out:
                out.append(make_output(TIMEOUT, key, partial, at))

    def _feed(self, ks: _KeyState, elements: _Several, timestamp: int, out: list[Output]) -> None:
        """Process ``elements`` at ``timestamp``, in the comparator's order if there is one.

        A condition error makes a bad record. Any other exception propagates (as it fails a Flink
        job), after removing the elements it consumed, the failing one included, from ``elements``.
        (``_fire_time`` does this itself for a lone element, the usual case.)
        """
        if self._sort_key is not None and len(elements) > 1:
            elements.sort(key=self._sort_key)
        i = 0
        try:
            for event in elements:
                self._feed_event(ks, event, timestamp, out)
                i += 1
        except BaseException:
            del elements[: i + 1]
            raise

    def _feed_event(self, ks: _KeyState, event: Any, timestamp: int, out: list[Output]) -> None:
        """Process one element (see ``_feed``): its matches, its window timer, its bad record."""
        state = ks.state
        try:
            matches = self.nfa.process(ks.buffer, state, event, timestamp)
        except ConditionError as exc:
            bad = BadRecord(event, f"condition raised {_exc_text(exc.cause or exc)}", STAGE_CONDITION, exc.step)
            self.bad_records += 1
            if self._raise:
                self._errors.append((bad, ks.key, exc))
            else:
                out.append(Output(BAD_RECORD, ks.key, bad, timestamp))
            return
        except BaseException:
            ks.deadline = _UNKNOWN
            raise
        if state.runs_changed:
            state.runs_changed = False
            ks.deadline = _UNKNOWN
        window_time = self._window_timer  # 0: no window timers
        if window_time and state.new_start_partial_match:
            # Flink registers a timer at ts + window while the flag is up (until the firing ends)
            due = timestamp + window_time
            timers = ks.timers
            if not timers or due > timers[-1]:
                timers.append(due)  # ordered input: no bisect (pure Python on PyPy)
            else:
                at = bisect_left(timers, due)
                if timers[at] != due:
                    timers.insert(at, due)
        if matches:
            self.matches += len(matches)
            key = ks.key
            for match in matches:
                out.append(make_output(MATCH, key, match, timestamp))

    # ------------------------------------------------------------------ processing time

    def _now(self) -> int:
        try:
            now = to_timestamp(self._clock())
        except _TimestampError as exc:
            raise ValueError(f"the processing-time clock returned an invalid time: {exc}") from None
        if now < self._last_now:
            now = self._last_now  # never let processing time run backwards
        self._last_now = now
        return now

    def _element_in_processing_time(self, event: Any, out: list[Output]) -> None:
        now = self._now()
        key_by = self._key_by
        if key_by is None:
            key = None
        else:
            try:
                key = key_by(event)
                hash(key)
            except Exception as exc:
                self._bad(event, None, now, f"key extractor failed: {_exc_text(exc)}", STAGE_KEY, exc, out)
                return
        if self._sort_key is not None:
            # buffered before the release of earlier milliseconds (it is due at now + 1 only),
            # so that an exception there does not lose it, as in event time
            ks = self._keys.get(key)
            if ks is None:
                ks = self._new_key(key)
            self._buffer(ks, event, now)
            self._fire_processing_time(now, out)
            return
        ks = self._keys.get(key)
        if ks is None:
            ks = self._new_key(key)
        try:
            self._advance(ks, now, out)
            ks.buffer.advance_time(now)
            self._feed_event(ks, event, now, out)
        finally:
            if ks.state.is_empty() and self._keys.get(key) is ks:
                del self._keys[key]

    def _fire_processing_time(self, now: int | None, out: list[Output]) -> None:
        """Release comparator-buffered elements whose timer (``ms + 1``) is due at ``now``."""
        dues = self._dues
        if not dues or (now is not None and dues[0] > now):
            return
        due = self._pop_due(now)
        done = 0
        try:
            for ks in due:
                self._drain_processing_time(ks, now, out)
                done += 1
        except BaseException:
            for ks in due[done + 1 :]:
                self._schedule(ks)
            self._resume = True
            raise

    def _drain_processing_time(self, ks: _KeyState, now: int | None, out: list[Output]) -> None:
        """Process the key's elements of the milliseconds before ``now`` (None: all)."""
        # in the lists alone while it runs (a rare path: processing time with a comparator)
        times, pending = _spill(ks)
        n = len(times) if now is None else bisect_left(times, now)  # (the element at now waits)
        done = 0
        try:
            while done < n:
                self._fire_time(ks, times[done], pending, done, out)
                done += 1
        except BaseException:
            if done < n and _consumed(pending[done]):
                done += 1
            raise
        finally:
            if done:
                ks.buffer.advance_time(times[done - 1])
                del times[:done]
                del pending[:done]
            _unspill(ks)
            self._settle(ks)

    # ------------------------------------------------------------------ errors

    def _bad(
        self,
        record: Any,
        key: Any,
        timestamp: int | None,
        message: str,
        stage: str,
        cause: BaseException | None,
        out: list[Output],
    ) -> list[Output]:
        bad = BadRecord(record, message, stage)
        self.bad_records += 1
        if self._raise:
            self._errors.append((bad, key, cause))
        else:
            out.append(Output(BAD_RECORD, key, bad, timestamp))
        return out

    def _raise_errors(self, out: list[Output]) -> None:
        errors, self._errors = self._errors, []
        bad, key, cause = errors[0]
        raise BadRecordError(bad, key, out, [b for b, _, _ in errors]) from cause


def _due_at(listed: list[_KeyState], at: int) -> list[_KeyState]:
    """The keys ``listed`` at ``at`` that are due then, in listed order, each once (a key
    listed twice at one time leaves once: its ``due`` is reset)."""
    keys = []
    for ks in listed:
        if ks.due == at:
            ks.due = _NOT_DUE
            keys.append(ks)
    return keys


def _due_by_seq(listed: list[_KeyState], at: int, seq_limit: int) -> list[_KeyState]:
    """The keys ``listed`` at ``at`` that are due then (each once, ``due`` reset), sorted by
    ``seq`` (each below ``seq_limit``), as a new list: by sorting ints that hold a key's ``seq``
    and its place in ``listed``, made in the pass that checks ``due`` (with 100,000 keys a second
    pass to read ``seq`` is a second cache miss per key), while they fit in 62 bits (on PyPy a
    machine int); else by ``list.sort`` with a key function."""
    shift = len(listed).bit_length()
    if seq_limit << shift >= 1 << 62:
        keys = _due_at(listed, at)
        keys.sort(key=_SEQ)
        return keys
    codes = []
    for i, ks in enumerate(listed):
        if ks.due == at:
            ks.due = _NOT_DUE
            codes.append(ks.seq << shift | i)
    codes.sort()
    mask = (1 << shift) - 1
    return [listed[code & mask] for code in codes]


def _lists(ks: _KeyState) -> tuple[list[int], list[Any]]:
    """The key's ``times`` and ``pending``, made if it has none yet."""
    times = ks.times
    pending = ks.pending
    if times is None or pending is None:
        times = ks.times = []
        pending = ks.pending = []
    return times, pending


def _spill(ks: _KeyState) -> tuple[list[int], list[Any]]:
    """Move the key's head to the front of its lists: the key's buffered elements are then all
    in the lists it returns, ``times`` and ``pending``, until ``_unspill``."""
    times, pending = _lists(ks)
    if ks.head is not _EMPTY:
        times.insert(0, ks.head_ts)
        pending.insert(0, ks.head)
        ks.head = _EMPTY
    return times, pending


def _unspill(ks: _KeyState) -> None:
    """Make the first of the key's listed timestamps its head (the key has no head)."""
    times = ks.times
    pending = ks.pending
    if times and pending:
        ks.head_ts = times[0]
        ks.head = pending[0]
        del times[:1]
        del pending[:1]


def _buffered(ks: _KeyState) -> list[tuple[int, Any]]:
    """The key's buffered timestamps and their elements (as in ``pending``), in order."""
    if ks.head is _EMPTY:
        return []
    first = [(ks.head_ts, ks.head)]
    return first + list(zip(ks.times, ks.pending)) if ks.times and ks.pending else first


def _add(pending: list[Any], at: int, event: Any) -> None:
    """Buffer ``event`` beside the elements of a key's ``at``-th timestamp."""
    elements = pending[at]
    if type(elements) is _Several:
        elements.append(event)
    else:
        pending[at] = _Several((elements, event))


def _count_through(times: list[int], t: int) -> int:
    """How many of the sorted ``times`` are at most ``t``: with ordered input at most the first
    (``bisect_right`` only otherwise: it is a loop in pure Python on PyPy)."""
    if len(times) < 2 or times[1] > t:
        return 1 if times and times[0] <= t else 0
    return bisect_right(times, t)


def _exc_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _comparator_key(comparator: Any) -> Callable[[Any], Any] | None:
    """Flink's ``EventComparator``: a ``compare(a, b) -> int`` callable or object."""
    if comparator is None:
        return None
    compare = getattr(comparator, "compare", comparator)
    if not callable(compare):
        raise TypeError(f"comparator must be a callable compare(a, b) -> int, got {comparator!r}")
    return functools.cmp_to_key(compare)
