"""``HierarchyOperator``: a whole hierarchy, keyed and in event time, in one pass (push API).

Each complex event type runs in one ``CepOperator`` of its own, shared by every level that reads
it. A raw event goes to the levels that read raw events; a match becomes a ``ComplexEvent`` (the
level's composition function) and goes, at the event time of its end, to the levels that read
its type. Watermarks flow bottom up: a level's watermark is the smallest of its inputs' (the raw
watermark, and each input level's watermark less that level's release lag), so every level sees
its input in event-time order. docs/semantics.md, section 11, states the rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Final

import attrs

from flowcep.hierarchy.definition import Hierarchy, HierarchyError, HierarchyPlan, Level
from flowcep.hierarchy.event import ComplexEvent
from flowcep.hierarchy.layouts import LEVELS_LAYOUT, unpack_hierarchy
from flowcep.pattern import to_millis
from flowcep.pattern.pattern import pattern_rich_conditions
from flowcep.runtime import LONG_MAX, LONG_MIN, BadRecordError, CepOperator, Output, RuntimeContext
from flowcep.runtime.context import close_all, open_conditions
from flowcep.runtime.functions import extractor
from flowcep.runtime.operator import to_timestamp
from flowcep.runtime.output import BAD_RECORD, LATE, MATCH, STAGE_CONDITION, TIMEOUT
from flowcep.runtime.snapshot import SnapshotError, pack

RAW: Final = ""  # the level of raw events, in LevelOutput.level (late and bad raw records)
_SNAPSHOT_LAYOUT: Final = LEVELS_LAYOUT


@attrs.frozen(slots=True)
class LevelOutput:
    """One result of a hierarchy: ``Output``'s fields, and the ``level`` (complex event type) it
    comes from (``RAW``, the empty string, for late or bad raw events).

    A match's ``value`` is its ``ComplexEvent``; a timeout's the partial match; a late record's
    the record (a raw event, or a complex event late at ``level``)."""

    kind: str
    level: str
    key: Any
    value: Any
    timestamp: int | None


class _Running:
    """One level at run time: its operator, the levels it feeds, its input watermark."""

    __slots__ = (
        "level",
        "operator",
        "consumers",
        "producers",
        "lag",
        "trail",
        "watermark",
        "emit",
        "accepts",
    )

    def __init__(self, level: Level, operator: CepOperator, emit: bool) -> None:
        self.level = level
        self.operator = operator
        self.consumers: list[_Running] = []
        self.producers: list[_Running] = []
        self.lag = 0
        self.trail = 0  # how far its watermark trails the raw one: its producers' lags on the way up
        self.watermark = LONG_MIN  # the level's input watermark
        self.emit = emit
        # the raw events that can change the level's state (None: all; see Level.raw_filter)
        self.accepts = level.raw_filter() if level.reads_raw else None


def checked_arguments(
    hierarchy: Hierarchy | HierarchyPlan,
    timestamp: Callable[[Any], int] | str,
    emit: Iterable[str] | None,
    on_error: str,
) -> tuple[HierarchyPlan, Callable[[Any], Any], set[str]]:
    """What every hierarchy engine checks of its arguments: the plan, the timestamp extractor
    and the names of the levels that come out (default: the top levels)."""
    plan = hierarchy.build()
    if on_error not in ("raise", "side_output"):
        raise ValueError(f"on_error must be 'raise' or 'side_output', got {on_error!r}")
    stamp = extractor("timestamp", timestamp)
    if stamp is None:
        raise TypeError("a hierarchy needs a timestamp extractor: windows and intervals read raw event times")
    names = [level.name for level in plan.levels]
    emitted = set(plan.top if emit is None else emit)
    unknown = emitted.difference(names)
    if unknown:
        raise HierarchyError(f"emit names unknown complex event types {sorted(unknown)}; defined: {names}")
    return plan, stamp, emitted


class HierarchyOperator:
    """A hierarchy over a pushed stream of raw events (the push API, as ``CepOperator``).

    ``key_by`` and ``timestamp`` read raw events (functions or field names; ``timestamp`` is
    required: default intervals and windows read it); a complex event keeps its constituents'
    key. ``out_of_orderness`` (ms or timedelta; None: ``process_watermark`` only) makes the raw
    watermark. ``emit``: the levels whose matches and timeouts come out (default: the top
    levels). ``on_error``: "raise" (``BadRecordError`` at the end of the call) or "side_output".
    """

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
        self.plan = plan
        # a constituent's (start, end); a plain function, not a method: the operators'
        # pattern fingerprints describe it, and a method would bring this whole object along
        self.interval: Callable[[Any], tuple[int, int]] = interval_of(stamp)
        self._key_by = extractor("key_by", key_by)
        self._stamp: Callable[[Any], Any] = stamp
        self._out_of_orderness: int | None = to_millis(out_of_orderness)
        self._raise = on_error == "raise"
        self._levels: list[_Running] = []
        by_name: dict[str, _Running] = {}
        # a level without inputs of its own reads raw events only: there is one (no cycles)
        gate = next(level for level in plan.levels if not level.uses)
        for level in plan.levels:
            operator = CepOperator(
                level.bound_pattern(self.interval),
                key_by=self._level_key(level),
                timestamp=self._level_stamp(level),
                out_of_orderness=self._out_of_orderness if level is gate else None,
                on_error="side_output",
                timeout_handling=level.name in emitted,
            )
            running = _Running(level, operator, level.name in emitted)
            for used in level.uses:
                producer = by_name[used]
                running.producers.append(producer)
                producer.consumers.append(running)
            by_name[level.name] = running
            self._levels.append(running)
        for running in self._levels:  # (bottom up)
            running.lag = running.level.release_lag() if running.consumers else 0
            running.trail = max((p.trail + p.lag for p in running.producers), default=0)
        self._gate = by_name[gate.name]
        self._other_raw_levels = [r for r in self._levels if r.level.reads_raw and r is not self._gate]
        self._watermark = LONG_MIN
        self.events_in = 0
        self.late = 0

    # ------------------------------------------------------------------ public API

    @property
    def current_watermark(self) -> int:
        """The raw events' watermark."""
        return self._watermark

    def process_element(self, event: Any) -> list[LevelOutput]:
        """Push one raw event; return what became ready at every emitted level."""
        return self.process_elements((event,))

    def process_elements(self, events: Iterable[Any]) -> list[LevelOutput]:
        """Push raw events; a batch goes through each level's operator in one call.

        The first level that reads raw events only (every hierarchy has one) is the gate: its
        operator makes the raw watermark and finds late and bad raw records, which no other
        level then sees. The other raw levels get the rest of the batch, each only the raw events
        its conditions may accept where that changes nothing else (``Level.raw_filter``),
        before the gate's complex events go up, so that at one timestamp raw events come first
        (11.3)."""
        batch = events if isinstance(events, (list, tuple)) else list(events)
        out: list[LevelOutput] = []
        gate = self._gate
        outputs = gate.operator.process_elements(batch)
        self.events_in += len(batch)
        rest = batch
        gate_outputs = outputs
        if outputs:
            refused: dict[int, int] = {}  # id -> how many of its occurrences the gate refused
            gate_outputs = []
            for o in outputs:
                kind = o.kind
                if kind == LATE:
                    self.late += 1
                    refused[id(o.value)] = refused.get(id(o.value), 0) + 1
                    out.append(LevelOutput(LATE, RAW, o.key, o.value, o.timestamp))
                elif kind == BAD_RECORD and o.value.stage != STAGE_CONDITION:
                    refused[id(o.value.record)] = refused.get(id(o.value.record), 0) + 1
                    out.append(LevelOutput(BAD_RECORD, RAW, o.key, o.value, o.timestamp))
                else:
                    gate_outputs.append(o)
            if refused:
                rest = _without(batch, refused)
        for running in self._other_raw_levels:
            accepts = running.accepts
            mine = rest if accepts is None else [event for event in rest if accepts(event)]
            if mine:
                self._collect(running, running.operator.process_elements(mine), out)
        self._collect(gate, gate_outputs, out)
        watermark = gate.operator.current_watermark
        gate.watermark = watermark
        if watermark > self._watermark:
            self._advance(watermark, out)
        self._raise_bad(out)
        return out

    def process_watermark(self, timestamp: int) -> list[LevelOutput]:
        """Advance the raw watermark (ignored if not ahead)."""
        out: list[LevelOutput] = []
        try:
            watermark = to_timestamp(timestamp)
        except Exception as exc:
            raise ValueError(f"invalid watermark: {exc}") from None
        if watermark > self._watermark:
            self._advance(watermark, out)
        self._raise_bad(out)
        return out

    def flush(self) -> list[LevelOutput]:
        """End of input: every level, bottom up, releases all it holds."""
        return self.process_watermark(LONG_MAX)

    def next_deadline(self) -> int | None:
        """The smallest raw watermark at which a call may produce output or drop state (None:
        only new events can): each level's ``CepOperator.next_deadline()``, plus how far that
        level's watermark trails the raw one (the release lags on its way up, 11.3)."""
        deadline: int | None = None
        for running in self._levels:
            due = running.operator.next_deadline()
            if due is not None:
                due += running.trail
                if deadline is None or due < deadline:
                    deadline = due
        return deadline

    def has_state(self) -> bool:
        """Whether any level holds buffered events, partial matches or window timers."""
        return any(running.operator.has_state() for running in self._levels)

    def keys(self) -> list[Any]:
        """The keys that hold anything at any level."""
        return list(dict.fromkeys(key for running in self._levels for key in running.operator.keys()))

    def discard_key(self, key: Any) -> bool:
        """Drop all one key holds at every level, silently; whether it held anything."""
        return any([running.operator.discard_key(key) for running in self._levels])

    def open(self, context: Any = None) -> None:
        """Open the ``RichIterativeCondition``s of every level's pattern with ``context`` (a
        ``RuntimeContext`` in the embedded runtime), each once: before the first element.
        ``detect`` calls it; so does ``with operator:``."""
        open_conditions(self._rich_conditions(), context)

    def close(self) -> None:
        """Close the levels' ``RichIterativeCondition``s (all, then the first error): after the last
        element."""
        close_all(self._rich_conditions())

    def __enter__(self) -> HierarchyOperator:
        self.open(RuntimeContext(self.stats))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rich_conditions(self) -> list[Any]:
        """The rich conditions the levels' operators run, each once (a level that reads complex
        events runs copies of its pattern's conditions: those are the ones opened)."""
        found: dict[int, Any] = {}
        for running in self._levels:
            for condition in pattern_rich_conditions(running.operator.pattern):
                found.setdefault(id(condition), condition)
        return list(found.values())

    def reset(self) -> None:
        """Drop all state: every level's, the watermarks and the counters."""
        for running in self._levels:
            running.operator.reset()
            running.watermark = LONG_MIN
        self._watermark = LONG_MIN
        self.events_in = 0
        self.late = 0

    def level_watermarks(self) -> dict[str, int]:
        """Each level's input watermark."""
        return {running.level.name: running.watermark for running in self._levels}

    def stats(self) -> dict[str, Any]:
        """The raw counters and each level's ``CepOperator.stats()``."""
        return {
            "events_in": self.events_in,
            "late": self.late,
            "watermark": self._watermark,
            "levels": {running.level.name: running.operator.stats() for running in self._levels},
        }

    def snapshot(self, *, canonical: bool = True) -> bytes:
        """Every level's state and the raw watermark, as versioned bytes."""
        payload = (
            _SNAPSHOT_LAYOUT,
            (self._watermark, self.events_in, self.late),
            [
                (running.level.name, running.watermark, running.operator.snapshot(canonical=canonical))
                for running in self._levels
            ],
        )
        return pack(self._fingerprint(), payload, canonical)

    def restore(self, data: bytes) -> None:
        """Replace every level's state by a snapshot's (``SnapshotError`` for another hierarchy)."""
        payload = unpack_hierarchy(data, self._fingerprint(), _SNAPSHOT_LAYOUT, "HierarchyOperator")
        try:
            _, clocks, levels = payload
            names = [name for name, _, _ in levels]
            if names != [running.level.name for running in self._levels]:
                raise ValueError(f"levels {names}")
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt hierarchy snapshot: {exc}") from None
        for running, (_, watermark, state) in zip(self._levels, levels):
            running.operator.restore(state)
            running.watermark = watermark
        self._watermark, self.events_in, self.late = clocks

    # ------------------------------------------------------------------ internals

    def _fingerprint(self) -> bytes:
        digest = hashlib.sha256()
        for running in self._levels:
            digest.update(running.level.name.encode("utf-8"))
            digest.update(running.operator.fingerprint)
        return digest.digest()

    def _level_key(self, level: Level) -> Callable[[Any], Any] | None:
        user = self._key_by
        if not level.uses:
            return user
        if not level.reads_raw or user is None:
            return _complex_key if user is not None else None

        def key(event: Any) -> Any:
            return event.key if type(event) is ComplexEvent else user(event)

        return key

    def _level_stamp(self, level: Level) -> Callable[[Any], Any] | None:
        """Raw events' timestamps for a level that reads them (complex events come with theirs)."""
        user = self._stamp
        if not level.reads_raw:
            return None
        if not level.uses:
            return user

        def stamp(event: Any) -> Any:
            return event.end if type(event) is ComplexEvent else user(event)

        return stamp

    def _advance(self, raw: int, out: list[LevelOutput]) -> None:
        """The raw watermark is ``raw``: advance every level bottom up, each to the smallest of
        its inputs' watermarks, feeding each level's complex events to its readers first."""
        self._watermark = raw
        end = raw == LONG_MAX
        for running in self._levels:
            watermark = raw if running.level.reads_raw else LONG_MAX
            for producer in running.producers:
                released = producer.watermark if end else producer.watermark - producer.lag
                if released < watermark:
                    watermark = released
            operator = running.operator
            if running is self._gate:
                # its operator's watermark decides which raw events are late: always advanced
                running.watermark = watermark
                if watermark > operator.current_watermark:
                    self._collect(running, operator.process_watermark(watermark), out)
                continue
            if watermark <= running.watermark:
                continue
            running.watermark = watermark
            due = operator.next_deadline()
            if due is not None and due <= watermark:
                self._collect(running, operator.process_watermark(watermark), out)

    def _collect(self, running: _Running, outputs: list[Output], out: list[LevelOutput]) -> None:
        name = running.level.name
        for o in outputs:
            kind = o.kind
            if kind == MATCH:
                event = self._compose(running.level, o.key, o.value)
                if running.emit:
                    out.append(LevelOutput(MATCH, name, o.key, event, o.timestamp))
                for consumer in running.consumers:
                    self._feed(consumer, event, out)
            elif kind == TIMEOUT:
                if running.emit:
                    at = self._deadline(running.level, o.value, o.timestamp)
                    out.append(LevelOutput(TIMEOUT, name, o.key, o.value, at))
            else:  # late or bad records of the level: never dropped
                out.append(LevelOutput(kind, name, o.key, o.value, o.timestamp))

    def _deadline(self, level: Level, partial: Mapping[str, list[Any]], at: int | None) -> int | None:
        """When a timed-out partial match's time ran out: its first constituent's start plus the
        level's window (11.5), where the operator counted from that constituent's end (``at``:
        the operator's own deadline, earlier when a step's window is shorter)."""
        window = level.window
        if window is None or at is None or not level.uses:
            return at
        interval = self.interval
        start = min(interval(event)[0] for events in partial.values() for event in events)
        return min(at, start + window)

    def _feed(self, consumer: _Running, event: ComplexEvent, out: list[LevelOutput]) -> None:
        if event.end <= consumer.watermark:
            # only a composition function's own end can put it there (see release_lag)
            out.append(LevelOutput(LATE, consumer.level.name, event.key, event, event.end))
            return
        self._collect(consumer, consumer.operator.process_element(event, event.end), out)

    def _compose(self, level: Level, key: Any, match: Mapping[str, list[Any]]) -> ComplexEvent:
        return compose(level, key, match, self.interval)

    def _raise_bad(self, out: list[LevelOutput]) -> None:
        if not self._raise:
            return
        bad = [o.value for o in out if o.kind == BAD_RECORD]
        if bad:
            # the error carries everything the call produced, so that nothing is lost
            raise BadRecordError(bad[0], outputs=out, bad_records=bad)  # type: ignore[arg-type]


