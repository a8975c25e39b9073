"""``MultiPatternOperator``: named, versioned patterns over one keyed stream, changed while it runs.

The operator judges each element once: its key, its timestamp, whether it is late, the watermark
it generates, as ``CepOperator`` does (the same extractors, checks and messages). Every pattern
runs in a ``CepOperator`` of its own, built from the same options, which gets the elements that
are neither late nor bad, in arrival order, and so sees the same watermarks a ``CepOperator``
alone would: hosting a pattern with others changes none of its results. Patterns are added,
replaced and removed between elements; a replace takes effect at the current watermark (the old
version matched every element at or before it, the new one matches every element after it, those
already taken included). docs/multi-pattern.md states the rules.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, Final, TypeVar, Union

import attrs

from flowcep.pattern import Pattern, to_millis
from flowcep.runtime.context import RuntimeContext, close_all
from flowcep.runtime.functions import extractor
from flowcep.runtime.operator import CepOperator
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.output import (
    BAD_RECORD,
    LATE,
    STAGE_KEY,
    STAGE_TIMESTAMP,
    BadRecord,
    BadRecordError,
    Output,
    exc_text,
)
from flowcep.runtime.snapshot import (
    EVENT_TIME,
    PROCESSING_TIME,
    OperatorSnapshot,
    SnapshotError,
    pack,
    unpack,
)
from flowcep.runtime.timestamps import LONG_MAX, LONG_MIN, ProcessingClock, TimestampError, to_timestamp
from flowcep.runtime.updates import PatternUpdate, check_name, check_version

__all__ = ["MultiPatternOperator", "PatternOutput", "PatternSet", "nfa_structure"]

log = logging.getLogger(__name__)

_LAYOUT: Final = "multi-pattern-1"
_NOT_YET: Final = object()
_FINGERPRINT: Final = hashlib.sha256(b"flowcep multi-pattern operator").digest()

_Op = TypeVar("_Op", bound="MultiPatternOperator")

#: The patterns to host: name -> (version, Pattern), or ``PatternUpdate``s that put them.
PatternSet = Union[Mapping[str, "tuple[int, Pattern]"], Iterable[PatternUpdate]]


@attrs.frozen(slots=True)
class PatternOutput:
    """One result of a ``MultiPatternOperator``: ``Output``'s fields and the ``pattern`` (name)
    and ``version`` it comes from; both None for a late element and for an element whose key or
    timestamp cannot be read (those belong to no pattern, and come out once)."""

    kind: str
    pattern: str | None
    version: int | None
    key: Any
    value: Any
    timestamp: int | None


class _Hosted:
    """One pattern at run time: its name, version and operator."""

    __slots__ = ("name", "version", "pattern", "operator", "_doc", "_structure")

    def __init__(self, name: str, version: int, pattern: Pattern, operator: CepOperator) -> None:
        self.name = name
        self.version = version
        self.pattern = pattern
        self.operator = operator
        self._doc: Any = _NOT_YET
        self._structure: bytes | None = None

    def structure(self) -> bytes:
        """``nfa_structure`` of the pattern's NFA."""
        if self._structure is None:
            self._structure = nfa_structure(self.operator.nfa)
        return self._structure

    def doc(self) -> str | None:
        """The pattern's JSON document (None: it has none), written once for all snapshots."""
        if self._doc is _NOT_YET:
            self._doc = _json_of(self.pattern)
        return self._doc  # type: ignore[no-any-return]


