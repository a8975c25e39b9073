"""User-defined operators for the tree evaluator (seed 002: every composition step is an operator
``S = <Z, Q, F>``).

An inner node of the operator tree joins the composites of two adjacent ranges of steps. Its
operator has three functions:

- ``stream(left, right)`` (Z, the output-stream function): the type and states of the stream the
  node emits, called once when the tree is built; the states are the operator's to keep across
  the pairs it sees;
- ``decide(left, right, stream)`` (Q, the matching decision): whether two composites compose;
- ``compose(left, right, stream)`` (F, the composition function): the new composite, with its
  start and end.

``SequenceOperator`` is the built-in sequence (``followed_by_any``): the left composite ends
before the right one starts; the new one runs from the left's start to the right's end. A user's
operator subclasses it and overrides what it changes, and is given to the tree evaluator for the
step it joins to what precedes it: ``evaluate(pattern, events, timestamp="ts", evaluator="tree",
operators={"b": PointTimeSequence()})`` (docs/bounded.md §3).

The tree keeps what is not the operator's: each step's conditions (pushed down to the lowest node
that binds what they read), the negations of a gap, and the window, on the first and last events
of a match. Start and end are positions in the key's events in time order (equal timestamps in
arrival order), not milliseconds; read an event's time from the event.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from flowcep.bounded.plan import BoundedPattern
from flowcep.bounded.predicates import Candidate, Lists, Predicate, predicates
from flowcep.bounded.tree import Deferred, Node, TreePlan, TreeRun


@attrs.frozen(slots=True)
class Stream:
    """A node's output stream (seed 002's ``E = <type, states, {e}>``): its type, and states the
    operator may keep (a dict it owns)."""

    type: str
    states: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(slots=True)
class Composite:
    """A composite event: ``start`` and ``end`` positions (see the module docstring), the events
    of its steps (step name -> events, in pattern order) and the ``attributes`` its operator gave it."""

    start: int
    end: int
    events: Mapping[str, list[Any]]
    attributes: Mapping[str, Any] = attrs.field(factory=dict)


class SequenceOperator:
    """The built-in sequence operator; subclass it to change Q, F or Z."""

    def stream(self, left: Stream, right: Stream) -> Stream:
        """Z: ``(left ; right)``, no states."""
        return Stream(f"({left.type} ; {right.type})")

    def decide(self, left: Composite, right: Composite, stream: Stream) -> bool:
        """Q: the left composite ends before the right one starts."""
        return left.end < right.start

    def compose(self, left: Composite, right: Composite, stream: Stream) -> Composite:
        """F: from the left's start to the right's end, the events of both."""
        return Composite(left.start, right.end, {**left.events, **right.events})

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def gap_operators(
    names: tuple[str, ...], operators: Mapping[str, SequenceOperator]
) -> dict[int, SequenceOperator]:
    """``operators`` by gap (gap ``g`` joins step ``g`` to step ``g + 1``): each names the step it
    joins to what precedes it, which must be a step of the pattern other than the first."""
    out: dict[int, SequenceOperator] = {}
    for name, op in operators.items():
        if name not in names:
            raise ValueError(f"operators: {name!r} is not a step of the pattern (steps: {', '.join(names)})")
        if name == names[0]:
            raise ValueError(
                f"operators: {name!r} is the first step; an operator joins a step to the ones before it"
            )
        if not isinstance(op, SequenceOperator):
            raise TypeError(f"operators: the operator for {name!r} must be a SequenceOperator, got {op!r}")
        out[names.index(name) - 1] = op
    return out


def left_deep(bp: BoundedPattern, preds: Sequence[Predicate]) -> TreePlan:
    """The tree ``((s0 ; s1) ; s2) ...``, each predicate at the lowest node that binds what it needs."""

    def here(lo: int, hi: int) -> tuple[int, ...]:
        if lo == hi:
            return tuple(i for i, p in enumerate(preds) if p.need_lo == p.need_hi == lo)
        return tuple(i for i, p in enumerate(preds) if p.need_hi == hi and p.need_lo < hi)

    root = Node(0, 0, None, None, here(0, 0), 0.0, 0.0)
    for s in range(1, len(bp.steps)):
        leaf = Node(s, s, None, None, here(s, s), 0.0, 0.0)
        root = Node(0, s, root, leaf, here(0, s), 0.0, 0.0)
    return TreePlan(root, tuple(preds), False)


class OperatorRun(TreeRun):
    """A left-deep tree whose nodes run their operators' Q and F on composites."""

    def __init__(
        self,
        bp: BoundedPattern,
        events: Sequence[Any],
        ts: Sequence[int],
        lists: Lists,
        operators: Mapping[str, SequenceOperator],
    ) -> None:
        super().__init__(left_deep(bp, predicates(bp)), bp, events, ts, lists)
        self.operators = gap_operators(bp.names, operators)
        # each node's output stream, by its range of steps (Z, once per run); a leaf's: its step
        self.streams = {(s, s): Stream(name) for s, name in enumerate(bp.names)}
        self.composites: dict[Candidate, Composite] = {}  # those the operators made

    def composite(self, cand: Candidate, lo: int) -> Composite:
        """What an operator made of ``cand``, or a leaf's composite (one step's events)."""
        made = self.composites.get(cand)
        if made is not None:
            return made
        events = self.checker.events
        return Composite(cand[0][0], cand[0][-1], {self.bp.names[lo]: [events[i] for i in cand[0]]})

    def join(self, node: Node) -> tuple[list[Candidate], Deferred]:
        assert node.left is not None and node.right is not None
        left, ldeferred = self.evaluate(node.left)
        right, rdeferred = self.evaluate(node.right)
        gap = node.left.hi
        op = self.operators.get(gap, _SEQUENCE)
        stream = op.stream(self.streams[node.left.lo, gap], self.streams[node.hi, node.hi])
        self.streams[node.lo, node.hi] = stream
        ts = self.ts
        window = self.bp.window
        holds = self.checker.simple_negation_holds
        simple_neg = any(not x.rest for x in self.bp.negations[gap])
        firsts = [cand[0][0] for cand in right]
        out: list[Candidate] = []
        deferred: Deferred = {}
        for lcand in left:
            positions = [i for step in lcand for i in step]
            lo_t, hi_t = ts[min(positions)], ts[max(positions)]
            a, b = 0, len(right)
            if window > 0:  # every event of the match within the window of its earliest one
                a = bisect_left(firsts, bisect_right(ts, hi_t - window))
                b = bisect_left(firsts, bisect_left(ts, lo_t + window))
            lcomp = self.composite(lcand, node.left.lo)
            for rcand in right[a:b]:
                if window > 0 and not (hi_t - window < ts[rcand[-1][-1]] < lo_t + window):
                    continue
                if simple_neg and not holds(gap, lcand[-1][-1], rcand[0][0]):
                    continue
                rcomp = self.composite(rcand, node.right.lo)
                if not op.decide(lcomp, rcomp, stream):
                    continue
                cand = lcand + rcand
                self.composites[cand] = op.compose(lcomp, rcomp, stream)
                out.append(cand)
                before = ldeferred.get(lcand, ()) + rdeferred.get(rcand, ())
                if before:
                    deferred[cand] = before
        return self.filter(node, out, deferred), deferred


_SEQUENCE = SequenceOperator()


def run_operators(
    bp: BoundedPattern,
    events: Sequence[Any],
    ts: Sequence[int],
    operators: Mapping[str, SequenceOperator],
    lists: Lists | None = None,
) -> list[Candidate]:
    """The candidates of ``bp`` over one key's time-ordered ``events`` composed by ``operators``
    (the built-in sequence at every other step), in ``order_key`` order."""
    if lists is None:
        lists = Lists.build(bp, events)
    return OperatorRun(bp, events, ts, lists, operators).run()
