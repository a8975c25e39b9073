"""``OnePassHierarchy``: a hierarchy of the one-pass class (``onepass_class``) run by one
structure per key, every raw event through it once (seed 004's EH-Tree inside one engine).

Each key holds, for every level and every step after the first, the runs waiting there. A raw
event is tested once per raw step that has runs waiting (conditions read the event alone, so
the decision holds for all of them) and once per first step; runs waiting at a box step are not
visited by raw events. A complex event, made when a run completes, wakes the runs waiting at the
boxes of its type whose last event ends before it starts: those runs entered the box in the
order of their last event's end (an event is processed at its end), so they are a prefix of the
box's list. A run times out once the key's time reaches its start plus the level's window.

At one timestamp a key takes its raw events first, in arrival order, then the complex events
made at that timestamp level by level in the plan's order, each level's in the order made: the
order in which ``HierarchyOperator``'s levels see them (docs/semantics.md, 11.3 and 11.9).
"""

from __future__ import annotations

import hashlib
import heapq
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Final

from flowcep.hierarchy.definition import Hierarchy, HierarchyError, HierarchyPlan
from flowcep.hierarchy.engine import RAW, LevelOutput, checked_arguments
from flowcep.hierarchy.event import ComplexEvent
from flowcep.hierarchy.layouts import ONE_PASS_LAYOUT, unpack_hierarchy
from flowcep.hierarchy.onepass_class import LevelSteps, one_pass_levels
from flowcep.pattern import to_millis
from flowcep.runtime import LONG_MAX, LONG_MIN, BadRecordError
from flowcep.runtime.functions import extractor
from flowcep.runtime.operator import to_timestamp
from flowcep.runtime.output import (
    BAD_RECORD,
    LATE,
    MATCH,
    STAGE_CONDITION,
    STAGE_KEY,
    STAGE_TIMESTAMP,
    TIMEOUT,
    BadRecord,
    exc_text,
)
from flowcep.runtime.snapshot import SnapshotError, pack
from flowcep.runtime.timestamps import TimestampError

_SNAPSHOT_LAYOUT: Final = ONE_PASS_LAYOUT


class _Run:
    """A partial match: its first event's time (``start``), its events by step, the end of its
    last event, ``live`` (False once it completed or timed out) and, in a level with a window,
    ``group``: the runs branched (``followed_by_any``) from the run that took the same first
    event, which time out with it (None: none yet)."""

    __slots__ = ("start", "events", "last_end", "live", "group")

    def __init__(
        self, start: int, events: tuple[Any, ...], last_end: int, group: list[_Run] | None = None
    ) -> None:
        self.start = start
        self.events = events
        self.last_end = last_end
        self.live = True
        self.group = group

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restored_run, (self.start, self.events, self.last_end, self.live, self.group))


def _restored_run(
    start: int, events: tuple[Any, ...], last_end: int, live: bool, group: list[_Run] | None
) -> _Run:
    run = _Run(start, events, last_end, group)
    run.live = live
    return run


class _Level:
    """A level at run time: its steps, which of them wait on raw events and on each type."""

    __slots__ = (
        "index",
        "name",
        "level",
        "names",
        "tests",
        "anys",
        "window",
        "emit",
        "consumers",
        "raw_waits",
        "box_waits",
        "first",
        "last",
        "checked_from",
        "boxes",
        "stricts",
    )

    def __init__(self, index: int, spec: LevelSteps, emit: bool) -> None:
        steps = spec.steps
        self.index = index
        self.level = spec.level
        self.name = spec.level.name
        self.names = tuple(step.name for step in steps)
        self.tests = tuple(step.test for step in steps)
        self.anys = tuple(step.any for step in steps)
        self.boxes = tuple(step.box is not None for step in steps)
        # the steps whose runs the level's next input event must continue (``next``), or they die
        self.stricts = tuple(i for i, step in enumerate(steps) if step.strict)
        self.window = spec.window
        self.emit = emit
        self.consumers: list[int] = []
        self.first = steps[0].test
        self.last = len(steps) - 1
        # the raw steps after the first, latest first (so that a run moved by an event does not
        # take it again at its next step)
        self.raw_waits = tuple(i for i in range(len(steps) - 1, 0, -1) if steps[i].box is None)
        boxes: dict[str, list[int]] = {}
        for i in range(len(steps) - 1, 0, -1):
            box = steps[i].box
            if box is not None:
                boxes.setdefault(box, []).append(i)
        self.box_waits = {name: tuple(at) for name, at in boxes.items()}
        # from the first box on, a raw step's event starts after the run's last event ends
        # (11.2): right after a box the input order makes that hold, after a raw step it is checked
        first_box = min((i for i in range(len(steps)) if steps[i].box is not None), default=len(steps))
        self.checked_from = first_box + 1


