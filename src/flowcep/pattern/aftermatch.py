"""After-match skip strategies (Flink's ``AfterMatchSkipStrategy``).

Event ids are any totally ordered values (the NFA uses ``(timestamp, seq)`` tuples). A strategy
computes a pruning id from the matches just emitted, and the NFA drops every partial or completed
match whose start event ``should_prune``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from flowcep.pattern.exceptions import FlinkRuntimeException

EventId = Any
MatchIds = Mapping[str, Sequence[EventId]]


def _java_map(match: MatchIds) -> str:
    # Render like Java's Map.toString, as Flink's message does.
    return "{" + ", ".join(f"{k}=[{', '.join(_java_event_id(e) for e in v)}]" for k, v in match.items()) + "}"


def _java_event_id(event_id: Any) -> str:
    """Flink's ``EventId.toString()``; our event ids are ``(timestamp, id)`` tuples."""
    if isinstance(event_id, tuple) and len(event_id) == 2:
        return f"EventId{{id={event_id[1]}, timestamp={event_id[0]}}}"
    return str(event_id)


class AfterMatchSkipStrategy:
    """Base class with the factories; instances are immutable and compare by value."""

    __slots__ = ()

    @staticmethod
    def no_skip() -> NoSkipStrategy:
        """Every possible match is emitted."""
        return _NO_SKIP

    @staticmethod
    def skip_to_next() -> SkipToNextStrategy:
        """Drop partial matches that started with the match's first event."""
        return _SKIP_TO_NEXT

    @staticmethod
    def skip_past_last_event() -> SkipPastLastStrategy:
        """Drop partial matches that started inside the match."""
        return _SKIP_PAST_LAST

    @staticmethod
    def skip_to_first(pattern_name: str) -> SkipToFirstStrategy:
        """Drop partial matches that started before the first event of ``pattern_name``."""
        return SkipToFirstStrategy(_check_name(pattern_name))

    @staticmethod
    def skip_to_last(pattern_name: str) -> SkipToLastStrategy:
        """Drop partial matches that started before the last event of ``pattern_name``."""
        return SkipToLastStrategy(_check_name(pattern_name))

    noSkip = no_skip
    skipToNext = skip_to_next
    skipPastLastEvent = skip_past_last_event
    skipToFirst = skip_to_first
    skipToLast = skip_to_last

    @property
    def pattern_name(self) -> str | None:
        """The target step of skip-to-first/last, else None."""
        return None

    def get_pattern_name(self) -> str | None:
        """Same as ``pattern_name`` (Flink returns an Optional)."""
        return self.pattern_name

    getPatternName = get_pattern_name

    def is_skip_strategy(self) -> bool:
        """False only for no-skip."""
        return True

    def isSkipStrategy(self) -> bool:
        """Alias of ``is_skip_strategy``."""
        return self.is_skip_strategy()

    def get_pruning_id(self, matches: Iterable[MatchIds]) -> EventId | None:
        """The id that decides pruning, or None to prune nothing."""
        raise NotImplementedError

    def should_prune(self, start_event_id: EventId | None, pruning_id: EventId) -> bool:
        """True if a run starting at ``start_event_id`` must be dropped."""
        raise NotImplementedError


def _check_name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"The pattern name of a skip strategy must be a str, got {name!r}")
    return name


@attrs.frozen(slots=True)
class NoSkipStrategy(AfterMatchSkipStrategy):
    """No pruning."""

    def is_skip_strategy(self) -> bool:
        return False

    def get_pruning_id(self, matches: Iterable[MatchIds]) -> EventId | None:
        return None

    def should_prune(self, start_event_id: EventId | None, pruning_id: EventId) -> bool:
        return False

    def __repr__(self) -> str:
        return "NoSkipStrategy{}"


@attrs.frozen(slots=True)
class SkipToNextStrategy(AfterMatchSkipStrategy):
    """Pruning id: the smallest event of the matches; prunes starts ``<=`` it."""

    def get_pruning_id(self, matches: Iterable[MatchIds]) -> EventId | None:
        pruning: EventId | None = None
        for match in matches:
            for ids in match.values():
                if ids and (pruning is None or ids[0] < pruning):
                    pruning = ids[0]
        return pruning

    def should_prune(self, start_event_id: EventId | None, pruning_id: EventId) -> bool:
        return start_event_id is not None and start_event_id <= pruning_id

    def __repr__(self) -> str:
        return "SkipToNextStrategy{}"


@attrs.frozen(slots=True)
class SkipPastLastStrategy(AfterMatchSkipStrategy):
    """Pruning id: the largest event of the matches; prunes starts ``<=`` it."""

    def get_pruning_id(self, matches: Iterable[MatchIds]) -> EventId | None:
        pruning: EventId | None = None
        for match in matches:
            for ids in match.values():
                if ids and (pruning is None or ids[-1] > pruning):
                    pruning = ids[-1]
        return pruning

    def should_prune(self, start_event_id: EventId | None, pruning_id: EventId) -> bool:
        return start_event_id is not None and start_event_id <= pruning_id

    def __repr__(self) -> str:
        return "SkipPastLastStrategy{}"


@attrs.frozen(slots=True)
class SkipToElementStrategy(AfterMatchSkipStrategy):
    """Skip to the first or last event of a named step; prunes starts strictly ``<`` it."""

    name: str
    throw_on_miss: bool = False
    _FIRST: ClassVar[bool] = True

    @property
    def pattern_name(self) -> str | None:
        return self.name

    def throw_exception_on_miss(self) -> SkipToElementStrategy:
        """A copy that raises when the named step is missing from a match."""
        return attrs.evolve(self, throw_on_miss=True)

    throwExceptionOnMiss = throw_exception_on_miss

    def should_throw_exception(self) -> bool:
        """True after ``throw_exception_on_miss()``."""
        return self.throw_on_miss

    def get_pruning_id(self, matches: Iterable[MatchIds]) -> EventId | None:
        pruning: EventId | None = None
        first = self._FIRST
        for match in matches:
            ids = match.get(self.name)
            if not ids:
                if self.throw_on_miss:
                    raise FlinkRuntimeException(
                        f"Could not skip to {self.name}. No such element in the found match {_java_map(match)}"
                    )
            else:
                candidate = ids[0] if first else ids[-1]
                if pruning is None or candidate > pruning:
                    pruning = candidate
            if self.throw_on_miss and pruning is not None:
                # Skipping to the match's own first event would find the same match again, forever.
                start = min((e for v in match.values() for e in v), default=None)
                if start is None:
                    raise FlinkRuntimeException("Cannot prune based on empty match")
                if pruning == start:
                    raise FlinkRuntimeException("Could not skip to first element of a match.")
        return pruning

    def should_prune(self, start_event_id: EventId | None, pruning_id: EventId) -> bool:
        return start_event_id is not None and start_event_id < pruning_id


@attrs.frozen(slots=True)
class SkipToFirstStrategy(SkipToElementStrategy):
    """Skip to the first event of the named step."""

    _FIRST: ClassVar[bool] = True

    def __repr__(self) -> str:
        return f"SkipToFirstStrategy{{patternName='{self.name}'}}"


@attrs.frozen(slots=True)
class SkipToLastStrategy(SkipToElementStrategy):
    """Skip to the last event of the named step."""

    _FIRST: ClassVar[bool] = False

    def __repr__(self) -> str:
        return f"SkipToLastStrategy{{patternName='{self.name}'}}"


_NO_SKIP = NoSkipStrategy()
_SKIP_TO_NEXT = SkipToNextStrategy()
_SKIP_PAST_LAST = SkipPastLastStrategy()
