"""The embedded CEP operator: Flink's ``CepOperator`` as a push API.

Event time (the default): every element is checked against the current watermark (``ts <=
watermark`` is late), otherwise buffered per key and timestamp. When the watermark passes
buffered timestamps, each due key runs them in ascending order, each timestamp preceded by
``advance_time(ts)``, equal timestamps in arrival order or stable-sorted by the comparator;
then ``advance_time(watermark)`` times out partial matches and releases pending notFollowedBy
matches. Keys with nothing due are not visited: each key's next due time is scheduled
(``flowcep.runtime.schedule``).

Processing time: each element is processed at ``clock()`` (``advance_time(now)`` then
``process``); with a comparator, elements are buffered per millisecond and released once the
clock has moved past it, as Flink's processing-time timer does.

Every call returns the outputs that became ready, in emission order (see ``docs/runtime.md``).

The per-element path (``_elements``, ``_fire`` and what it calls) has checks written out where a
call would do; ``flowcep.runtime.reference.ReferenceOperator`` is the same operator with each
check called where it is defined, and property tests hold the written-out copies to it.
"""

from __future__ import annotations

import heapq
import sys
import warnings
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, ClassVar

from flowcep.nfa import NFA, NFACompiler
from flowcep.nfa.computation_state import NO_START
from flowcep.nfa.stepgen import LazyStep, refusal
from flowcep.pattern import ConditionError, Pattern, to_millis
from flowcep.runtime.chainloop import ChainLoop, chain_loop
from flowcep.runtime.context import RuntimeContext, close_operator, open_operator
from flowcep.runtime.functions import extractor
from flowcep.runtime.keystate import (
    EMPTY,
    NO_BUFFER,
    NOT_DUE,
    UNKNOWN,
    KeyState,
    Several,
    add,
    as_list,
    buffered,
    consumed,
    count_through,
    insert,
    restore_queue,
    spill,
    unspill,
)
from flowcep.runtime.limits import Limiter, PartialMatchLimit
from flowcep.runtime.options import OperatorOptions, comparator_key
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
    exc_text,
    make_output,
)
from flowcep.runtime.schedule import Schedule
from flowcep.runtime.snapshot import (
    EVENT_TIME,
    PROCESSING_TIME,
    KeySnapshot,
    OperatorSnapshot,
    SnapshotError,
    pattern_fingerprint,
)
from flowcep.runtime.timestamps import LONG_MAX, LONG_MIN, ProcessingClock, TimestampError, to_timestamp
from flowcep.sharedbuffer import PathlessBuffer, SharedBuffer
from flowcep.sharedbuffer.sharedbuffer import STALE_COUNTERS

__all__ = ["LONG_MAX", "LONG_MIN", "CepOperator"]