class _Key:
    """One key's buffered raw events and runs: ``waits[level][step]`` the runs waiting at that
    step (a box's in order of ``last_end``, with ``ends`` beside them); ``started[level]`` the
    runs that took a first event, in its order (so in the order of their deadlines, start +
    window), for a level with a window; ``deadline`` the earliest of those deadlines (None:
    none)."""

    __slots__ = (
        "key",
        "seq",
        "times",
        "pending",
        "waits",
        "ends",
        "started",
        "deadline",
        "due",
        "dead",
        "finished",
    )

    def __init__(self, key: Any, seq: int, levels: list[_Level]) -> None:
        self.key = key
        self.seq = seq
        self.times: list[int] = []  # a heap of the buffered timestamps
        self.pending: dict[int, list[Any]] = {}
        self.waits: list[list[list[_Run]]] = [[[] for _ in level.names] for level in levels]
        self.ends: list[list[list[int]]] = [[[] for _ in level.names] for level in levels]
        self.started: list[deque[_Run]] = [deque() for _ in levels]
        self.deadline: int | None = None
        self.due: int | None = None  # when the key is scheduled (None: it is not)
        self.dead = [0] * len(levels)  # timed-out runs still listed, per level
        self.finished = [0] * len(levels)  # completed runs still in ``started``, per level


