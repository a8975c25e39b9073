"""Operator trees (seed 002, Cesar): sequence operators over step lists, shaped by a cost model.

Leaves are the buffer-filtered step lists (a looping step's leaf is its Kleene operator: the
subsets of its list that fit the window). Every inner node is a sequence operator joining two
adjacent ranges of steps: its matching decision is the order and window check (a binary search
in the right input, sorted by first position), the negations of the gap it closes (an anti-join:
a binary search in the negated step's list), and the predicates pushed down to it; its
composition function concatenates the two inputs.

Predicate push-down: each iterative condition (a step's conjuncts after its leading simple ones,
or an iterative negation) sits at the lowest operator that binds every step it reads (guessed by
``readset``; a read outside the operator defers that predicate to the root for that candidate).

Shape: dynamic programming over the ``(n-1)!``-many trees' ranges picks the cheapest by the cost
model ``C = C_Q + P_Q * C_F`` summed over operators, with list sizes measured and an untested
predicate's pass probability taken as 1/2, as in the paper.

Predicate order: by default an operator evaluates its predicates in pattern order and a step's
conjuncts in declaration order, so the condition that raises on an event is the one Flink would
reach first. ``reorder=True`` opts in to the paper's strategy 1: each conjunct is its own
predicate, pushed down on its own, and each operator orders its predicates by measured pass rate,
lowest first, re-sorting as it goes.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

import attrs

from flowcep.bounded.plan import BoundedPattern
from flowcep.bounded.predicates import (
    Candidate,
    Checker,
    Lists,
    Predicate,
    Unbound,
    predicates,
    sort_candidates,
    windowed_subsets,
)

_RESORT_EVERY = 64
#: a predicate check costs this many join steps (it builds the context a condition reads)
PREDICATE_COST = 6.0
#: a look-up of a kept predicate result
LOOKUP_COST = 0.5
#: a binary search in a sorted list (``bisect``, in C: about one join step at these sizes)
SEARCH_COST = 1.0


@attrs.frozen(slots=True)
class Node:
    """An operator over steps ``lo..hi`` (a leaf when ``lo == hi``) with its pushed-down predicates."""

    lo: int
    hi: int
    left: Node | None
    right: Node | None
    preds: tuple[int, ...]  # indices into the tree's predicate list
    card: float
    cost: float

    def shape(self, names: Sequence[str]) -> str:
        """The subtree: ``((a ; b) ; c)``."""
        if self.left is None or self.right is None:
            return names[self.lo]
        return f"({self.operator(names)})"

    def operator(self, names: Sequence[str]) -> str:
        """This node alone: a leaf's step name, or ``left ; right``."""
        if self.left is None or self.right is None:
            return names[self.lo]
        return f"{self.left.shape(names)} ; {self.right.shape(names)}"


@attrs.frozen(slots=True)
class TreePlan:
    root: Node
    preds: tuple[Predicate, ...]
    reorder: bool

    def nodes(self) -> list[Node]:
        out: list[Node] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            if node.left is not None and node.right is not None:
                stack.extend((node.right, node.left))
        return out


def _within(node_lo: int, node_hi: int, p: Predicate) -> bool:
    return node_lo <= p.need_lo and p.need_hi <= node_hi


def interval_cards(
    bp: BoundedPattern,
    sizes: Sequence[int],
    neg_sizes: Sequence[Sequence[int]],
    span: int,
    preds: Sequence[Predicate] = (),
) -> list[list[float]]:
    """``card[a][b]``: the estimated partial matches over steps ``a..b`` that pass ``preds``.

    Independence model: the product of the list sizes (a looping step counts its subsets in a
    window), times ``window / span`` per step after the first (it must fall in the first one's
    window) over ``k!`` (the ``k`` later events come in one order), times the chance that no
    negated event falls in a gap, times 1/2 per predicate (the paper's prior).
    """
    h = len(bp.steps)
    span = max(span, 1)
    in_window = min(1.0, bp.window / span) if bp.window > 0 else 1.0
    leaf = []
    for s, step in enumerate(bp.steps):
        n = float(sizes[s])
        if step.looping:
            n *= 2.0 ** min(max(n * in_window - step.min_times + 1, 0.0), 30.0)
        leaf.append(n)
    card = [[0.0] * h for _ in range(h)]
    for a in range(h):
        c = 1.0
        for b in range(a, h):
            c *= leaf[b]
            if b > a:
                c *= in_window / (b - a)
                for size in neg_sizes[b - 1]:
                    c *= math.exp(-size * in_window / 3)
            passing = sum(1 for p in preds if a <= p.need_lo and p.need_hi <= b)
            card[a][b] = c * 0.5**passing
    return card