class MultiPatternOperator:
    """Named, versioned patterns over one pushed stream (the push API, as ``CepOperator``).

    ``patterns``: the initial set (name -> ``(version, Pattern)``, or ``PatternUpdate``s); the
    keywords are ``CepOperator``'s (``OperatorOptions``). ``add``, ``replace``, ``remove``,
    ``update`` and ``sync`` change the set between calls. Results are ``PatternOutput``s; within
    one call, late and bad input comes first, then each pattern's results in its own emission
    order, pattern after pattern in the order they were added (a replaced pattern keeps its
    place).
    """

    def __init__(
        self,
        patterns: PatternSet = (),
        *,
        key_by: Callable[[Any], Hashable] | str | None = None,
        timestamp: Callable[[Any], int] | str | None = None,
        out_of_orderness: Any = 0,
        comparator: Any = None,
        processing_time: bool = False,
        clock: Callable[[], int] | None = None,
        on_error: str = "raise",
    ) -> None:
        options = OperatorOptions(
            key_by=key_by,
            timestamp=timestamp,
            out_of_orderness=out_of_orderness,
            comparator=comparator,
            processing_time=processing_time,
            clock=clock,
            on_error=on_error,
        )
        self._configure(options, patterns)

    @classmethod
    def from_options(cls: type[_Op], options: OperatorOptions, patterns: PatternSet = ()) -> _Op:
        """The operator with ``options`` (the keywords of ``MultiPatternOperator(...)``)."""
        op = cls.__new__(cls)
        op._configure(options, patterns)
        return op

    def _configure(self, options: OperatorOptions, patterns: PatternSet) -> None:
        self.options = options
        self.processing_time = options.processing_time
        self._key_by = extractor("key_by", options.key_by)
        self._timestamp = extractor("timestamp", options.timestamp)
        self._out_of_orderness: int | None = to_millis(options.out_of_orderness)
        self._raise = options.on_error == "raise"
        self._clock = ProcessingClock(options.clock)
        # every pattern's operator reads the time its element was taken at from here (one
        # reading of the clock per element, the same for all patterns)
        self._inner = attrs.evolve(options, on_error="side_output", clock=self._now)
        self._hosted: dict[str, _Hosted] = {}
        self._context: Any = None  # while open: what the hosted operators were opened with
        self._reset()
        for update in _updates(patterns):
            self.update(update)

    def _reset(self) -> None:
        self._watermark = LONG_MIN
        self._max_timestamp = LONG_MIN
        self._clock = ProcessingClock(self._clock.read)
        self._errors: list[BadRecord] = []
        self.events_in = 0
        self.late = 0
        self.bad_records = 0

    def _now(self) -> int:
        return self._clock.last

    # ------------------------------------------------------------------ the pattern set

    @property
    def patterns(self) -> dict[str, tuple[int, Pattern]]:
        """The hosted patterns: name -> ``(version, Pattern)``, in the order they were added."""
        return {h.name: (h.version, h.pattern) for h in self._hosted.values()}

    def open(self, context: Any = None) -> None:
        """Open every hosted pattern's ``RichIterativeCondition``s with ``context`` (default: a
        ``RuntimeContext`` of this operator), as ``CepOperator.open`` does; a pattern hosted
        while open is opened as it comes, and closed as it goes (removed or replaced)."""
        self._context = context if context is not None else RuntimeContext(self.stats)
        for hosted in self._hosted.values():
            hosted.operator.open(self._context)

    def close(self) -> None:
        """Close every hosted pattern's ``RichIterativeCondition``s (all of them, then the first
        error is raised)."""
        hosted = list(self._hosted.values())
        self._context, opened = None, self._context
        if opened is not None:
            close_all(h.operator for h in hosted)

    def __enter__(self) -> MultiPatternOperator:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _closed(self, gone: list[_Hosted]) -> None:
        """``gone`` left the set: close them if the operator is open."""
        if self._context is not None:
            close_all(h.operator for h in gone)

    def add(self, name: str, pattern: Pattern, version: int = 1) -> None:
        """Host ``pattern`` as ``name`` at ``version``, from the current watermark on: it matches
        the elements taken from now on, and those already taken but not matched yet."""
        check_name(name)
        if name in self._hosted:
            h = self._hosted[name]
            raise ValueError(f"pattern {name!r} is hosted already (version {h.version}); replace it")
        self._hosted[name] = self._start(name, check_version(version), pattern, self._taken())

    def replace(
        self, name: str, pattern: Pattern, version: int, *, keep_partial_matches: bool = False
    ) -> None:
        """Host ``pattern`` as version ``version`` of ``name`` in place of the hosted one.

        The switch is at the current watermark: the old version's partial matches and held-back
        matches are dropped (no timeouts come out), and the elements it had taken but not matched
        yet go to the new version, which then matches as a fresh operator would, started at the
        current watermark.

        ``keep_partial_matches``: the new version takes over all the old one holds instead
        (partial matches, held-back matches, buffered elements, timers), judged by its own
        conditions and window from now on. Only for a new version of the same shape (the same
        NFA but for conditions and windows: ``nfa_structure``); ``ValueError`` otherwise."""
        old = self._get(name)
        if check_version(version) == old.version:
            raise ValueError(
                f"pattern {name!r} is at version {version} already; a replace needs another version"
            )
        if not keep_partial_matches:
            self._hosted[name] = self._start(name, version, pattern, old.operator.buffered_elements())
            self._closed([old])
            return
        new = self._compile(name, pattern)
        hosted = _Hosted(name, version, pattern, new)
        if hosted.structure() != old.structure():
            raise ValueError(
                f"pattern {name!r}: version {version} cannot keep version {old.version}'s partial "
                "matches: its steps, quantifiers, contiguity or skip strategy differ (only conditions "
                "and windows may change)"
            )
        old_op = old.operator
        _carry(old_op.snapshot(canonical=False), old_op.fingerprint, new)
        self._hosted[name] = hosted
        self._closed([old])

    def remove(self, name: str) -> None:
        """Stop matching ``name``: its partial matches, buffered elements and timers are dropped."""
        hosted = self._get(name)
        del self._hosted[name]
        self._closed([hosted])

    def update(self, update: PatternUpdate) -> bool:
        """Apply a ``PatternUpdate``; whether the set changed (putting the hosted version again,
        or removing a name not hosted, changes nothing)."""
        if not isinstance(update, PatternUpdate):
            raise TypeError(f"update needs a PatternUpdate, got {update!r}")
        hosted = self._hosted.get(update.name)
        if update.pattern is None:
            if hosted is None:
                return False
            self.remove(update.name)
        elif hosted is None:
            self.add(update.name, update.pattern, update.version)  # type: ignore[arg-type]
        elif hosted.version == update.version:
            return False
        else:
            self.replace(
                update.name,
                update.pattern,
                update.version,  # type: ignore[arg-type]
                keep_partial_matches=update.keep_partial_matches,
            )
        return True

    def sync(self, patterns: PatternSet) -> bool:
        """Host exactly ``patterns``: remove the names it lacks, put the others (``update``);
        whether anything changed."""
        wanted = {u.name: u for u in _updates(patterns)}
        changed = False
        for name in [n for n in self._hosted if n not in wanted]:
            self.remove(name)
            changed = True
        for update in wanted.values():
            changed = self.update(update) or changed
        return changed

    def _get(self, name: str) -> _Hosted:
        hosted = self._hosted.get(name)
        if hosted is None:
            raise KeyError(f"no pattern named {name!r} is hosted (hosted: {sorted(self._hosted)})")
        return hosted

    def _taken(self) -> list[tuple[int, Any]]:
        """The elements taken but not matched yet: every pattern holds the same ones."""
        for h in self._hosted.values():
            return h.operator.buffered_elements()
        return []

    def _compile(self, name: str, pattern: Pattern) -> CepOperator:
        if not isinstance(pattern, Pattern):
            raise TypeError(f"pattern {name!r}: expected a Pattern, got {pattern!r}")
        op = CepOperator.from_options(pattern, self._inner)
        # a key without state drops an element its pattern cannot start with, before the element
        # fires (CepOperator._elements: Flink would process it without effect). Here another
        # version may take over before it fires, and must get it: keep such elements buffered.
        op._starts_nothing = None  # noqa: SLF001  (the operator's pre-filter, off for hosted patterns)
        if self._context is not None:
            op.open(self._context)
        return op

    def _start(self, name: str, version: int, pattern: Pattern, taken: list[tuple[int, Any]]) -> _Hosted:
        """A new operator for ``pattern`` at the current watermark, given the elements ``taken``
        and not matched yet (``(timestamp, element)``, each key's in matching order)."""
        op = self._compile(name, pattern)
        if not self.processing_time and self._watermark > LONG_MIN:
            op.process_watermark(self._watermark)
        for ts, event in taken:
            # ahead of the watermark: buffered again, nothing comes out
            op.process_element(event, ts)
        return _Hosted(name, version, pattern, op)

    # ------------------------------------------------------------------ elements and time

    @property
    def current_watermark(self) -> int:
        return self._watermark

    def process_element(self, event: Any, timestamp: int | None = None) -> list[PatternOutput]:
        """Push one element; return what became ready (late element, each pattern's results...)."""
        out: list[PatternOutput] = []
        if self.processing_time:
            self._in_processing_time((event,), out)
        else:
            self._in_event_time((event,), timestamp, out)
        return self._done(out)

    def process_elements(self, events: Iterable[Any]) -> list[PatternOutput]:
        """``process_element`` for each event; each pattern gets the batch in one call."""
        out: list[PatternOutput] = []
        if self.processing_time:
            self._in_processing_time(events, out)
        else:
            self._in_event_time(events, None, out)
        return self._done(out)

    def process_watermark(self, timestamp: int) -> list[PatternOutput]:
        """Advance event time to ``timestamp`` for every pattern (see ``CepOperator``)."""
        out: list[PatternOutput] = []
        if self.processing_time:
            self._clock.now()  # (the patterns' operators read it: comparator-held elements due now)
        else:
            try:
                watermark = to_timestamp(timestamp)
            except TimestampError as exc:
                raise ValueError(f"invalid watermark: {exc}") from None
            if watermark <= self._watermark:
                return out
            self._watermark = watermark
        for h in list(self._hosted.values()):
            self._collect(h, h.operator.process_watermark(timestamp), out)
        return self._done(out)

    def flush(self) -> list[PatternOutput]:
        """End of input: every pattern's ``CepOperator.flush``."""
        out: list[PatternOutput] = []
        if not self.processing_time:
            self._watermark = LONG_MAX
        for h in list(self._hosted.values()):
            self._collect(h, h.operator.flush(), out)
        return self._done(out)

    def next_deadline(self) -> int | None:
        """The earliest ``next_deadline()`` of the patterns (None: only new elements can produce)."""
        dues = [d for d in (h.operator.next_deadline() for h in self._hosted.values()) if d is not None]
        return min(dues) if dues else None

    def has_state(self) -> bool:
        """Whether any pattern holds anything for any key."""
        return any(h.operator.has_state() for h in self._hosted.values())

    def keys(self) -> list[Any]:
        """The keys that hold anything in any pattern."""
        return list(dict.fromkeys(k for h in self._hosted.values() for k in h.operator.keys()))

    def discard_key(self, key: Any) -> bool:
        """Drop all one key holds in every pattern; whether it held anything."""
        found = False
        for h in self._hosted.values():
            found = h.operator.discard_key(key) or found
        return found

    def reset(self) -> None:
        """Drop all state (every pattern's and the watermark); the patterns stay hosted."""
        self._reset()
        for h in self._hosted.values():
            h.operator.reset()

    def stats(self) -> dict[str, Any]:
        """The input's counters, the watermark, and each pattern's version and
        ``CepOperator.stats()`` (its ``events_in`` counts the elements it was given)."""
        return {
            "events_in": self.events_in,
            "late": self.late,
            "bad_records": self.bad_records,
            "watermark": self._watermark,
            "patterns": {h.name: {"version": h.version, **h.operator.stats()} for h in self._hosted.values()},
        }

    # ------------------------------------------------------------------ the input, read once

    def _in_event_time(self, events: Iterable[Any], timestamp: int | None, out: list[PatternOutput]) -> None:
        """Sort the elements into late, bad and taken ones, advancing the watermark as
        ``CepOperator`` does; then give every pattern the taken ones."""
        stamp = self._timestamp
        key_by = self._key_by
        ooo = self._out_of_orderness
        taken: list[Any] = []
        for event in events:
            self.events_in += 1
            if timestamp is not None:
                raw = timestamp
            elif stamp is None:
                self._bad(
                    event,
                    None,
                    None,
                    "no timestamp: give the operator a timestamp extractor or call "
                    "process_element(event, timestamp)",
                    STAGE_TIMESTAMP,
                    out,
                )
                continue
            else:
                try:
                    raw = stamp(event)
                except Exception as exc:
                    self._bad(
                        event, None, None, f"timestamp extractor raised {exc_text(exc)}", STAGE_TIMESTAMP, out
                    )
                    continue
            if type(raw) is int and LONG_MIN <= raw <= LONG_MAX:
                ts: int = raw  # (to_timestamp's own test, first without the call)
            else:
                try:
                    ts = to_timestamp(raw)
                except TimestampError as exc:
                    self._bad(event, None, None, str(exc), STAGE_TIMESTAMP, out)
                    continue
            if key_by is None:
                key = None
            else:
                try:
                    key = key_by(event)
                    hash(key)
                except Exception as exc:
                    self._bad(event, None, ts, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, out)
                    continue
            if ts > self._max_timestamp:
                self._max_timestamp = ts
            if ts <= self._watermark:
                self.late += 1
                out.append(PatternOutput(LATE, None, None, key, event, ts))
                continue
            taken.append(event)
            if ooo is not None and ts - ooo - 1 > self._watermark:
                self._watermark = ts - ooo - 1
        if not taken:
            return
        for h in list(self._hosted.values()):
            op = h.operator
            if timestamp is not None:
                outputs = op.process_element(taken[0], timestamp)
            else:
                outputs = op.process_elements(taken)
            self._collect(h, outputs, out)

    def _in_processing_time(self, events: Iterable[Any], out: list[PatternOutput]) -> None:
        """Each element at one reading of the clock, given to every pattern."""
        hosted = list(self._hosted.values())
        for event in events:
            self.events_in += 1
            if self._key(event, None, out) is _BAD:
                continue
            self._clock.now()
            for h in hosted:
                self._collect(h, h.operator.process_element(event), out)

    def _key(self, event: Any, ts: int | None, out: list[PatternOutput]) -> Any:
        """The element's key (``_BAD`` after reporting one that cannot be read)."""
        key_by = self._key_by
        if key_by is None:
            return None
        try:
            key = key_by(event)
            hash(key)
        except Exception as exc:
            self._bad(event, None, ts, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, out)
            return _BAD
        return key

    def _bad(
        self, record: Any, key: Any, ts: int | None, message: str, stage: str, out: list[PatternOutput]
    ) -> None:
        bad = BadRecord(record, message, stage)
        self.bad_records += 1
        if self._raise:
            self._errors.append(bad)
        else:
            out.append(PatternOutput(BAD_RECORD, None, None, key, bad, ts))

    def _collect(self, h: _Hosted, outputs: list[Output], out: list[PatternOutput]) -> None:
        name = h.name
        version = h.version
        for o in outputs:
            if o.kind == BAD_RECORD and self._raise:
                self._errors.append(o.value)  # raised at the end of the call, as CepOperator does
                continue
            out.append(PatternOutput(o.kind, name, version, o.key, o.value, o.timestamp))

    def _done(self, out: list[PatternOutput]) -> list[PatternOutput]:
        """``out``, or (``on_error="raise"``) a ``BadRecordError`` carrying it."""
        if self._errors:
            errors, self._errors = self._errors, []
            raise BadRecordError(errors[0], outputs=out, bad_records=errors)  # type: ignore[arg-type]
        return out

    # ------------------------------------------------------------------ snapshots

    def snapshot(self, *, canonical: bool = True) -> bytes:
        """The pattern set and all state as versioned bytes.

        Each pattern is stored by name and version with its operator's snapshot and its
        fingerprint, and as its JSON document when it has one (``Pattern.to_json``; patterns
        with Python conditions have none, and are found again by name and version on restore).
        """
        mode = PROCESSING_TIME if self.processing_time else EVENT_TIME
        clocks = (mode, self._watermark, self._max_timestamp, self._clock.last)
        counters = (self.events_in, self.late, self.bad_records)
        entries = [
            (
                h.name,
                h.version,
                h.operator.fingerprint,
                h.structure(),
                h.doc(),
                h.operator.snapshot(canonical=canonical),
            )
            for h in self._hosted.values()
        ]
        return pack(_FINGERPRINT, (_LAYOUT, clocks, counters, entries), canonical)

    def restore(self, data: bytes, patterns: PatternSet | None = None, *, registry: Any = None) -> None:
        """Replace the pattern set and all state by a snapshot's.

        Without ``patterns``, each stored pattern is the hosted one of the same name and version,
        else its stored JSON document (``Pattern.from_json(doc, registry=registry)``); a
        ``SnapshotError`` names one found neither way. With ``patterns``, the operator hosts
        exactly those afterwards: a stored pattern of the same name and version gets its state
        back, one of another version is replaced (``replace``'s rules) and one not listed is
        removed, all without its ``Pattern``; listed names not stored are added.
        """
        payload = unpack(data, _FINGERPRINT)
        try:
            layout, clocks, counters, entries = payload
            if layout != _LAYOUT:
                raise ValueError(f"layout {layout!r}")
            mode, watermark, max_timestamp, last_now = clocks
            events_in, late, bad_records = counters
            entries = [(check_name(n), check_version(v), f, g, j, s) for n, v, f, g, j, s in entries]
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt multi-pattern snapshot: {exc}") from None
        mine = PROCESSING_TIME if self.processing_time else EVENT_TIME
        if mode != mine:
            raise SnapshotError(f"snapshot was taken in {mode} mode, this operator runs in {mine}")
        wanted = (
            None if patterns is None else {u.name: u for u in _updates(patterns) if u.pattern is not None}
        )
        current = self._hosted
        before = (
            self._watermark,
            self._max_timestamp,
            self._clock.last,
            self.events_in,
            self.late,
            self.bad_records,
        )
        self._hosted = {}
        self._reset()
        try:
            self._watermark = watermark
            self._max_timestamp = max_timestamp
            self._clock.last = last_now
            self.events_in, self.late, self.bad_records = events_in, late, bad_records
            for name, version, fingerprint, structure, doc, state in entries:
                if wanted is None:
                    pattern = _stored_pattern(name, version, doc, current, registry)
                else:
                    target = wanted.get(name)
                    if target is None:
                        continue  # removed
                    if target.version != version:
                        self._hosted[name] = self._restored_replace(
                            target, version, fingerprint, structure, state
                        )
                        continue
                    pattern = target.pattern  # type: ignore[assignment]
                same = current.get(name)
                if same is not None and same.version == version and same.pattern is pattern:
                    op = same.operator  # (compiled already: restore resets it)
                else:
                    op = self._compile(name, pattern)
                try:
                    op.restore(state)
                except SnapshotError as exc:
                    raise SnapshotError(f"pattern {name!r} version {version}: {exc}") from None
                self._hosted[name] = _Hosted(name, version, pattern, op)
            # the elements taken but not matched yet, which every stored pattern holds
            if self._hosted or not entries:
                taken = self._taken()
            else:
                name, _, fingerprint, _, _, state = entries[0]
                taken = _stored_taken(name, state, fingerprint)
            for name, update in (wanted or {}).items():
                if name not in self._hosted:
                    self._hosted[name] = self._start(name, update.version, update.pattern, taken)  # type: ignore[arg-type]
            kept = {id(h.operator) for h in self._hosted.values()}
            self._closed([h for h in current.values() if id(h.operator) not in kept])
        except BaseException:
            self._hosted = current
            (
                self._watermark,
                self._max_timestamp,
                self._clock.last,
                self.events_in,
                self.late,
                self.bad_records,
            ) = before
            raise

    def _restored_replace(
        self, target: PatternUpdate, version: int, fingerprint: bytes, structure: bytes, state: bytes
    ) -> _Hosted:
        """A stored pattern's replacement by ``target`` (``replace``'s rules, from the stored
        state alone); asked to keep partial matches across another shape, it logs a warning and
        starts afresh (a connector has no caller to raise to)."""
        name = target.name
        pattern: Pattern = target.pattern  # type: ignore[assignment]
        new_version: int = target.version  # type: ignore[assignment]  # (a put has both)
        if target.keep_partial_matches:
            op = self._compile(name, pattern)
            hosted = _Hosted(name, new_version, pattern, op)
            if hosted.structure() == structure:
                _carry(state, fingerprint, op)
                return hosted
            log.warning(
                "flowcep: pattern %r version %s cannot keep version %s's partial matches (another "
                "shape); it starts afresh at the watermark",
                name,
                new_version,
                version,
            )
        return self._start(name, new_version, pattern, _stored_taken(name, state, fingerprint))