class OnePassHierarchy:
    """A hierarchy of the one-pass class over a pushed stream of raw events: the interface of
    ``HierarchyOperator`` (same arguments, methods and outputs; docs/semantics.md 11.9 says
    what is and is not identical). ``HierarchyError`` for a hierarchy outside the class."""

    def __init__(
        self,
        hierarchy: Hierarchy | HierarchyPlan,
        *,
        key_by: Callable[[Any], Hashable] | str | None = None,
        timestamp: Callable[[Any], int] | str,
        out_of_orderness: Any = 0,
        emit: Iterable[str] | None = None,
        on_error: str = "raise",
    ) -> None:
        plan, stamp, emitted = checked_arguments(hierarchy, timestamp, emit, on_error)
        specs = one_pass_levels(plan)
        if isinstance(specs, str):
            raise HierarchyError(f"the one-pass engine does not run this hierarchy: {specs}")
        self.plan = plan
        self._levels = [_Level(i, spec, spec.level.name in emitted) for i, spec in enumerate(specs)]
        index = {level.name: level.index for level in self._levels}
        for level in self._levels:
            for used in level.level.uses:
                self._levels[index[used]].consumers.append(level.index)
        # the levels that read raw events, and for each type the levels that read it
        self._raw_levels = [level for level in self._levels if level.level.reads_raw]
        self._windowed = [level for level in self._levels if level.window is not None]
        self._stamp: Callable[[Any], Any] = stamp
        self._key_by = extractor("key_by", key_by)
        self._out_of_orderness: int | None = to_millis(out_of_orderness)
        self._raise = on_error == "raise"
        self._reset()

    def _reset(self) -> None:
        self._keys: dict[Any, _Key] = {}
        self._schedule: list[tuple[int, int, _Key]] = []
        self._watermark = LONG_MIN
        self._max_timestamp = LONG_MIN
        self._key_seq = 0
        self.events_in = 0
        self.late = 0
        self._matches = [0] * len(self._levels)
        self._timeouts = [0] * len(self._levels)
        self._bad_records = [0] * len(self._levels)
        self._raw_bad = 0
        self._errors: list[tuple[BadRecord, Any]] = []

    # ------------------------------------------------------------------ public API

    @property
    def current_watermark(self) -> int:
        """The raw events' watermark."""
        return self._watermark

    def process_element(self, event: Any) -> list[LevelOutput]:
        """Push one raw event; return what became ready at every emitted level."""
        return self.process_elements((event,))

    def process_elements(self, events: Iterable[Any]) -> list[LevelOutput]:
        """Push raw events: each is late, bad or buffered under its key, and every rise of the
        watermark runs the keys due by then."""
        out: list[LevelOutput] = []
        per_level: list[list[LevelOutput]] = [[] for _ in self._levels]
        stamp = self._stamp
        key_by = self._key_by
        ooo = self._out_of_orderness
        keys = self._keys
        for event in events:
            self.events_in += 1
            try:
                raw = stamp(event)
            except Exception as exc:
                self._bad_raw(
                    event, None, None, f"timestamp extractor raised {exc_text(exc)}", STAGE_TIMESTAMP, out
                )
                continue
            if type(raw) is int and LONG_MIN <= raw <= LONG_MAX:
                ts: int = raw
            else:
                try:
                    ts = to_timestamp(raw)
                except TimestampError as exc:
                    self._bad_raw(event, None, None, str(exc), STAGE_TIMESTAMP, out)
                    continue
            if key_by is None:
                key = None
                ks = keys.get(None)
            else:
                try:
                    key = key_by(event)
                    ks = keys.get(key)
                except Exception as exc:
                    self._bad_raw(event, None, ts, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, out)
                    continue
            current = self._watermark
            watermark = current
            if ts > self._max_timestamp:
                self._max_timestamp = ts
                if ooo is not None and ts - ooo - 1 > watermark:
                    watermark = ts - ooo - 1
            if ts <= current:
                self.late += 1
                out.append(LevelOutput(LATE, RAW, key, event, ts))
            else:
                if ks is None:
                    ks = keys[key] = _Key(key, self._key_seq, self._levels)
                    self._key_seq += 1
                listed = ks.pending.get(ts)
                if listed is None:
                    ks.pending[ts] = [event]
                    heapq.heappush(ks.times, ts)
                    if ks.due is None or ts < ks.due:
                        self._push(ks, ts)
                else:
                    listed.append(event)
            if watermark > current:
                self._watermark = watermark
                self._fire(watermark, per_level)
        return self._finish(out, per_level)

    def process_watermark(self, timestamp: int) -> list[LevelOutput]:
        """Advance the raw watermark (ignored if not ahead)."""
        try:
            watermark = to_timestamp(timestamp)
        except Exception as exc:
            raise ValueError(f"invalid watermark: {exc}") from None
        per_level: list[list[LevelOutput]] = [[] for _ in self._levels]
        if watermark > self._watermark:
            self._watermark = watermark
            self._fire(watermark, per_level)
        return self._finish([], per_level)

    def flush(self) -> list[LevelOutput]:
        """End of input: every key releases all it holds."""
        return self.process_watermark(LONG_MAX)

    def next_deadline(self) -> int | None:
        """The smallest raw watermark at which a call may produce output or drop state (None:
        only new events can)."""
        schedule = self._schedule
        while schedule and schedule[0][2].due != schedule[0][0]:
            heapq.heappop(schedule)
        return schedule[0][0] if schedule else None

    def has_state(self) -> bool:
        """Whether any key holds buffered events or partial matches."""
        return bool(self._keys)

    def keys(self) -> list[Any]:
        """The keys that hold anything."""
        return list(self._keys)

    def discard_key(self, key: Any) -> bool:
        """Drop all one key holds, silently; whether it held anything."""
        ks = self._keys.pop(key, None)
        if ks is None:
            return False
        ks.due = None
        return True

    def open(self, context: Any = None) -> None:
        """Nothing to open: the class has no rich conditions (kept for ``HierarchyOperator``'s
        interface)."""

    def close(self) -> None:
        """Nothing to close (see ``open``)."""

    def __enter__(self) -> OnePassHierarchy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self) -> None:
        """Drop all state, the watermark and the counters."""
        self._reset()

    def level_watermarks(self) -> dict[str, int]:
        """Each level's input watermark: in the class every level's release lag is 0, so each is
        the raw watermark."""
        return {level.name: self._watermark for level in self._levels}

    def stats(self) -> dict[str, Any]:
        """The raw counters, and per level its matches, timeouts, bad records and partial
        matches (the engine's own runs: no per-level buffers or shared buffer entries)."""
        partial = [0] * len(self._levels)
        for ks in self._keys.values():
            for level in self._levels:
                for runs in ks.waits[level.index]:
                    partial[level.index] += sum(1 for run in runs if run.live)
        return {
            "events_in": self.events_in,
            "late": self.late,
            "watermark": self._watermark,
            "bad_records": self._raw_bad,
            "levels": {
                level.name: {
                    "matches": self._matches[level.index],
                    "timeouts": self._timeouts[level.index],
                    "bad_records": self._bad_records[level.index],
                    "partial_matches": partial[level.index],
                }
                for level in self._levels
            },
        }

    def snapshot(self, *, canonical: bool = True) -> bytes:
        """The whole state, as versioned bytes of this engine's own layout."""
        keys = [
            (
                ks.key,
                ks.seq,
                sorted(ks.pending.items()),
                ks.waits,
                ks.ends,
                [list(q) for q in ks.started],
            )
            for ks in self._keys.values()
        ]
        payload = (
            _SNAPSHOT_LAYOUT,
            (
                self._watermark,
                self._max_timestamp,
                self._key_seq,
                self.events_in,
                self.late,
                self._raw_bad,
                list(self._matches),
                list(self._timeouts),
                list(self._bad_records),
            ),
            keys,
        )
        return pack(self._fingerprint(), payload, canonical)

    def restore(self, data: bytes) -> None:
        """Replace the state by a snapshot's; ``SnapshotError`` for one of another hierarchy or
        of ``HierarchyOperator`` (whose layout this engine does not read)."""
        payload = unpack_hierarchy(data, self._fingerprint(), _SNAPSHOT_LAYOUT, "OnePassHierarchy")
        try:
            _, clocks, keys = payload
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt one-pass hierarchy snapshot: {exc}") from None
        self._reset()
        (
            self._watermark,
            self._max_timestamp,
            self._key_seq,
            self.events_in,
            self.late,
            self._raw_bad,
            matches,
            timeouts,
            bad,
        ) = clocks
        self._matches, self._timeouts, self._bad_records = list(matches), list(timeouts), list(bad)
        for key, seq, pending, waits, ends, started in keys:
            ks = _Key(key, seq, self._levels)
            ks.pending = dict(pending)
            ks.times = [ts for ts, _ in pending]
            ks.waits, ks.ends = waits, ends
            ks.started = [deque(runs) for runs in started]
            ks.finished = [
                sum(1 for r in runs if not r.live and r.group is None and not r.events) for runs in started
            ]
            ks.deadline = self._first_deadline(ks)
            ks.dead = [sum(1 for runs in level for run in runs if not run.live) for level in waits]
            self._keys[key] = ks
            self._reschedule(ks)

    # ------------------------------------------------------------------ internals

    def _fingerprint(self) -> bytes:
        digest = hashlib.sha256(_SNAPSHOT_LAYOUT.encode("utf-8"))
        for level in self._levels:
            digest.update(
                repr((level.name, level.names, level.anys, level.window, level.level.uses)).encode("utf-8")
            )
        return digest.digest()

    def _push(self, ks: _Key, due: int) -> None:
        ks.due = due
        heapq.heappush(self._schedule, (due, ks.seq, ks))

    def _reschedule(self, ks: _Key) -> None:
        """Schedule ``ks`` at its first buffered timestamp or its first run's deadline; a key
        that holds nothing goes."""
        due = ks.times[0] if ks.times else None
        deadline = ks.deadline
        if deadline is not None and (due is None or deadline < due):
            due = deadline
        if due is not None:
            self._push(ks, due)
            return
        ks.due = None
        # no run of a level with a window is left (each is listed in ``started`` until its
        # deadline): only runs of levels without a window keep the key
        if not any(
            ks.waits[level.index] != [[]] * len(level.names) for level in self._levels if level.window is None
        ):
            if self._keys.get(ks.key) is ks:
                del self._keys[ks.key]

    def _fire(self, watermark: int, per_level: list[list[LevelOutput]]) -> None:
        schedule = self._schedule
        while schedule and schedule[0][0] <= watermark:
            due, _, ks = heapq.heappop(schedule)
            if ks.due != due or self._keys.get(ks.key) is not ks:
                continue  # rescheduled or dropped since
            ks.due = None
            self._run_key(ks, watermark, per_level)
            self._reschedule(ks)

    def _run_key(self, ks: _Key, watermark: int, per_level: list[list[LevelOutput]]) -> None:
        """Run the key's buffered timestamps up to ``watermark``, then time out what ends by it."""
        times = ks.times
        pending = ks.pending
        while times and times[0] <= watermark:
            t = heapq.heappop(times)
            deadline = ks.deadline
            if deadline is not None and deadline <= t:
                self._expire(ks, t, per_level)
            made: list[list[ComplexEvent]] | None = None
            for event in pending.pop(t):
                made = self._raw_event(ks, event, t, per_level, made)
            if made is not None:
                self._complex_events(ks, made, t, per_level)
        deadline = ks.deadline
        if deadline is not None and deadline <= watermark:
            self._expire(ks, watermark, per_level)

    def _expire(self, ks: _Key, t: int, per_level: list[list[LevelOutput]]) -> None:
        """Time out the key's runs whose window ends by ``t``: a timeout at start + window, for an
        emitted level."""
        for level in self._windowed:
            window: int = level.window  # type: ignore[assignment]
            started = ks.started[level.index]
            while started and started[0].start + window <= t:
                first = started.popleft()
                at = first.start + window
                group = first.group
                if not first.live and group is None and not first.events:
                    ks.finished[level.index] -= 1  # (a completed run: see _complete)
                for run in (first,) if group is None else (first, *group):
                    if run.live:
                        run.live = False
                        self._timed_out(ks, level, run, at, per_level)
                if group:
                    group.clear()  # (its runs point to it: a cycle the collector would have to find)
            if ks.dead[level.index] > 16:
                self._compact(ks, level.index)
        ks.deadline = self._first_deadline(ks)

    def _timed_out(
        self, ks: _Key, level: _Level, run: _Run, at: int, per_level: list[list[LevelOutput]]
    ) -> None:
        index = level.index
        ks.dead[index] += 1
        if level.emit:
            self._timeouts[index] += 1
            partial = {level.names[i]: [e] for i, e in enumerate(run.events)}
            per_level[index].append(LevelOutput(TIMEOUT, level.name, ks.key, partial, at))

    def _first_deadline(self, ks: _Key) -> int | None:
        deadline: int | None = None
        for level in self._windowed:
            started = ks.started[level.index]
            if started:
                due: int = started[0].start + level.window  # type: ignore[operator]
                if deadline is None or due < deadline:
                    deadline = due
        return deadline

    def _compact(self, ks: _Key, index: int) -> None:
        """Drop the timed-out runs still listed at a level (once they outnumber a few)."""
        waits = ks.waits[index]
        ends = ks.ends[index]
        for i, runs in enumerate(waits):
            if runs:
                kept = [run for run in runs if run.live]
                if len(kept) != len(runs):
                    waits[i] = kept
                    if ends[i]:
                        ends[i] = [run.last_end for run in kept]
        ks.dead[index] = 0

    def _raw_event(
        self,
        ks: _Key,
        event: Any,
        t: int,
        per_level: list[list[LevelOutput]],
        made: list[list[ComplexEvent]] | None,
    ) -> list[list[ComplexEvent]] | None:
        """A raw event at every level that reads raw events: each raw step with runs waiting
        decides once for all of them; the runs it accepts move on (or branch), and the first
        step may start a run. A level asks all its conditions before it changes anything, so
        that one that raises changes nothing there."""
        all_waits = ks.waits
        for level in self._raw_levels:
            waits = all_waits[level.index]
            tests = level.tests
            accepted: list[int] | None = None
            i = 0  # the step whose condition runs (a bad record names it)
            try:
                for i in level.raw_waits:
                    if waits[i] and tests[i](event):
                        if accepted is None:
                            accepted = [i]
                        else:
                            accepted.append(i)
                i = 0
                starts = level.first(event)
            except Exception as exc:
                self._condition_failed(ks, level, i, event, t, exc, per_level)
                continue
            if level.stricts:
                self._strict(ks, level, accepted)
            if accepted is not None:
                for i in accepted:
                    runs = waits[i]
                    branch = level.anys[i]
                    kept: list[_Run] = runs if branch else []
                    if not branch:
                        waits[i] = kept
                    checked = i >= level.checked_from
                    for run in runs:
                        if not run.live:
                            continue
                        if checked and run.last_end >= t:
                            if branch:
                                pass
                            elif i in level.stricts:
                                run.live = False  # (the event is not its next: it dies)
                            else:
                                kept.append(run)
                            continue
                        made = self._take(ks, level, i, run, event, t, branch, per_level, made)
            if starts:
                if level.last == 0:
                    made = self._complete(ks, level, t, (event,), t, per_level, made)
                    continue
                run = _Run(t, (event,), t)
                window = level.window
                if window is not None:
                    ks.started[level.index].append(run)
                    deadline = ks.deadline
                    if deadline is None or t + window < deadline:
                        ks.deadline = t + window
                self._wait(ks, level, 1, run)
        return made

    def _take(
        self,
        ks: _Key,
        level: _Level,
        i: int,
        run: _Run,
        event: Any,
        t: int,
        branch: bool,
        per_level: list[list[LevelOutput]],
        made: list[list[ComplexEvent]] | None,
    ) -> list[list[ComplexEvent]] | None:
        """``run``, waiting at step ``i``, takes ``event`` (ending at ``t``): a copy of it when it
        branches (``followed_by_any``), else the run itself moves on. At the last step the match
        is complete (a branch that completes is never made)."""
        events = run.events + (event,)
        if i == level.last:
            if not branch:
                self._finished(ks, level, run)
            return self._complete(ks, level, run.start, events, t, per_level, made)
        if branch:
            if level.window is None:
                run = _Run(run.start, events, t)
            else:
                # times out with the run that took the same first event (_expire)
                group = run.group
                if group is None:
                    group = run.group = []
                run = _Run(run.start, events, t, group)
                group.append(run)
        else:
            run.events = events
            run.last_end = t
        # (_wait written out: this is the hot path)
        i += 1
        ks.waits[level.index][i].append(run)
        if level.boxes[i]:
            ks.ends[level.index][i].append(t)
        return made

    def _wait(self, ks: _Key, level: _Level, i: int, run: _Run) -> None:
        ks.waits[level.index][i].append(run)
        if level.boxes[i]:
            ks.ends[level.index][i].append(run.last_end)

    def _finished(self, ks: _Key, level: _Level, run: _Run) -> None:
        """``run`` completed: it holds nothing more. One that took its first event stays in
        ``started`` until its deadline; those go once they are half of it (most runs complete
        long before their deadline)."""
        run.live = False
        run.events = ()
        if level.window is not None and run.group is None:
            index = level.index
            finished = ks.finished[index] = ks.finished[index] + 1
            started = ks.started[index]
            if 2 * finished > len(started) > 16:
                ks.started[index] = deque(r for r in started if r.live or r.group)
                ks.finished[index] = 0

    def _complete(
        self,
        ks: _Key,
        level: _Level,
        start: int,
        events: tuple[Any, ...],
        t: int,
        per_level: list[list[LevelOutput]],
        made: list[list[ComplexEvent]] | None,
    ) -> list[list[ComplexEvent]]:
        """A match of ``level`` (its first event at ``start``, its last ending at ``t``): its
        complex event, out if the level is emitted, and to the levels that read it."""
        names = level.names
        index = level.index
        compose = level.level.compose
        if compose is None:
            event = ComplexEvent.one_per_step(level.name, ks.key, start, t, names, events)
        else:
            match = {names[i]: [e] for i, e in enumerate(events)}
            attributes = compose(match)
            if not isinstance(attributes, Mapping):
                raise HierarchyError(
                    f"the composition function of {level.name!r} returned {attributes!r}, not a mapping of attributes"
                )
            event = ComplexEvent(level.name, ks.key, start, t, attributes, match)
        self._matches[index] += 1
        if level.emit:
            per_level[index].append(LevelOutput(MATCH, level.name, ks.key, event, t))
        if made is None:
            made = [[] for _ in self._levels]
        for consumer in level.consumers:
            made[consumer].append(event)
        return made

    def _complex_events(
        self, ks: _Key, made: list[list[ComplexEvent]], t: int, per_level: list[list[LevelOutput]]
    ) -> None:
        """The complex events made at ``t``, level by level in the plan's order (a level's own
        complex events reach only the levels after it)."""
        for level in self._levels:
            arrived = made[level.index]
            if not arrived:
                continue
            for event in arrived:
                made = self._complex_event(ks, level, event, t, per_level, made)

    def _complex_event(
        self,
        ks: _Key,
        level: _Level,
        event: ComplexEvent,
        t: int,
        per_level: list[list[LevelOutput]],
        made: list[list[ComplexEvent]],
    ) -> list[list[ComplexEvent]]:
        """A complex event at one level that reads its type: each box of that type with runs
        waiting asks its condition once, then wakes the runs whose last event ends before the
        event starts (a prefix of its list)."""
        at = level.box_waits.get(event.type)
        if at is None:
            return made
        waits = ks.waits[level.index]
        ends = ks.ends[level.index]
        tests = level.tests
        accepted: list[int] = []
        try:
            for i in at:
                if waits[i] and ends[i][0] < event.start and tests[i](event):
                    accepted.append(i)
        except Exception as exc:
            self._condition_failed(ks, level, i, event, t, exc, per_level)
            return made
        if level.stricts:
            self._strict(ks, level, accepted)
        for i in accepted:
            runs = waits[i]
            cut = bisect_left(ends[i], event.start)
            woken = runs[:cut]
            branch = level.anys[i]
            if i in level.stricts:
                # the runs it does not continue die (it is their next event)
                for run in runs[cut:]:
                    run.live = False
                waits[i] = []
                ends[i] = []
            elif branch:
                if ks.dead[level.index]:
                    alive = [run for run in woken if run.live]
                    if len(alive) != len(woken):
                        waits[i] = alive + runs[cut:]
                        ends[i] = [run.last_end for run in alive] + ends[i][cut:]
                        woken = alive
            else:
                del runs[:cut]
                del ends[i][:cut]
            for run in woken:
                if run.live:
                    made = self._take(ks, level, i, run, event, t, branch, per_level, made)  # type: ignore[assignment]
        return made

    def _strict(self, ks: _Key, level: _Level, accepted: list[int] | None) -> None:
        """The runs waiting at a ``next`` step that the level's input event does not continue die
        (before any run moves on, so that none that this event brings to a step dies of it)."""
        waits = ks.waits[level.index]
        for i in level.stricts:
            runs = waits[i]
            if runs and (accepted is None or i not in accepted):
                for run in runs:
                    run.live = False
                waits[i] = []
                ks.ends[level.index][i] = []

    def _condition_failed(
        self,
        ks: _Key,
        level: _Level,
        step: int,
        event: Any,
        t: int,
        exc: Exception,
        per_level: list[list[LevelOutput]],
    ) -> None:
        """The condition of ``level``'s step number ``step`` raised on ``event``: a bad record
        naming the step, as ``HierarchyOperator`` reports it."""
        bad = BadRecord(event, f"condition raised {exc_text(exc)}", STAGE_CONDITION, level.names[step])
        self._bad_records[level.index] += 1
        if self._raise:
            self._errors.append((bad, ks.key))
        per_level[level.index].append(LevelOutput(BAD_RECORD, level.name, ks.key, bad, t))

    def _bad_raw(
        self, event: Any, key: Any, ts: int | None, message: str, stage: str, out: list[LevelOutput]
    ) -> None:
        bad = BadRecord(event, message, stage)
        self._raw_bad += 1
        if self._raise:
            self._errors.append((bad, key))
        out.append(LevelOutput(BAD_RECORD, RAW, key, bad, ts))

    def _finish(self, out: list[LevelOutput], per_level: list[list[LevelOutput]]) -> list[LevelOutput]:
        """Late and bad raw records first, then each level's outputs in the plan's order (as
        ``HierarchyOperator`` gives them)."""
        for outputs in per_level:
            out.extend(outputs)
        if self._errors:
            self._errors = []
            # as HierarchyOperator: the error carries everything the call produced
            bad = [o.value for o in out if o.kind == BAD_RECORD]
            raise BadRecordError(bad[0], outputs=out, bad_records=bad)  # type: ignore[arg-type]
        return out