def check_cost(raw: Sequence[Sequence[float]], p: Predicate, lo: int, hi: int, pairs: float) -> float:
    """What checking ``p`` on ``pairs`` candidates over steps ``lo..hi`` costs: a check each,
    unless ``p`` needs fewer steps; then a look-up each, and a check per distinct binding of
    the steps it needs (``Checker.test`` keeps the results)."""
    if p.need_lo == lo and p.need_hi == hi:
        return pairs * PREDICATE_COST
    return pairs * LOOKUP_COST + min(pairs, raw[p.need_lo][p.need_hi]) * PREDICATE_COST


def plan_tree(
    bp: BoundedPattern,
    sizes: Sequence[int],
    neg_sizes: Sequence[Sequence[int]],
    span: int,
    reorder: bool = False,
    cards: tuple[list[list[float]], list[list[float]]] | None = None,
) -> TreePlan:
    """The cheapest tree by the cost model (see the module docstring): an operator costs a
    binary search per left input plus, per pair it tests, one unit and its predicates'
    ``check_cost``. ``cards``: ``interval_cards`` without and with the predicates, if made."""
    preds = predicates(bp, split_conjuncts=reorder)
    h = len(bp.steps)
    if cards is not None and not reorder:  # the planner's, for the same predicates
        raw, card = cards
    else:
        raw = interval_cards(bp, sizes, neg_sizes, span)
        card = interval_cards(bp, sizes, neg_sizes, span, preds)
    best: dict[tuple[int, int], Node] = {}
    for s in range(h):
        here = tuple(i for i, p in enumerate(preds) if p.need_lo == s and p.need_hi == s)
        best[(s, s)] = Node(s, s, None, None, here, card[s][s], raw[s][s] * len(here) * PREDICATE_COST)
    for width in range(1, h):
        for lo in range(0, h - width):
            hi = lo + width
            below = sum(1 for p in preds if _within(lo, hi, p))
            options = []
            for m in range(lo, hi):
                left, right = best[(lo, m)], best[(m + 1, hi)]
                here = tuple(
                    i
                    for i, p in enumerate(preds)
                    if _within(lo, hi, p) and not _within(lo, m, p) and not _within(m + 1, hi, p)
                )
                pairs = raw[lo][hi] * 0.5 ** (below - len(here))
                seek = left.card * SEARCH_COST
                checks = sum(check_cost(raw, preds[i], lo, hi, pairs) for i in here)
                cost = left.cost + right.cost + seek + pairs + checks
                options.append(Node(lo, hi, left, right, here, card[lo][hi], cost))
            best[(lo, hi)] = min(options, key=lambda node: node.cost)
    return TreePlan(best[(0, h - 1)], tuple(preds), reorder)


#: the predicates deferred to the root for some candidates of a node (see ``TreeRun.filter``)
Deferred = dict[Candidate, tuple[int, ...]]