class CepOperator:
    """Flink's ``CepOperator`` over a pushed stream; see the module docstring and docs/runtime.md.

    ``key_by(event)`` gives the key (None: one global key); ``timestamp(event)`` the event time in
    ms (or pass ``process_element(event, timestamp)``). Either may also be a field name: it reads
    the event's key of that name if the event is a dict (any Mapping), else its attribute.
    ``out_of_orderness`` (ms or ``timedelta``) makes the operator generate a
    bounded-out-of-orderness watermark after every element (``max_ts - out_of_orderness - 1``);
    ``None`` leaves watermarks to ``process_watermark``. ``comparator(a, b) -> int`` orders
    elements with equal timestamps. ``on_error`` is ``"raise"`` (``BadRecordError``) or
    ``"side_output"`` (``Output(kind="bad_record")``). These are ``OperatorOptions``
    (``CepOperator.from_options``).
    """

    FAST_PATHS: ClassVar[bool] = True  # False in ReferenceOperator
    # the pattern's generated step (flowcep.nfa.stepgen) instead of NFA.process, where it has one;
    # on CPython only: PyPy's JIT runs the interpreted step faster (docs/runtime.md §8)
    GENERATED_STEP: ClassVar[bool] = sys.implementation.name == "cpython"
    # many keys due at once fire in one loop (_fire_lone_heads) on CPython only: PyPy's JIT runs
    # the calls of _fire_keys faster (docs/runtime.md §8)
    LONE_HEADS: ClassVar[bool] = sys.implementation.name == "cpython"
    # a chain pattern's ordered input runs in its own loop with runs grouped by step
    # (flowcep.runtime.chainloop); on PyPy too, whose JIT runs it faster than the fused step
    CHAIN_LOOP: ClassVar[bool] = True

    # slots: every attribute read is specialised, however many there are (an instance dict's
    # shared keys stop at 30 in CPython 3.11, and past them attribute reads slow down)
    __slots__ = (
        "pattern",
        "options",
        "nfa",
        "fingerprint",
        "processing_time",
        "on_error",
        "timeout_handling",
        "_fast",
        "_key_by",
        "_timestamp",
        "_out_of_orderness",
        "_sort_key",
        "_clock",
        "_raise",
        "_starts_nothing",
        "_keys",
        "_pathless",
        "_sched",
        "_next_seq",
        "_watermark",
        "_max_timestamp",
        "_resume",
        "_errors",
        "events_in",
        "late",
        "matches",
        "timeouts",
        "bad_records",
        "_window_timer",
        "_idle",
        "_limiter",
        "_step",
        "_chain",
        "_current",
        "_current_key",
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
        partial_match_limit: PartialMatchLimit | None = None,
        quiet_timeouts: bool = False,
    ) -> None:
        options = OperatorOptions(
            key_by=key_by,
            timestamp=timestamp,
            out_of_orderness=out_of_orderness,
            comparator=comparator,
            processing_time=processing_time,
            clock=clock,
            on_error=on_error,
            partial_match_limit=partial_match_limit,
            quiet_timeouts=quiet_timeouts,
        )
        self._configure(pattern, options, timeout_handling)

    @classmethod
    def from_options(
        cls, pattern: Pattern, options: OperatorOptions, *, timeout_handling: bool = True
    ) -> CepOperator:
        """The operator of ``pattern`` with ``options`` (the keywords of ``CepOperator(...)``)."""
        op = cls.__new__(cls)
        op._configure(pattern, options, timeout_handling)
        return op

    def _configure(self, pattern: Pattern, options: OperatorOptions, timeout_handling: bool) -> None:
        self.pattern = pattern
        self.options = options
        self._key_by = extractor("key_by", options.key_by)
        self._timestamp = extractor("timestamp", options.timestamp)
        self.nfa: NFA = NFACompiler.compile(pattern, timeout_handling=timeout_handling)
        self.nfa.use_clock(options.clock)  # the clock conditions see is the operator's
        self.fingerprint = pattern_fingerprint(pattern)
        self.processing_time = options.processing_time
        self.on_error = options.on_error
        self.timeout_handling = timeout_handling
        self._fast = self.FAST_PATHS
        self._out_of_orderness: int | None = to_millis(options.out_of_orderness)
        self._sort_key: Callable[[Any], Any] | None = comparator_key(options.comparator)
        self._clock = ProcessingClock(options.clock)
        self._raise = options.on_error == "raise"
        self._starts_nothing: Callable[[Any], bool] | None = self.nfa.starts_nothing
        # the window timer's offset in event time (Flink registers one per new partial match), 0: none
        self._window_timer = (
            self.nfa.window_time if self.nfa.window_time > 0 and not self.processing_time else 0
        )
        self._reset()
        self._step = self._choose_step()
        # (the same rule as the generated step's: the fused step leaves a limit to the general path)
        self._chain: ChainLoop | None = (
            chain_loop(self.nfa, self._window_timer)
            if self._fast and self.CHAIN_LOOP and self.options.partial_match_limit is None
            else None
        )

    def _choose_step(self) -> Callable[..., list[Any]]:
        """``NFA.process``, or the pattern's generated step where the fast paths are on, keys keep
        no paths and no partial-match limit counts (the fused step's rule, see ``_elements``):
        compiled when first used (``LazyStep``; ``_resolve_step`` keeps the step itself then)."""
        if (
            self._fast
            and self.GENERATED_STEP
            and self._pathless is not None
            and self._limiter is None
            and refusal(self.nfa) is None
        ):
            return LazyStep(self.nfa)
        return self.nfa.process

    def _resolve_step(self) -> None:
        """Keep the compiled step itself instead of its ``LazyStep`` (once per batch, before the
        per-element paths call it)."""
        step = self._step
        if isinstance(step, LazyStep):
            self._step = step.resolved()

    def _reset(self) -> None:
        self._keys: dict[Any, KeyState] = {}
        # keys whose state went while window timers they registered are still to fire: Flink
        # keeps those timers, and one that fires after the key got state again advances it
        # (docs/runtime.md). Each is its KeyState with nothing but its timers (state None),
        # scheduled at the first: when the last has fired the key leaves.
        self._idle: dict[Any, KeyState] = {}
        # only skip strategies that prune by the paths of matches read them from the shared
        # buffer; otherwise runs carry their partial matches and one buffer without paths
        # numbers the events of every key (docs/internals.md): a key's ids stay in the order it
        # takes its events, all that they are compared for, and there is one object per key
        # less for the garbage collector to walk (with many keys, much of its work). None: a
        # buffer per key.
        self._pathless: PathlessBuffer | None = None if self.nfa.needs_paths() else PathlessBuffer()
        self._sched = Schedule()
        self._clock = ProcessingClock(self._clock.read)  # (an operator copied from a template has its own)
        self._next_seq = 0
        self._watermark = LONG_MIN
        self._max_timestamp = LONG_MIN
        self._resume = False  # a firing was interrupted by an exception
        self._errors: list[tuple[BadRecord, Any, BaseException | None]] = []  # to raise (on_error="raise")
        self.events_in = 0
        self.late = 0
        self.matches = 0
        self.timeouts = 0
        self.bad_records = 0
        # the key whose element the NFA runs (its conditions read it: RuntimeContext), or whose
        # result the pull API hands to its function: see current_key
        self._current: KeyState | None = None
        self._current_key: Any = None
        # None without a limit: the per-element path then checks nothing (flowcep.runtime.limits)
        limit = self.options.partial_match_limit
        self._limiter: Limiter | None = (
            None if limit is None else Limiter(limit, 0 if self.nfa.window_times else self._window_timer)
        )

    # ------------------------------------------------------------------ public API

    @property
    def current_key(self) -> Any:
        """The key whose element the NFA runs (its conditions read it: ``RuntimeContext``), or
        whose result the pull API hands to its function (it sets it)."""
        # the firing points at the key's record, not its key: with many keys, reading the key
        # object itself would be one more cache miss per key fired
        ks = self._current
        return self._current_key if ks is None else ks.key

    @current_key.setter
    def current_key(self, key: Any) -> None:
        self._current = None
        self._current_key = key

    @property
    def current_watermark(self) -> int:
        return self._watermark

    @property
    def fast_paths_enabled(self) -> bool:
        """True: checks are written out on the per-element path. False: a ``ReferenceOperator``
        (``flowcep.runtime.reference``), which calls each where it is defined."""
        return self._fast

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

    def process_key_history(self, events: Sequence[Any], times: Sequence[int]) -> list[Output]:
        """One key's whole input, in time order, then the end of input: what
        ``process_element(event, time)`` for each and then ``flush()`` return, in the same order
        (``process_key_elements`` to the final watermark, then ``flush``). For a batch
        (``flowcep.connectors``)."""
        out = self.process_key_elements(events, times, LONG_MAX)
        out.extend(self.flush())
        return out

    def process_key_elements(
        self, events: Sequence[Any], times: Sequence[int], watermark: int
    ) -> list[Output]:
        """Elements of one key, in time order, and that key's firing at ``watermark``; the
        caller then calls ``process_watermark(watermark)`` for the other keys.

        Together, for each key, the outputs and state of ``process_element(event, time)`` for
        each element and then ``process_watermark(watermark)``, in the same order per key (keys'
        outputs may interleave otherwise). The key's elements up to ``watermark`` go to the NFA
        at once, with the calls its firing would make, instead of being buffered first; late
        ones come out as late, later ones are buffered. The events must share one key and
        ``times`` must not decrease (a ValueError names the first that does). With the
        operator's own watermark (``out_of_orderness`` not None: its elements would move it), a
        comparator, a partial-match limit, ``on_error="raise"``, in processing time, or when the
        key has elements buffered, the elements go through ``process_element`` one by one. An exception other than a condition's leaves the operator to be
        reset or restored.
        """
        if (
            self.processing_time
            or self._out_of_orderness is not None
            or self._sort_key is not None
            or not self._fast
            or self._resume
            or self._raise
            or self._limiter is not None
            or watermark <= self._watermark
            or not events
        ):
            return self._buffer_elements(events, times)
        key_by = self._key_by
        try:
            key = None if key_by is None else key_by(events[0])
            ks: KeyState | None = self._keys.get(key)
        except Exception:  # the general path reports it as a bad record
            return self._buffer_elements(events, times)
        if ks is not None and ks.head is not EMPTY:
            return self._buffer_elements(events, times)
        if self._step.__class__ is LazyStep:
            self._resolve_step()
        out: list[Output] = []
        current = self._watermark
        starts_nothing = self._starts_nothing
        nfa = self.nfa
        feed = self._feed_event
        state = None if ks is None else ks.state
        last = last_fed = LONG_MIN
        taken = 0
        fed = False  # an element went to the NFA: the key fires at the watermark
        for event, t in zip(events, times):
            if t != last:
                if type(t) is not int or not last < t <= LONG_MAX:
                    raise ValueError(
                        f"process_key_elements: times must be ascending event times in ms; "
                        f"{t!r} follows {last!r} (element {event!r})"
                    )
                last = t
                if t > watermark:  # these wait in the key's buffer
                    break
            taken += 1
            if t <= current:  # (_elements' test)
                self.late += 1
                out.append(Output(LATE, key, event, t))
                continue
            if ks is None or state is None:  # (state: None exactly when ks is)
                # _elements' rule: an inert element does not give a key without state any
                if starts_nothing is not None and t <= current + 1 and starts_nothing(event):
                    continue
                ks = self._new_key(key)
                state = ks.state
            fed = True
            if t != last_fed:
                last_fed = t
                # _fire_time's own test before its call (a new time first times out what it ends)
                deadline = ks.deadline
                if deadline is UNKNOWN:
                    deadline = ks.deadline = nfa.next_deadline(state)
                if (deadline is not None and deadline <= t) or state.completed_matches.queue:
                    self._advance(ks, t, out)
            feed(ks, event, t, out)
        self.events_in += taken
        if taken and times[taken - 1] > self._max_timestamp:
            self._max_timestamp = times[taken - 1]
        if taken < len(events):
            out.extend(self._buffer_elements(events[taken:], times[taken:]))
        if fed:
            assert ks is not None
            ks.due = NOT_DUE  # off the schedule (a listing lapses, see Schedule): it fires here
            self._fire_key(ks, watermark, out)
        return out

    def _buffer_elements(self, events: Sequence[Any], times: Sequence[int]) -> list[Output]:
        out: list[Output] = []
        for event, t in zip(events, times):
            out.extend(self.process_element(event, t))
        return out

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
                self._fire_processing_time(self._clock.now(), out)
            if self._errors:
                self._raise_errors(out)
            return out
        try:
            watermark = to_timestamp(timestamp)
        except TimestampError as exc:
            raise ValueError(f"invalid watermark: {exc}") from None
        if watermark > self._watermark:
            self._watermark = watermark
            self._fire(watermark, out)
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

    def advance_processing_time(self, now: int | None = None) -> list[Output]:
        """Time out the partial matches whose window ended by ``now`` (None: the clock's time), in
        every key, without an element (``quiet_timeouts=True`` only: Flink times out only when an
        element arrives). Processing time then is at least ``now`` for later elements."""
        if not self.options.quiet_timeouts:
            raise ValueError("advance_processing_time needs an operator with quiet_timeouts=True")
        out: list[Output] = []
        if self._resume:
            self._resume_firing(out)
        clock = self._clock
        if now is None:
            at = clock.now()
        else:
            try:
                at = to_timestamp(now)
            except TimestampError as exc:
                raise ValueError(f"invalid processing time: {exc}") from None
            at = clock.last = max(at, clock.last)
        if self._sort_key is not None:
            self._fire_processing_time(at, out)
        for key, ks in list(self._keys.items()):
            self._advance(ks, at, out)
            if ks.state.is_empty() and ks.head is EMPTY and ks.due is NOT_DUE:
                del self._keys[key]
        if self._errors:
            self._raise_errors(out)
        return out

    def next_processing_timeout(self) -> int | None:
        """With ``quiet_timeouts``: the earliest processing time at which
        ``advance_processing_time`` times a partial match out or releases comparator-buffered
        elements (None: only new elements can); in time proportional to the keys."""
        nfa = self.nfa
        first = self.next_deadline()
        for ks in self._keys.values():
            deadline = ks.deadline
            if deadline is UNKNOWN:
                deadline = ks.deadline = nfa.next_deadline(ks.state)
            if deadline is not None and (first is None or deadline < first):
                first = deadline
        return first

    def next_deadline(self) -> int | None:
        """The smallest watermark at which a call may produce output or drop state (None: only
        new elements can): the earliest timer of any key, a buffered timestamp or a window
        timer, also one of a key that holds nothing else (see ``has_state``).

        In processing time with a comparator: the clock time at which buffered elements are due.
        """
        if self.processing_time and self._sort_key is None:
            return None
        return self._sched.first_due()

    def has_state(self) -> bool:
        """Whether any key holds buffered elements, partial matches or window timers (Flink keeps
        a key's timers when its state goes: until they fired, a later element of the key is
        advanced at them)."""
        return bool(self._keys) or bool(self._idle)

    def stats(self) -> dict[str, int]:
        """Counters and gauges (gauges are computed on call, in time proportional to the state)."""
        partial = 0
        held = 0
        entries = 0
        held_back, _ = self._held_back()
        for ks in self._keys.values():
            partial += ks.state.partial_match_count()
            entries += self.nfa.held_entries(ks.buffer, ks.state)
            for _, elements in buffered(ks):
                held += len(elements) if type(elements) is Several else 1
        return {
            "events_in": self.events_in,
            "late": self.late,
            "matches": self.matches,
            "timeouts": self.timeouts,
            "bad_records": self.bad_records,
            "partial_matches": partial,
            "held_back_matches": held_back,
            "buffered_events": held,
            "shared_buffer_entries": entries,
            "keys": len(self._keys),
            "watermark": self._watermark,
            "max_event_time": self._max_timestamp,
            "dropped_partial_matches": 0 if self._limiter is None else self._limiter.dropped,
        }

    def open(self, context: Any = None) -> None:
        """Open the pattern's ``RichIterativeCondition``s with ``context`` (a ``RuntimeContext``
        in the embedded runtime): once before the first element. ``CEP.pattern`` and the
        connectors call it; so does ``with operator:``."""
        open_operator(self.pattern, context)

    def close(self) -> None:
        """Close the pattern's ``RichIterativeCondition``s: once after the last element."""
        close_operator(self.pattern)

    def __enter__(self) -> CepOperator:
        self.open(RuntimeContext(self.stats, keyed=self))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        ks.due = NOT_DUE  # listed in the schedule still, but no longer due there
        if self._limiter is not None:
            self._limiter.forget(key)
        return True

    def keys(self) -> list[Any]:
        """The keys that hold anything (buffered elements, partial matches or window timers)."""
        return [*self._keys, *self._idle]

    def buffered_elements(self) -> list[tuple[int, Any]]:
        """The elements taken but not matched yet (ahead of the watermark; in processing time,
        those a comparator holds back) as ``(timestamp, element)``: each key's in the order it
        would match them, the keys in the order they got state."""
        return [
            (t, e) for ks in self._keys.values() for t, elements in buffered(ks) for e in as_list(elements)
        ]

    # ------------------------------------------------------------------ snapshots

    def snapshot(self, *, canonical: bool = True) -> bytes:
        """All per-key state, watermark and counters as versioned bytes.

        ``canonical`` (the default): deterministic bytes, equal for equal states.
        ``canonical=False``: a plain pickle in the same format, about three times faster to
        take; what the connectors store per micro-batch. ``restore`` reads both.
        """
        return self._snapshot_record().encode(self.fingerprint, canonical)

    def _snapshot_record(self) -> OperatorSnapshot:
        pathless = self._pathless
        keys = [
            KeySnapshot(
                ks.key,
                ks.seq,
                list(ks.timers),
                ks.state,
                # a buffer that keeps no paths (shared by all keys): the runs' partial matches instead
                ks.buffer if pathless is None else None,
                [(t, as_list(elements)) for t, elements in buffered(ks)],
                None if pathless is None else self.nfa.run_matches(ks.buffer, ks.state),
            )
            for ks in self._keys.values()
        ]
        return OperatorSnapshot(
            PROCESSING_TIME if self.processing_time else EVENT_TIME,
            self._watermark,
            self._max_timestamp,
            self._clock.last,
            self._next_seq,
            self._resume,
            (
                self.events_in,
                self.late,
                self.matches,
                self.timeouts,
                self.bad_records,
                0 if self._limiter is None else self._limiter.dropped,
            ),
            keys,
            None if pathless is None else pathless.events_count,
            [(ks.key, list(ks.timers)) for ks in self._idle.values()],
        )

    def restore(self, data: bytes) -> None:
        """Replace all state by a snapshot's; ``SnapshotError`` for other formats or patterns."""
        record = OperatorSnapshot.decode(data, self.fingerprint)
        mine = PROCESSING_TIME if self.processing_time else EVENT_TIME
        if record.mode != mine:
            raise SnapshotError(f"snapshot was taken in {record.mode} mode, this operator runs in {mine}")
        keeps_paths = self._pathless is None
        try:
            if type(record.event_counts) is not (type(None) if keeps_paths else dict):
                raise ValueError("its event counters do not fit the pattern's skip strategy")
            for k in record.keys:
                if keeps_paths != (type(k.buffer) is SharedBuffer) or (k.run_matches is None) != keeps_paths:
                    raise ValueError("a key's shared buffer does not fit the pattern's skip strategy")
                if k.run_matches is not None:
                    self.nfa.restore_run_matches(k.state, k.run_matches)
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt flowcep snapshot payload: {exc}") from None
        self._reset()
        pathless = self._pathless
        if pathless is not None and isinstance(record.event_counts, dict):  # checked above
            pathless.events_count = record.event_counts
        self._watermark = record.watermark
        self._max_timestamp = record.max_timestamp
        self._clock.last = record.last_now
        self._next_seq = record.next_seq
        self._resume = record.resume
        self.events_in, self.late, self.matches, self.timeouts, self.bad_records, dropped = record.counters
        if self._limiter is not None:  # (an operator without a limit drops nothing, and counts none)
            self._limiter.dropped = dropped
        scheduled = not self.processing_time or self._sort_key is not None
        for k in record.keys:
            ks = KeyState(k.key, k.seq, k.state, k.buffer if pathless is None else pathless)
            ks.timers = list(k.timers)
            restore_queue(ks, k.queue)
            self._keys[k.key] = ks
            if scheduled:
                self._schedule(ks)
        for key, timers in record.idle:
            ks = KeyState(key, 0, None, NO_BUFFER)
            ks.timers = timers
            self._idle[key] = ks
            self._schedule(ks)
        if self._limiter is not None:
            for ks in self._keys.values():
                self._limiter.recount(ks)

    def _check(self) -> None:
        """Assert the invariants of every key's queue and of the schedule (for tests: between
        calls, after one that raised nothing)."""
        scheduled = []
        for ks in [*self._keys.values(), *self._idle.values()]:
            ks._check()
            assert (ks.state is None) == (ks.key in self._idle), (
                f"key {ks.key!r} is idle exactly without state"
            )
            due = ks.first_due(self.processing_time)
            assert ks.due == (NOT_DUE if due is None else due), f"key {ks.key!r} due at {ks.due}, not {due}"
            if due is not None:
                scheduled.append(ks)
        self._sched._check(scheduled)

    # ------------------------------------------------------------------ keys

    def _new_key(self, key: Any) -> KeyState:
        buffer = self._pathless if self._pathless is not None else SharedBuffer()
        idle = self._idle
        ks = idle.pop(key, None) if idle else None
        if ks is None:
            ks = KeyState(key, self._next_seq, self.nfa.create_initial_state(), buffer)
        else:
            # state again for a key with window timers left: they stay, scheduled as they are
            ks.seq = self._next_seq
            ks.state = self.nfa.create_initial_state()
            ks.buffer = buffer
        self._next_seq += 1
        self._keys[key] = ks
        return ks

    def _keep_timers(self, ks: KeyState) -> None:
        """The key's state goes, its window timers (some left) stay, as in Flink's CepOperator."""
        ks.state = None
        ks.buffer = NO_BUFFER
        ks.times = ks.pending = None
        ks.deadline = UNKNOWN
        self._idle[ks.key] = ks
        self._sched.push(ks, ks.timers[0])

    def _buffer(self, ks: KeyState, event: Any, ts: int) -> None:
        """Buffer ``event`` at ``ts`` under the key and schedule the key if ``ts`` is due before it
        was (the usual cases are written out in ``_elements``)."""
        if insert(ks, event, ts):
            due_at = ts + 1 if self.processing_time else ts
            due = ks.due
            if due is NOT_DUE or due_at < due:
                self._sched.push(ks, due_at)

    def _schedule(self, ks: KeyState) -> None:
        """Schedule the key at its next due time (``KeyState.first_due``), if any."""
        due = ks.first_due(self.processing_time)
        if due is None:
            ks.due = NOT_DUE
        else:
            self._sched.push(ks, due)

    def _settle(self, ks: KeyState) -> None:
        """After a key fired: drop its state if nothing is pending (its window timers stay), else
        schedule it again."""
        if ks.head is EMPTY and ks.state.is_empty():
            if self._keys.get(ks.key) is ks:
                del self._keys[ks.key]
            if ks.timers:
                self._keep_timers(ks)
            else:
                ks.due = NOT_DUE
        else:
            self._schedule(ks)

    def _forget_counters(self, ks: KeyState, watermark: int) -> None:
        """After the key fired at ``watermark``: its own buffer (one that keeps paths) forgets the
        arrival counters of the timestamps it is done with, those before the watermark or, when
        the firing raised, before its first element still to be processed. An element of that
        time is numbered on from the elements of its time already stored: a counter forgotten
        too early gives it the id of a stored event, which it then overwrites."""
        if self._pathless is None:
            ks.buffer.advance_time(watermark if ks.head is EMPTY or ks.head_ts > watermark else ks.head_ts)

    def _stopped_firing(self, ks: KeyState, due: int | None, watermark: int) -> None:
        """The key's firing at ``watermark``, which it was due for at ``due``, stopped (an
        exception other than a condition's): the key keeps a timer at ``due`` in place of its
        timers through the watermark, so that it stays due and the next call's firing
        (``_resume_firing``) finishes it: the elements left of the key, then its time advanced to
        the watermark (timeouts, matches held back), in its place among the keys. In Flink the
        job fails and restarts from a checkpoint, where that timer is still registered. (A key
        fired unscheduled, by ``process_key_elements``, stays due at the watermark.)"""
        if due is None or due > watermark:
            due = watermark
        timers = ks.timers
        del timers[: count_through(timers, watermark)]
        timers.insert(0, due)

    def _stopped_element(self, watermark: int) -> None:
        """An element stopped the stream as ``_elements`` took it, before it was buffered: it is
        dropped, as a stop drops the element it stops on in a firing, but the watermark it
        generates stands, as it would have once the element was buffered, and the next call
        fires it (``_resume_firing``): the element's time counts as in Flink, whose watermark
        generator sees it before the operator does."""
        if watermark > self._watermark:
            self._watermark = watermark
            self._resume = True

    def _resume_firing(self, out: list[Output]) -> None:
        self._resume = False
        if self.processing_time:
            self._fire_processing_time(self._clock.last, out)
        else:
            self._fire(self._watermark, out)

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

    def _bad_timestamp(self, event: Any, exc: Exception, out: list[Output]) -> None:
        self._bad(event, None, None, f"timestamp extractor raised {exc_text(exc)}", STAGE_TIMESTAMP, exc, out)

    def _bad_timestamp_value(self, event: Any, exc: TimestampError, out: list[Output]) -> None:
        """The extractor's value is no timestamp (``to_timestamp`` says why)."""
        self._bad(event, None, None, str(exc), STAGE_TIMESTAMP, None, out)

    def _bad_key(self, event: Any, ts: int, exc: Exception, out: list[Output]) -> None:
        self._bad(event, None, ts, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, exc, out)

    def _raise_errors(self, out: list[Output]) -> None:
        errors, self._errors = self._errors, []
        bad, key, cause = errors[0]
        raise BadRecordError(bad, key, out, [b for b, _, _ in errors]) from cause

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

    # ------------------------------------------------------------------ event time: the per-element path

    def _elements(self, events: Iterable[Any], timestamp: int | None, out: list[Output]) -> None:
        """Take each element: late, or buffered under its key and timestamp; then advance the
        watermark it generates. ``timestamp`` (not None) overrides the extractor. One loop for
        a whole batch: what stays fixed is read once per batch, not once per element (a call per
        element cost measurably more; docs/runtime.md §8)."""
        if self._step.__class__ is LazyStep:
            self._resolve_step()
        if self.processing_time:
            for event in events:
                self.events_in += 1
                self._element_in_processing_time(event, out)
            return
        extractor = self._timestamp
        key_by = self._key_by
        keys = self._keys
        ooo = self._out_of_orderness
        fast = self._fast
        # the fused step of ordered input (_fire_head_alone) leaves a partial-match limit to the
        # general path (_feed_event checks it), so that the limit has one home
        fuse = fast and self._limiter is None
        # the range of a timestamp taken as it is; an empty one in the reference (to_timestamp)
        low, high = (LONG_MIN, LONG_MAX) if fast else (1, 0)
        # an inert element may skip a key without state only without a comparator (below)
        starts_nothing = self._starts_nothing if self._sort_key is None else None
        # A key the fused step fired last, off the schedule while ordered elements of it keep
        # coming (_park): each of those then skips two heap operations. Any other element first
        # puts it back (_unpark), before anything reads the schedule, and so does the end.
        sched = self._sched
        dues = sched.dues
        # the time the last element's key was scheduled at, and the keys listed there: with many
        # keys, most elements of one time schedule their key there, each then without a lookup
        # (a listed time leaves the schedule only once the watermark passed it, and no element
        # is scheduled at such a time any more)
        listed_at = NOT_DUE
        listed: list[KeyState] = []
        parked: KeyState | None = None
        # the fused step takes the parked key's next elements from the same iterator while they
        # fit (_fire_head_alone), and hands back the first that does not
        it = iter(events)
        rest = it if timestamp is None and extractor is not None and ooo is not None else None
        # a chain pattern's loop takes over where it can go on with the iterator
        fire_alone = (
            self._fire_chain if self._chain is not None and rest is not None else self._fire_head_alone
        )
        try:
            for event in it:
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
                        self._bad_timestamp(event, exc, out)
                        continue
                if type(raw) is int and low <= raw <= high:
                    ts: int = raw
                else:
                    try:
                        ts = to_timestamp(raw)
                    except TimestampError as exc:
                        self._bad_timestamp_value(event, exc, out)
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
                        self._bad_key(event, ts, exc, out)
                        continue
                # (again for an element the fused step hands back: its timestamp and key known)
                while True:
                    # the watermark this element generates (advanced once it is buffered)
                    current = self._watermark
                    watermark = current
                    if ts > self._max_timestamp:
                        self._max_timestamp = ts
                        if ooo is not None and ts - ooo - 1 > watermark:
                            watermark = ts - ooo - 1
                    if parked is not None and ks is not parked:
                        self._unpark(parked)
                        parked = None
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
                        if ks is None:
                            try:
                                inert = (
                                    starts_nothing is not None
                                    and ts <= watermark + 1
                                    and starts_nothing(event)
                                )
                            except BaseException:
                                # a stop (a condition's other exceptions make False): the element
                                # is dropped, as in a firing, where it would stop otherwise
                                self._stopped_element(watermark)
                                raise
                            if not inert:
                                ks = self._new_key(key)
                        if ks is not None:
                            if not fast:
                                self._buffer(ks, event, ts)
                            elif ks.head is EMPTY:
                                ks.head = event
                                ks.head_ts = ts
                                due = ks.due
                                if due is NOT_DUE or ts < due:
                                    if ts == listed_at:
                                        listed.append(ks)
                                        ks.due = ts
                                    else:
                                        sched.push(ks, ts)
                                        listed_at = ts
                                        listed = sched.due_keys[ts]
                            else:
                                times = ks.times
                                if fuse and not times and current < watermark and watermark >= ks.head_ts:
                                    if ks is parked:
                                        if not dues or dues[0] > watermark:
                                            left = fire_alone(ks, event, ts, watermark, out, rest)
                                            if left is None:
                                                break
                                            event, ts, key, ks = left
                                            continue
                                        self._unpark(ks)
                                        parked = None
                                    elif self._park(ks, watermark):
                                        parked = ks
                                        left = fire_alone(ks, event, ts, watermark, out, rest)
                                        if left is None:
                                            break
                                        event, ts, key, ks = left
                                        continue
                                if parked is not None:  # (the parked key, on the general path)
                                    self._unpark(ks)
                                    parked = None
                                # after the head: the usual cases, a time after the last or equal to it,
                                # written out (_buffer does the others)
                                last = times[-1] if times else ks.head_ts
                                if ts > last and times is not None:
                                    times.append(ts)
                                    ks.pending.append(event)  # type: ignore[union-attr]  # (a list with times)
                                    if ks.due is NOT_DUE:  # (a key with buffered elements is scheduled)
                                        self._sched.push(ks, ks.head_ts)
                                elif ts == last and times:
                                    add(ks.pending, len(times) - 1, event)  # type: ignore[arg-type]
                                else:
                                    self._buffer(ks, event, ts)
                    if watermark > current:
                        self._watermark = watermark
                        self._fire(watermark, out)
                    break
                    break
        finally:
            if parked is not None:
                self._unpark(parked)

    def _fire(self, watermark: int, out: list[Output]) -> None:
        """Run every key that has buffered elements or timeouts due at ``watermark``."""
        sched = self._sched
        dues = sched.dues
        if not dues or dues[0] > watermark:  # (Schedule.is_due's test, but for a time no key is due at)
            return
        entries = sched.due_keys[dues[0]]
        if len(entries) == 1 and (
            len(dues) == 1 or dues[1] > watermark and (len(dues) == 2 or dues[2] > watermark)
        ):
            # one entry due (the usual case with few keys): no list, no sort
            at = heapq.heappop(dues)
            del sched.due_keys[at]
            ks = entries[0]
            if ks.due != at:
                return
            ks.due = NOT_DUE
            try:
                self._fire_key(ks, watermark, out)
            except BaseException:
                self._resume = True
                raise
        else:
            self._fire_lone_heads(sched.pop_due(watermark, self._next_seq), watermark, out)
        pathless = self._pathless
        if pathless is not None and len(pathless.events_count) > STALE_COUNTERS:
            # no element at or before the watermark is processed after this firing: the
            # arrival counters of those timestamps can go (PathlessBuffer.advance_time's own
            # test, first without the call)
            pathless.advance_time(watermark)

    def _park(self, ks: KeyState, watermark: int) -> bool:
        """Take ``ks`` off the schedule for the fused step (``_fire_head_alone``) if it is the one
        key due by ``watermark``, due at its head, which is one element: True. False (nothing
        done): the schedule has something else due (the caller then takes the general path)."""
        t = ks.head_ts
        dues = self._sched.dues
        if (
            ks.due != t
            or dues[0] != t
            or type(ks.head) is Several
            or not (len(dues) == 1 or dues[1] > watermark and (len(dues) == 2 or dues[2] > watermark))
        ):
            return False
        due_keys = self._sched.due_keys
        if len(due_keys[t]) != 1:
            return False
        del due_keys[t]
        heapq.heappop(dues)
        ks.due = NOT_DUE
        return True

    def _unpark(self, ks: KeyState) -> None:
        """Schedule a parked key (``_park``) again, at its head or its first window timer."""
        first = ks.head_ts
        timers = ks.timers
        self._sched.push(ks, timers[0] if timers and timers[0] < first else first)

    def _fire_head_alone(
        self,
        ks: KeyState,
        event: Any,
        ts: int,
        watermark: int,
        out: list[Output],
        rest: Iterator[Any] | None = None,
    ) -> tuple[Any, int, Any, KeyState | None] | None:
        """The usual step of ordered input, fused: ``event`` at ``ts`` comes to a key that buffers
        one element, its head, and the watermark it generates makes that key, alone, due at its
        head; the key is off the schedule (``_park``: nothing else is due by ``watermark``).
        Buffering ``event`` and then ``_fire(watermark)`` would put ``event`` in the key's lists,
        fire the head and move ``event`` up to the head; here ``event`` becomes the head at once
        and the old head is processed as ``_fire_key`` does. The key stays off the schedule: the
        caller puts it back (``_unpark``) before anything else reads the schedule.

        With ``rest`` (the caller's iterator of elements, read with the operator's extractors),
        the step goes on with the elements that follow, each taken as ``_elements`` would take it,
        while each is this key's, later than its head, and its watermark makes nothing else due:
        the first that is not comes back with its timestamp, key and key state, for the caller's
        general path (None: nothing comes back, ``rest`` ran out).

        Same outputs, state and schedule as the general path (``ReferenceOperator`` is held to
        both by the property tests); an exception leaves the key and the operator as ``_fire``
        would once the key is back on the schedule (``event`` buffered, the firing to resume).
        """
        step = self._step
        nfa = self.nfa
        window_time = self._window_timer  # 0: no window timers
        pathless = self._pathless
        state = ks.state
        buffer = ks.buffer
        timers = ks.timers
        key = ks.key
        keys = self._keys
        extractor = self._timestamp
        key_by = self._key_by
        lag = self._out_of_orderness or 0  # (not None: the watermark comes from the elements)
        dues = self._sched.dues
        high = LONG_MAX
        # the arrival counters of the buffer all keys share (none: the key has a buffer of its own)
        counters: dict[int, int] = {} if pathless is None else pathless.events_count
        stale = STALE_COUNTERS
        self._current = ks
        while True:
            head = ks.head
            t = ks.head_ts
            self._watermark = watermark
            if timers and timers[0] <= watermark:
                del timers[: count_through(timers, watermark)]
            taken = False  # the head was taken, the element took its place
            try:
                # _fire_key's head, one element (its comments say why each test is written out)
                deadline = ks.deadline
                if deadline is UNKNOWN:
                    deadline = ks.deadline = nfa.next_deadline(state)
                if (deadline is not None and deadline <= t) or state.completed_matches.queue:
                    self._advance(ks, t, out)
                ks.head = event
                ks.head_ts = ts
                taken = True  # (consumed, also if processing it raises: see _feed)
                # _feed_event written out (the call is a fifth of this path's own cost)
                try:
                    matches = step(buffer, state, head, t)
                except ConditionError as exc:
                    self._condition_failed(ks, head, t, exc, out)
                    matches = None  # (the runs are unchanged, no start run took the element)
                except BaseException:
                    ks.deadline = UNKNOWN
                    raise
                if state.runs_changed:
                    state.runs_changed = False
                    ks.deadline = UNKNOWN
                    # (a start run took the element: the step changed the runs)
                    if state.new_start_partial_match and window_time:
                        due = t + window_time
                        if not timers or due > timers[-1]:
                            timers.append(due)
                        else:
                            at = bisect_left(timers, due)
                            if timers[at] != due:
                                timers.insert(at, due)
                        # a timer at or before the watermark fires at once in Flink, only to
                        # advance time to the watermark again, which changes nothing
                        if due <= watermark:
                            del timers[: count_through(timers, watermark)]
                    state.new_start_partial_match = False
                if matches:
                    self.matches += len(matches)
                    for match in matches:
                        out.append(make_output(MATCH, key, match, t))
                deadline = ks.deadline
                if deadline is UNKNOWN:
                    deadline = ks.deadline = nfa.next_deadline(state)
                if (deadline is not None and deadline <= watermark) or state.completed_matches.queue:
                    self._advance(ks, watermark, out)
            except BaseException:
                if not taken:
                    insert(ks, event, ts)  # buffered behind the head, as the general path has it
                state.new_start_partial_match = False
                self._stopped_firing(ks, t, watermark)  # (parked: it was due at its head)
                self._resume = True
                raise
            finally:
                if pathless is None:
                    buffer.advance_time(watermark)
                # (the timers the step registered were trimmed to the watermark as they came)
            if len(counters) > stale:
                pathless.advance_time(watermark)  # type: ignore[union-attr]  # (counters: it is there)
            if rest is None:
                return None
            head_ts = ts
            # the next element, taken as _elements takes it (its bad records included)
            for event in rest:
                self.events_in += 1
                try:
                    raw = extractor(event)  # type: ignore[misc]  # (rest: there is an extractor)
                except Exception as exc:
                    self._bad_timestamp(event, exc, out)
                    continue
                if type(raw) is int and head_ts < raw <= high:
                    ts = raw
                else:  # (an int at or before the head is in range or a bad record: to_timestamp)
                    try:
                        ts = to_timestamp(raw)
                    except TimestampError as exc:
                        self._bad_timestamp_value(event, exc, out)
                        continue
                if key_by is None:
                    other = None
                    found = keys.get(None)
                else:
                    try:
                        other = key_by(event)
                        found = keys.get(other)
                    except Exception as exc:
                        self._bad_key(event, ts, exc, out)
                        continue
                # fused again: the key's, its watermark past the head (so later than anything the
                # operator saw, and the watermark advances: the head is the latest element and the
                # watermark lag + 1 behind it) and nothing else due by that watermark
                after = ts - lag - 1
                if found is not ks or after < head_ts or (dues and dues[0] <= after):
                    return event, ts, other, found
                self._max_timestamp = ts
                watermark = after
                break
            else:
                return None

    def _fire_chain(
        self, ks: KeyState, event: Any, ts: int, watermark: int, out: list[Output], rest: Iterator[Any] | None
    ) -> tuple[Any, int, Any, KeyState | None] | None:
        """``_fire_head_alone`` for a chain pattern (``flowcep.runtime.chainloop``): its loop,
        where the key's state has the chain's shape, else ``_fire_head_alone`` itself."""
        chain: ChainLoop = self._chain  # type: ignore[assignment]  # (set: the caller checked)
        entered = chain.enter(ks, self._pathless)
        if entered is None:
            return self._fire_head_alone(ks, event, ts, watermark, out, rest)
        left: tuple[Any, int, Any, KeyState | None] | None = chain.loop()(
            self, ks, event, ts, watermark, out, rest, *entered
        )
        return left

    def _fire_keys(self, due: list[KeyState], watermark: int, out: list[Output]) -> None:
        """Fire the keys ``due`` (off the schedule) in order; if one raises, schedule the rest
        again and resume the firing on the next call."""
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

    def _fire_lone_heads(self, due: list[KeyState], watermark: int, out: list[Output]) -> None:
        """``_fire_keys`` with the usual key written out: one that buffers one element, its head,
        at or before ``watermark`` (many keys due at once, each with the element of one time).
        Its head is processed and the key scheduled again as ``_fire_key`` does, without its
        calls, its loop and its ``finally``; any other key goes through ``_fire_key``. Keys that
        share a buffer without paths and no partial-match limit, on CPython (``_fire_keys``
        otherwise: ``LONE_HEADS``).

        Same outputs, state and schedule as ``_fire_keys`` (``ReferenceOperator`` is held to it
        by the property tests), also when a key raises: it is settled as ``_fire_key`` leaves
        it, the keys after it are scheduled again and the firing resumes on the next call.
        """
        if self._limiter is not None or self._pathless is None or not self.LONE_HEADS:
            self._fire_keys(due, watermark, out)
            return
        step = self._step
        next_deadline = self.nfa.next_deadline
        advance_time = self.nfa.advance_time
        window_time = self._window_timer  # 0: no window timers
        sched = self._sched
        keys = self._keys
        # the list of the time the last key was scheduled at: with many keys firing at once, most
        # are scheduled again at one time (their window timer), each then without a lookup
        last_at = NOT_DUE
        last_listed: list[KeyState] = []
        done = 0
        try:
            for ks in due:
                head = ks.head
                state = ks.state
                t = ks.head_ts
                if state is None or head is EMPTY or t > watermark or ks.times or type(head) is Several:
                    self._fire_key(ks, watermark, out)
                    done += 1
                    continue
                timers = ks.timers
                fired_at = t  # when it was due: its head, or its first timer (for a stop, below)
                if timers and timers[0] <= watermark:
                    if timers[0] < t:
                        fired_at = timers[0]
                    # (all of them at the end of input)
                    del timers[: len(timers) if timers[-1] <= watermark else count_through(timers, watermark)]
                try:
                    # _fire_key's head, one element, and _feed_event (their comments say why each
                    # test is written out)
                    deadline = ks.deadline
                    if deadline is UNKNOWN:
                        deadline = ks.deadline = next_deadline(state)
                    if (deadline is not None and deadline <= t) or state.completed_matches.queue:
                        self._advance(ks, t, out)
                    ks.head = EMPTY  # consumed, also if processing it raises (see _feed)
                    self._current = ks
                    try:
                        matches = step(ks.buffer, state, head, t)
                    except ConditionError as exc:
                        self._condition_failed(ks, head, t, exc, out)
                        matches = None  # (the runs are unchanged, no start run took the element)
                    except BaseException:
                        ks.deadline = UNKNOWN
                        raise
                    if state.runs_changed:
                        state.runs_changed = False
                        ks.deadline = UNKNOWN
                        # (a start run took the element: the step changed the runs)
                        if window_time and state.new_start_partial_match:
                            at = t + window_time
                            # a timer at or before the watermark fires at once in Flink, only to
                            # advance time to the watermark again, which changes nothing: it is
                            # not kept (as the key's were not, above)
                            if at > watermark:
                                if not timers or at > timers[-1]:
                                    timers.append(at)
                                else:
                                    i = bisect_left(timers, at)
                                    if timers[i] != at:
                                        timers.insert(i, at)
                        state.new_start_partial_match = False
                    if matches:
                        self.matches += len(matches)
                        key = ks.key
                        for match in matches:
                            out.append(make_output(MATCH, key, match, t))
                    deadline = ks.deadline
                    if deadline is UNKNOWN:
                        deadline = ks.deadline = next_deadline(state)
                    if deadline is not None and deadline <= watermark:
                        # _advance written out, past its test (at the end of input every key
                        # with partial matches times them out here)
                        ks.deadline = UNKNOWN
                        matches, timed_out = advance_time(ks.buffer, state, watermark)
                        if matches:
                            self.matches += len(matches)
                            key = ks.key
                            for match in matches:
                                out.append(make_output(MATCH, key, match, watermark))
                        if timed_out:
                            self.timeouts += len(timed_out)
                            key = ks.key
                            for partial, at in timed_out:
                                out.append(make_output(TIMEOUT, key, partial, at))
                    elif state.completed_matches.queue:
                        self._advance(ks, watermark, out)
                except BaseException:
                    state.new_start_partial_match = False
                    self._stopped_firing(ks, fired_at, watermark)
                    self._settle(ks)
                    raise
                # _settle written out: the key buffers nothing now; its state goes when it holds
                # only start runs (NFAState.is_empty: they sort last) and nothing held back
                runs = state.queue
                if (not runs or runs[0].order is NO_START) and not state.completed_matches.queue:
                    # its window timers stay
                    key = ks.key
                    if keys.get(key) is ks:
                        del keys[key]
                    if timers:
                        self._keep_timers(ks)
                    else:
                        ks.due = NOT_DUE
                elif timers:
                    at = timers[0]
                    if at == last_at:
                        last_listed.append(ks)
                        ks.due = at
                    else:
                        sched.push(ks, at)
                        last_at = at
                        last_listed = sched.due_keys[at]
                else:
                    ks.due = NOT_DUE
                done += 1
        except BaseException:
            for ks in due[done + 1 :]:
                self._schedule(ks)
            self._resume = True
            raise

    def _fire_key(self, ks: KeyState, watermark: int, out: list[Output]) -> None:
        """Run the key's buffered timestamps up to ``watermark``, then advance it to the
        watermark."""
        state = ks.state
        timers = ks.timers
        if state is None:
            if timers and timers[0] <= watermark:
                del timers[: count_through(timers, watermark)]
            self._fire_idle_key(ks)
            return
        # the key's timers through the watermark stay until its firing is done (a firing that
        # stops keeps the key due: _stopped_firing)
        head = ks.head
        head_taken = False  # the head's elements were all processed (or consumed, see _feed)
        n = done = 0  # later timestamps due, processed
        pending = ks.pending
        try:
            if head is not EMPTY and ks.head_ts <= watermark:
                # the head: _fire_time written out (the usual case, one element, without a loop:
                # on PyPy a loop of one turn splits the trace)
                t = ks.head_ts
                # _advance's own test, first without the call: most timestamps time nothing
                # out (the key's next deadline, computed here once its runs changed)
                deadline = ks.deadline
                if deadline is UNKNOWN:
                    deadline = ks.deadline = self.nfa.next_deadline(state)
                if (deadline is not None and deadline <= t) or state.completed_matches.queue:
                    self._advance(ks, t, out)
                if type(head) is Several:
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
                    n = count_through(times, watermark)
                    while done < n:
                        self._fire_time(ks, times[done], pending, done, out)
                        done += 1
            # also when the last buffered timestamp is the watermark: a run that left a proceed
            # edge by ignoring the event keeps its older previous timestamp and may be due now
            deadline = ks.deadline
            if deadline is UNKNOWN:
                deadline = ks.deadline = self.nfa.next_deadline(state)
            if (deadline is not None and deadline <= watermark) or state.completed_matches.queue:
                self._advance(ks, watermark, out)
            # the timers through the watermark fired; those registered during this firing at or
            # before the watermark fire at once in Flink, only to advance time to the watermark
            # again, which changes nothing
            if timers and timers[0] <= watermark:
                del timers[: count_through(timers, watermark)]
        except BaseException:
            if done < n and pending and consumed(pending[done]):
                done += 1
            # the time it was due at: its head and first timer are still those it fired with
            self._stopped_firing(ks, ks.first_due(False), watermark)
            raise
        finally:
            if head_taken:
                # the first timestamp left becomes the head
                times = ks.times
                pending = ks.pending
                if times is None or pending is None:
                    ks.head = EMPTY
                else:
                    if done < len(times):
                        ks.head_ts = times[done]
                        ks.head = pending[done]
                        done += 1
                    else:
                        ks.head = EMPTY
                    if done:
                        del times[:done]
                        del pending[:done]
            if self._pathless is None:
                # _forget_counters written out (the buffer all keys share forgets its counters
                # once per firing: _fire)
                ks.buffer.advance_time(
                    watermark if ks.head is EMPTY or ks.head_ts > watermark else ks.head_ts
                )
            state.new_start_partial_match = False
            # _settle written out (two calls per firing less, which pays on the hot path:
            # docs/runtime.md §8; no return here: it would swallow an exception): the key's next
            # due time is its first buffered timestamp or its first window timer
            if ks.head is not EMPTY:
                first = ks.head_ts
                self._sched.push(ks, timers[0] if timers and timers[0] < first else first)
            elif state.is_empty():  # nothing pending: the key's state goes, its window timers stay
                if self._keys.get(ks.key) is ks:
                    del self._keys[ks.key]
                if timers:
                    self._keep_timers(ks)
                else:
                    ks.due = NOT_DUE
            elif timers:
                self._sched.push(ks, timers[0])
            else:
                ks.due = NOT_DUE

    def _fire_idle_key(self, ks: KeyState) -> None:
        """A key with nothing but window timers, after those due fired: in Flink their firing
        advances an empty state, which changes nothing; the key leaves with its last timer."""
        if ks.timers:
            self._sched.push(ks, ks.timers[0])
        else:
            ks.due = NOT_DUE
            if self._idle.get(ks.key) is ks:
                del self._idle[ks.key]

    def _fire_time(self, ks: KeyState, t: int, pending: list[Any], at: int, out: list[Output]) -> None:
        """Process the key's elements ``pending[at]`` of timestamp ``t`` (its ``at``-th listed),
        after timing out what that time ends (the caller drops them from the key's pending
        elements; one that raises is consumed, see ``_feed``)."""
        state = ks.state
        # _advance's own test, first without the call: most timestamps time nothing out (the
        # key's next deadline, computed here once its runs changed)
        deadline = ks.deadline
        if deadline is UNKNOWN:
            deadline = ks.deadline = self.nfa.next_deadline(state)
        if (deadline is not None and deadline <= t) or state.completed_matches.queue:
            self._advance(ks, t, out)
        elements = pending[at]
        if type(elements) is Several:
            self._feed(ks, elements, t, out)
            return
        # the usual case, a lone element: without a loop (on PyPy a loop of one turn splits the
        # trace) and without _feed's call
        try:
            self._feed_event(ks, elements, t, out)
        except BaseException:
            pending[at] = Several()  # consumed
            raise

    def _advance(self, ks: KeyState, timestamp: int, out: list[Output]) -> None:
        """``advance_time`` unless no run can time out by ``timestamp`` and no match is held back
        (the key's next deadline is kept in ``ks.deadline`` until its runs change)."""
        nfa = self.nfa
        state = ks.state
        deadline = ks.deadline
        if deadline is UNKNOWN:
            deadline = ks.deadline = nfa.next_deadline(state)
        if (deadline is None or deadline > timestamp) and (
            not state.completed_matches.queue or nfa.holds_back(state)
        ):
            # the buffer's arrival counters of older timestamps are dropped once per firing
            # (_fire_key, _drain_processing_time): timestamps only grow within one
            return
        ks.deadline = UNKNOWN
        matches, timed_out = nfa.advance_time(ks.buffer, state, timestamp)
        if self._limiter is not None:
            self._limiter.recount(ks)
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

    def _feed(self, ks: KeyState, elements: Several, timestamp: int, out: list[Output]) -> None:
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

    def _feed_event(self, ks: KeyState, event: Any, timestamp: int, out: list[Output]) -> None:
        """Process one element (see ``_feed``): its matches, its window timer, its bad record."""
        state = ks.state
        self._current = ks
        try:
            matches = self._step(ks.buffer, state, event, timestamp)
        except ConditionError as exc:
            self._condition_failed(ks, event, timestamp, exc, out)
            return
        except BaseException:
            ks.deadline = UNKNOWN
            raise
        if state.runs_changed:
            state.runs_changed = False
            ks.deadline = UNKNOWN
            if self._limiter is not None:
                self._limiter.check(self._keys, ks, timestamp, out)
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

    def _condition_failed(
        self, ks: KeyState, event: Any, timestamp: int, exc: ConditionError, out: list[Output]
    ) -> None:
        """A condition raised for ``event``: its bad record (the key's runs are as they were)."""
        bad = BadRecord(event, f"condition raised {exc_text(exc.cause or exc)}", STAGE_CONDITION, exc.step)
        self.bad_records += 1
        if self._raise:
            self._errors.append((bad, ks.key, exc))
        else:
            out.append(Output(BAD_RECORD, ks.key, bad, timestamp))

    # ------------------------------------------------------------------ processing time

    def _element_in_processing_time(self, event: Any, out: list[Output]) -> None:
        """Match ``event`` now (with a comparator: buffer it until its millisecond has passed)."""
        now = self._clock.now()
        key_by = self._key_by
        if key_by is None:
            key = None
        else:
            try:
                key = key_by(event)
                hash(key)
            except Exception as exc:
                self._bad(event, None, now, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, exc, out)
                return
        ks = self._keys.get(key)
        if ks is None:
            ks = self._new_key(key)
        if self._sort_key is not None:
            # buffered before the release of earlier milliseconds (it is due at now + 1 only),
            # so that an exception there does not lose it, as in event time
            self._buffer(ks, event, now)
            self._fire_processing_time(now, out)
            return
        try:
            self._advance(ks, now, out)
            ks.buffer.advance_time(now)
            self._feed_event(ks, event, now, out)
        finally:
            if ks.state.is_empty() and self._keys.get(key) is ks:
                del self._keys[key]

    def _fire_processing_time(self, now: int | None, out: list[Output]) -> None:
        """Release comparator-buffered elements whose timer (``ms + 1``) is due at ``now`` (None:
        all of them)."""
        sched = self._sched
        if self._fast:
            dues = sched.dues
            if not dues or (now is not None and dues[0] > now):
                return
        else:
            first = sched.first_due()  # (the reference: no time that no key is due at any more)
            if first is None or (now is not None and first > now):
                return
        due = sched.pop_due(now, self._next_seq)
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

    def _drain_processing_time(self, ks: KeyState, now: int | None, out: list[Output]) -> None:
        """Process the key's elements of the milliseconds before ``now`` (None: all)."""
        # in the lists alone while it runs (a rare path: processing time with a comparator)
        times, pending = spill(ks)
        n = len(times) if now is None else bisect_left(times, now)  # (the element at now waits)
        done = 0
        try:
            while done < n:
                self._fire_time(ks, times[done], pending, done, out)
                done += 1
        except BaseException:
            if done < n and consumed(pending[done]):
                done += 1
            raise
        finally:
            if done:
                ks.buffer.advance_time(times[done - 1])
                del times[:done]
                del pending[:done]
            unspill(ks)
            self._settle(ks)
