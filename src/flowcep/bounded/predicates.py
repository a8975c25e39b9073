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

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from itertools import combinations
from typing import Any

import attrs

from flowcep.bounded.plan import BoundedPattern, Conjunct, Step
from flowcep.bounded.readset import strings_reached
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
    """What an iterative condition sees (the NFA's ``ConditionContext`` API), read lazily from a
    candidate: ``cand`` binds steps ``lo..``; steps before ``upto`` are matched, step ``upto``
    has the events ``own`` (its earlier iterations), later steps none yet."""

    __slots__ = ("_checker", "_cand", "_lo", "_upto", "_own", "_timestamp")

    def __init__(
        self, checker: Checker, cand: Candidate, lo: int, upto: int, own: Sequence[Any], timestamp: int
    ) -> None:
        self._checker = checker
        self._cand = cand
        self._lo = lo
        self._upto = upto
        self._own = own
        self._timestamp = timestamp

    def get_events_for_pattern(self, name: str) -> list[Any]:
        if name is None:
            raise TypeError("The pattern name cannot be null.")
        k = self._checker.index.get(name)
        if k is None or k > self._upto:
            return []
        if k == self._upto:
            return list(self._own)
        if k < self._lo:
            raise Unbound(name)
        events = self._checker.events
        return [events[i] for i in self._cand[k - self._lo]]

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


@attrs.frozen(slots=True)
class Predicate:
    """An iterative check: step ``index``'s ``conjuncts`` (kind "step") or negated step ``k`` of
    gap ``index`` (kind "not"); it needs steps ``need_lo..need_hi`` bound."""

    kind: str
    index: int
    k: int
    conjuncts: tuple[Conjunct, ...]
    need_lo: int
    need_hi: int
    label: str


@functools.lru_cache(maxsize=32)
def predicates(bp: BoundedPattern, split_conjuncts: bool = False) -> tuple[Predicate, ...]:
    """The iterative checks of ``bp`` in pattern order, each with the steps it needs (cached:
    the runtime plans every key with the same pattern)."""
    names = bp.names
    index = {name: i for i, name in enumerate(names)}

    def lowest(objs: Sequence[Any], upto: int) -> int:
        read = set().union(*(strings_reached(o) for o in objs))
        return min([upto] + [index[n] for n in read if n in index and index[n] <= upto])

    out: list[Predicate] = []
    for s, step in enumerate(bp.steps):
        if step.rest:
            groups = [(c,) for c in step.rest] if split_conjuncts else [step.rest]
            for g in groups:
                text = " and ".join(c.text for c in g)
                out.append(
                    Predicate("step", s, 0, g, lowest([c.fn for c in g], s), s, f"{step.name}: {text}")
                )
        if s < len(bp.negations):
            for k, n in enumerate(bp.negations[s]):
                if n.rest:
                    text = " and ".join(c.text for c in n.rest)
                    lo = lowest([c.fn for c in n.rest], s)
                    out.append(Predicate("not", s, k, n.rest, lo, s + 1, f"not {n.name}: {text}"))
    return tuple(out)


class Checker:
    """Evaluates iterative conditions and negations of candidates over one key's events."""

    __slots__ = ("bp", "events", "ts", "lists", "names", "index")

    def __init__(self, bp: BoundedPattern, events: Sequence[Any], ts: Sequence[int], lists: Lists) -> None:
        self.bp = bp
        self.events = events
        self.ts = ts
        self.lists = lists
        self.names = bp.names
        self.index = {name: k for k, name in enumerate(self.names)}

    def step_holds(self, conjuncts: Sequence[Conjunct], s: int, cand: Candidate, lo: int) -> bool:
        """The conjuncts of step ``s`` hold on each of its events; ``cand`` binds steps ``lo..``."""
        name = self.names[s]
        events = self.events
        ts = self.ts
        positions = cand[s - lo]
        if len(positions) == 1:
            i = positions[0]
            return passes(conjuncts, name, events[i], Context(self, cand, lo, s, (), ts[i]))
        own: list[Any] = []
        for i in positions:
            event = events[i]
            if not passes(conjuncts, name, event, Context(self, cand, lo, s, own, ts[i])):
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
        events = self.events
        ts = self.ts
        for i in self.lists.negations[gap][k][a:b]:
            if passes(n.rest, n.name, events[i], Context(self, cand, lo, gap + 1, (), ts[i])):
                return False
        return True

    def check(self, p: Predicate, cand: Candidate, lo: int) -> bool:
        """Predicate ``p`` holds on ``cand``, which binds steps ``lo..``."""
        if p.kind == "step":
            return self.step_holds(p.conjuncts, p.index, cand, lo)
        return self.negation_holds(p.index, p.k, cand, lo)

    def test(self, p: Predicate, lo: int, hi: int) -> Callable[[Candidate], bool]:
        """Predicate ``p`` as a test of candidates over steps ``lo..hi``. One that needs fewer
        steps than those sees the same steps again in many candidates: its results are kept
        by those steps' positions (conditions are free of side effects)."""
        check = self.check
        if p.need_lo == lo and p.need_hi == hi:
            return lambda cand: check(p, cand, lo)
        known: dict[Candidate, bool | None] = {}
        a, b = p.need_lo - lo, p.need_hi - lo + 1

        def remembered(cand: Candidate) -> bool:
            passed = known.get(cand[a:b])
            if passed is None:
                key = cand[a:b]
                if key not in known:
                    try:
                        passed = known[key] = check(p, key, p.need_lo)
                        return passed
                    except Unbound:
                        # it reads a step below those (``readset`` guessed wrong): each time
                        # on the whole candidate
                        known[key] = None
                return check(p, cand, lo)
            return passed

        return remembered


def match_maker(bp: BoundedPattern, events: Sequence[Any]) -> Callable[[Candidate], dict[str, list[Any]]]:
    """``to_match`` for many candidates of one key: the names and the event lookup made once."""
    names = bp.names
    get = events.__getitem__

    def make(cand: Candidate) -> dict[str, list[Any]]:
        return dict(zip(names, [[get(p[0])] if len(p) == 1 else list(map(get, p)) for p in cand]))

    return make


def order_key(cand: Candidate) -> tuple[int, tuple[int, ...]]:
    """The documented output order: by the last event's position, then position by position."""
    flat = tuple(i for positions in cand for i in positions)
    return flat[-1], flat


def _single_key(cand: Candidate) -> tuple[int, Candidate]:
    return cand[-1][-1], cand


def sort_candidates(bp: BoundedPattern, found: list[Candidate]) -> None:
    """Sort ``found`` in ``order_key`` order. Without a looping step every step holds one
    position, so the candidates themselves compare as their flattened positions do."""
    found.sort(key=order_key if any(s.looping for s in bp.steps) else _single_key)