class TreeRun:
    """One evaluation of a plan over one key's events. A node gives its candidates sorted by
    first position, and those of its candidates with deferred predicates."""

    def __init__(
        self, plan: TreePlan, bp: BoundedPattern, events: Sequence[Any], ts: Sequence[int], lists: Lists
    ) -> None:
        self.plan = plan
        self.bp = bp
        self.ts = ts
        self.lists = lists
        self.checker = Checker(bp, events, ts, lists)
        self.stats: dict[int, list[int]] = {}

    def filter(self, node: Node, cands: list[Candidate], deferred: Deferred) -> list[Candidate]:
        """Keep the candidates that pass the node's predicates, in order. A predicate that
        reads a step the node does not bind (``Unbound``) is added to ``deferred``."""
        if not node.preds:
            return cands
        order = list(node.preds)
        preds = self.plan.preds
        tests = {i: self.checker.test(preds[i], node.lo, node.hi) for i in order}
        out: list[Candidate] = []
        if len(order) == 1:
            (i,) = order
            test = tests[i]
            for cand in cands:
                try:
                    if test(cand):
                        out.append(cand)
                except Unbound:
                    deferred[cand] = deferred.get(cand, ()) + (i,)
                    out.append(cand)
            return out
        reorder = self.plan.reorder
        stats = self.stats
        for seen, cand in enumerate(cands, 1):
            ok = True
            for i in order:
                try:
                    passed = tests[i](cand)
                except Unbound:
                    deferred[cand] = deferred.get(cand, ()) + (i,)
                    continue
                if reorder:
                    counts = stats.setdefault(i, [0, 0])
                    counts[0] += 1
                    counts[1] += passed
                if not passed:
                    ok = False
                    break
            if ok:
                out.append(cand)
            if reorder and seen % _RESORT_EVERY == 0:
                order.sort(key=lambda i: (stats[i][1] + 1) / (stats[i][0] + 2) if i in stats else 0.5)
        return out

    def leaf(self, node: Node) -> tuple[list[Candidate], Deferred]:
        s = node.lo
        step = self.bp.steps[s]
        positions = self.lists.steps[s]
        cands: list[Candidate]
        if step.looping:  # windowed_subsets gives them by first position
            subsets = windowed_subsets(positions, self.ts, self.bp.window, step.min_times, step.max_times)
            cands = [(c,) for c in subsets]
        else:
            cands = [((i,),) for i in positions]
        deferred: Deferred = {}
        return self.filter(node, cands, deferred), deferred

    def join(self, node: Node) -> tuple[list[Candidate], Deferred]:
        assert node.left is not None and node.right is not None
        left, ldeferred = self.evaluate(node.left)
        right, rdeferred = self.evaluate(node.right)
        deferred: Deferred = {}
        if not left or not right:
            return [], deferred
        ts = self.ts
        n = len(ts)
        window = self.bp.window
        gap = node.left.hi
        simple_neg = any(not x.rest for x in self.bp.negations[gap])
        holds = self.checker.simple_negation_holds
        # a right candidate of one event ends where it starts: inside the window
        one_event = node.right.lo == node.right.hi and not self.bp.steps[node.right.lo].looping
        firsts = [cand[0][0] for cand in right]
        out: list[Candidate] = []
        for lcand in left:
            last = lcand[-1][-1]
            end = bisect_left(ts, ts[lcand[0][0]] + window) if window > 0 else n
            j = bisect_right(firsts, last)
            k = bisect_left(firsts, end, j)
            if one_event and not simple_neg:
                out += [lcand + rcand for rcand in right[j:k]]
                continue
            for rcand in right[j:k]:
                if rcand[-1][-1] >= end:
                    continue
                if simple_neg and not holds(gap, last, rcand[0][0]):
                    continue
                out.append(lcand + rcand)
        if ldeferred or rdeferred:
            mid = node.left.hi + 1 - node.lo
            for cand in out:
                before = ldeferred.get(cand[:mid], ()) + rdeferred.get(cand[mid:], ())
                if before:
                    deferred[cand] = before
        return self.filter(node, out, deferred), deferred

    def evaluate(self, node: Node) -> tuple[list[Candidate], Deferred]:
        if node.left is None:
            return self.leaf(node)
        return self.join(node)

    def run(self) -> list[Candidate]:
        preds = self.plan.preds
        check = self.checker.check
        found, deferred = self.evaluate(self.plan.root)
        if deferred:
            found = [
                cand
                for cand in found
                if cand not in deferred or all(check(preds[i], cand, 0) for i in sorted(deferred[cand]))
            ]
        else:
            found = list(found)
        sort_candidates(self.bp, found)
        return found


def run_tree(
    bp: BoundedPattern,
    events: Sequence[Any],
    ts: Sequence[int],
    plan: TreePlan | None = None,
    reorder: bool = False,
    lists: Lists | None = None,
) -> list[Candidate]:
    """All matches of ``bp`` over one key's time-ordered ``events``, in ``order_key`` order."""
    if lists is None:
        lists = Lists.build(bp, events)
    if plan is None:
        span = ts[-1] - ts[0] + 1 if ts else 1
        plan = plan_tree(
            bp, [len(x) for x in lists.steps], [[len(x) for x in g] for g in lists.negations], span, reorder
        )
    return TreeRun(plan, bp, events, ts, lists).run()