class _Bad:
    """The key of an element whose key cannot be read."""


_BAD: Final = _Bad()


def _updates(patterns: PatternSet) -> Iterator[PatternUpdate]:
    """A pattern set as the ``PatternUpdate``s that put it."""
    if isinstance(patterns, Mapping):
        for name, entry in patterns.items():
            if isinstance(entry, Pattern):
                raise TypeError(
                    f"pattern {name!r}: a pattern set maps a name to (version, Pattern), got a Pattern alone"
                )
            try:
                version, pattern = entry
            except (TypeError, ValueError):
                raise TypeError(f"pattern {name!r}: expected (version, Pattern), got {entry!r}") from None
            yield PatternUpdate.put(name, version, pattern)
        return
    for update in patterns:
        if not isinstance(update, PatternUpdate):
            raise TypeError(f"a pattern set holds PatternUpdates, got {update!r}")
        yield update


def _json_of(pattern: Pattern) -> str | None:
    """The pattern's JSON document, None when it has Python callables as conditions."""
    try:
        return pattern.to_json(indent=None)
    except ValueError:  # (flowcep.rules.RuleError: a Python callable has no JSON form)
        return None


def nfa_structure(nfa: Any) -> bytes:
    """What a new version must share with the old for partial matches to carry over: every
    state's name and type, every transition's action, target and whether it has a condition,
    and the skip strategy (not the conditions, not the windows)."""
    shape = [
        (
            state.name,
            state.state_type.value,
            [(t.action.value, t.target.name, t.condition is None) for t in state.transitions],
        )
        for state in nfa.raw_states
    ]
    return hashlib.sha256(repr((shape, repr(nfa.skip_strategy))).encode("utf-8")).digest()


