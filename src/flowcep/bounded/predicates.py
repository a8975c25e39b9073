"""Evaluating conditions on candidate matches: the buffer filter, iterative conditions, negations.

A candidate is a tuple with one tuple of event positions per step (a single step has one). The
context an iterative condition sees is Flink's: the events of the earlier steps and the earlier
iterations of its own step, and ``timestamp()`` of the event tested. A negated step's condition
sees the steps before the negation.

The tree evaluator checks a predicate at an operator that binds only some steps; when the
condition asks for an earlier step that the operator does not bind, ``Unbound`` is raised and the
predicate waits for the root, where every step is bound.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from itertools import combinations
from typing import Any

import attrs

from flowcep.bounded.plan import BoundedPattern, Conjunct, Step
from flowcep.pattern import ConditionError
from flowcep.pattern.context import ConditionContextBase, wall_clock_millis

Candidate = tuple[tuple[int, ...], ...]

# the clock of the operator a bounded run serves (``runtime.bounded`` sets it for the run): what
# ``Context.current_processing_time()`` reads, without a clock argument through every evaluator
CLOCK: ContextVar[Callable[[], int]] = ContextVar("flowcep_bounded_clock", default=wall_clock_millis)


class Unbound(BaseException):
    """A condition read a step its operator does not bind (a BaseException: user code that
    catches ``Exception`` must not swallow it)."""


class Context(ConditionContextBase):
    """What an iterative condition sees (the NFA's ``ConditionContext`` API)."""

    __slots__ = ("_match", "_timestamp", "_unbound")

    def __init__(self, match: dict[str, list[Any]], timestamp: int, unbound: frozenset[str]) -> None:
        self._match = match
        self._timestamp = timestamp
        self._unbound = unbound

    def get_events_for_pattern(self, name: str) -> list[Any]:
        if name is None:
            raise TypeError("The pattern name cannot be null.")
        if name in self._unbound:
            raise Unbound(name)
        return list(self._match.get(name, ()))

    def timestamp(self) -> int:
        return self._timestamp

    def current_processing_time(self) -> int:
        return int(CLOCK.get()())


def passes(conjuncts: Sequence[Conjunct], name: str, event: Any, ctx: Context | None) -> bool:
    """All conjuncts hold, in order, short-circuit; a user error becomes ``ConditionError``."""
    try:
        for c in conjuncts:
            if not (c.fn(event, ctx) if c.iterative else c.fn(event)):
                return False
    except Unbound:
        raise
    except Exception as exc:
        raise ConditionError(name, event, exc) from exc
    return True


def buffer_list(step: Step, events: Sequence[Any]) -> list[int]:
    """OptiSeq's buffer filter: the positions of the events that pass the step's leading
    (single-event) conjuncts, in time order. Each conjunct filters what the ones before it kept,
    so each is evaluated on the events it would be in declaration order."""
    positions: list[int] | None = None
    for c in step.leading:
        fn = c.fn
        try:
            if positions is None:
                positions = [i for i, e in enumerate(events) if fn(e)]
            else:
                positions = [i for i in positions if fn(events[i])]
        except Exception:
            # find the failing event again, to name it
            for i in range(len(events)) if positions is None else positions:
                passes((c,), step.name, events[i], None)
            raise
    return list(range(len(events))) if positions is None else positions


@attrs.frozen(slots=True)
class Lists:
    """The buffer-filtered lists of one key's events: per step, and per negated step."""

    steps: tuple[list[int], ...]
    negations: tuple[tuple[list[int], ...], ...]

    @classmethod
    def build(cls, bp: BoundedPattern, events: Sequence[Any]) -> Lists:
        return cls(
            tuple(buffer_list(s, events) for s in bp.steps),
            tuple(tuple(buffer_list(n, events) for n in gap) for gap in bp.negations),
        )


def between(positions: list[int], after: int, before: int) -> tuple[int, int]:
    """The slice of the sorted ``positions`` strictly between ``after`` and ``before``."""
    return bisect_right(positions, after), bisect_left(positions, before)


def windowed_subsets(
    cands: Sequence[int], ts: Sequence[int], window: int, lo: int, hi: int | None
) -> Iterator[tuple[int, ...]]:
    """Increasing tuples of ``lo..hi`` positions from ``cands`` spanning less than ``window``."""
    for a, first in enumerate(cands):
        rest = cands[a + 1 :]
        if window > 0:
            rest = rest[: bisect_left([ts[i] for i in rest], ts[first] + window)]
        top = len(rest) + 1 if hi is None else min(hi, len(rest) + 1)
        for r in range(lo, top + 1):
            for tail in combinations(rest, r - 1):
                yield (first,) + tail


class Checker:
    """Evaluates iterative conditions and negations of candidates over one key's events."""

    __slots__ = ("bp", "events", "ts", "lists", "names")

    def __init__(self, bp: BoundedPattern, events: Sequence[Any], ts: Sequence[int], lists: Lists) -> None:
        self.bp = bp
        self.events = events
        self.ts = ts
        self.lists = lists
        self.names = bp.names

    def _prefix(self, cand: Candidate, lo: int, upto: int) -> dict[str, list[Any]]:
        events = self.events
        names = self.names
        return {names[k]: [events[i] for i in cand[k - lo]] for k in range(lo, upto)}

    def step_holds(self, conjuncts: Sequence[Conjunct], s: int, cand: Candidate, lo: int) -> bool:
        """The conjuncts of step ``s`` hold on each of its events; ``cand`` binds steps ``lo..``."""
        match = self._prefix(cand, lo, s)
        own: list[Any] = []
        name = self.names[s]
        match[name] = own
        unbound = frozenset(self.names[:lo])
        events = self.events
        ts = self.ts
        for i in cand[s - lo]:
            event = events[i]
            if not passes(conjuncts, name, event, Context(match, ts[i], unbound)):
                return False
            own.append(event)
        return True

    def _negation_end(self, gap: int, before: int) -> int:
        # The event of the step after the negation is itself checked, unless that step ends the
        # pattern: in the NFA a negated event stops the run's live continuations but not a
        # match it completes.
        return before if gap + 2 == len(self.bp.steps) else before + 1

    def simple_negation_holds(self, gap: int, after: int, before: int) -> bool:
        """No event that passes a purely simple negated step lies after ``after`` and before
        ``before`` (or at it, see ``_negation_end``)."""
        before = self._negation_end(gap, before)
        for n, positions in zip(self.bp.negations[gap], self.lists.negations[gap]):
            if not n.rest:
                a, b = between(positions, after, before)
                if a < b:
                    return False
        return True

    def negation_holds(self, gap: int, k: int, cand: Candidate, lo: int) -> bool:
        """No event between steps ``gap`` and ``gap + 1`` passes the negated step ``k`` of that gap
        (the iterative part; its context is the steps up to ``gap``)."""
        n = self.bp.negations[gap][k]
        after = cand[gap - lo][-1]
        before = self._negation_end(gap, cand[gap + 1 - lo][0])
        a, b = between(self.lists.negations[gap][k], after, before)
        if a == b:
            return True
        match = self._prefix(cand, lo, gap + 1)
        unbound = frozenset(self.names[:lo])
        events = self.events
        ts = self.ts
        for i in self.lists.negations[gap][k][a:b]:
            if passes(n.rest, n.name, events[i], Context(match, ts[i], unbound)):
                return False
        return True

    def full_holds(self, cand: Candidate) -> bool:
        """Every iterative condition and negation holds on a complete candidate (pattern order)."""
        bp = self.bp
        for s, step in enumerate(bp.steps):
            if step.rest and not self.step_holds(step.rest, s, cand, 0):
                return False
        for gap, negs in enumerate(bp.negations):
            for k, n in enumerate(negs):
                if n.rest and not self.negation_holds(gap, k, cand, 0):
                    return False
        return True


def to_match(bp: BoundedPattern, events: Sequence[Any], cand: Candidate) -> dict[str, list[Any]]:
    """A candidate as the NFA's match: step name -> its events, in pattern order."""
    return {s.name: [events[i] for i in positions] for s, positions in zip(bp.steps, cand)}


def order_key(cand: Candidate) -> tuple[int, tuple[int, ...]]:
    """The documented output order: by the last event's position, then position by position."""
    flat = tuple(i for positions in cand for i in positions)
    return flat[-1], flat