def _without(batch: Iterable[Any], refused: dict[int, int]) -> list[Any]:
    """``batch`` without the refused occurrences of each event; an event pushed twice in one batch
    is refused at its later occurrence (the watermark only grows)."""
    kept = []
    for event in reversed(list(batch)):
        left = refused.get(id(event), 0)
        if left:
            refused[id(event)] = left - 1
        else:
            kept.append(event)
    kept.reverse()
    return kept


def compose(
    level: Level, key: Any, match: Mapping[str, list[Any]], interval: Callable[[Any], tuple[int, int]]
) -> ComplexEvent:
    """The complex event a match of ``level`` makes: its interval (11.1) and attributes."""
    start = end = None
    if level.start is None or level.end is None:
        # the default interval, in one pass over the constituents (per match, on the hot path)
        for events in match.values():
            for event in events:
                s, e = interval(event)
                if start is None or s < start:
                    start = s
                if end is None or e > end:
                    end = e
    if level.start is not None or level.end is not None:
        start = to_timestamp(level.start(match)) if level.start is not None else start
        end = to_timestamp(level.end(match)) if level.end is not None else end
        if start > end:  # type: ignore[operator]
            raise HierarchyError(
                f"complex event {level.name!r} of key {key!r} starts at {start}, after its end {end}"
            )
    if level.compose is None:
        attributes: Mapping[str, Any] = {}
    else:
        attributes = level.compose(match)
        if not isinstance(attributes, Mapping):
            raise HierarchyError(
                f"the composition function of {level.name!r} returned {attributes!r}, not a mapping of attributes"
            )
    return ComplexEvent(level.name, key, start, end, attributes, match)  # type: ignore[arg-type]


def interval_of(stamp: Callable[[Any], Any]) -> Callable[[Any], tuple[int, int]]:
    """A constituent's ``(start, end)``: a complex event's interval, a raw event's timestamp."""

    def interval(event: Any) -> tuple[int, int]:
        if type(event) is ComplexEvent:
            return event.start, event.end
        ts: int = stamp(event)
        return ts, ts

    return interval


def _complex_key(event: Any) -> Any:
    return event.key