def _carry(state: bytes, fingerprint: bytes, op: CepOperator) -> None:
    """Restore ``op`` from another pattern's operator snapshot (``state``, whose pattern has
    ``fingerprint``) of the same ``nfa_structure``."""
    record = OperatorSnapshot.decode(state, fingerprint)
    op.restore(record.encode(op.fingerprint, canonical=False))


def _stored_pattern(name: str, version: int, doc: Any, hosted: dict[str, _Hosted], registry: Any) -> Pattern:
    same = hosted.get(name)
    if same is not None and same.version == version:
        return same.pattern
    if doc is not None:
        return Pattern.from_json(doc, registry=registry)
    raise SnapshotError(
        f"the snapshot hosts pattern {name!r} version {version}, which this operator does not host "
        "and which has no JSON document (Python conditions): host it first, or pass restore(patterns=...)"
    )


def _stored_taken(name: str, state: bytes, fingerprint: bytes) -> list[tuple[int, Any]]:
    """The elements a stored pattern operator had taken but not matched, without its pattern."""
    try:
        record = OperatorSnapshot.decode(state, fingerprint)
    except SnapshotError as exc:
        raise SnapshotError(f"pattern {name!r}: {exc}") from None
    return [(t, e) for k in record.keys for t, elements in k.queue for e in elements]
