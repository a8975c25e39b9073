"""OptiSeq (seed 000): ordered lists per step, the rarest step first, correlation checks last.

1. Buffer filter: one time-ordered list of event positions per step (and per negated step),
   holding the events that pass the step's single-event conditions.
2. Sizes: the lists are complete (the input is bounded), so their exact lengths stand in for the
   paper's sampled counts.
3. Start list: the single step with the shortest list (step 0 if every step loops). Expansion
   goes first towards the side whose lists are shorter on average, then to the other side;
   each step's candidates are found by binary search in its list, between the neighbouring
   step's event and the window's bound. A purely simple negation is checked by binary search as
   soon as both its neighbours are bound.
4. Verification: iterative conditions and iterative negations run last, on complete candidates,
   in pattern order; a check's result is kept by the positions of the steps it reads, for the
   other candidates that share them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

import attrs

from flowcep.bounded.plan import BoundedPattern
from flowcep.bounded.predicates import (
    Candidate,
    Checker,
    Lists,
    predicates,
    sort_candidates,
    windowed_subsets,
)


@attrs.frozen(slots=True)
class OptiSeqPlan:
    """Where the expansion starts and in which order it binds the steps."""

    start: int
    order: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def direction(self) -> str:
        if len(self.order) < 2:
            return "none"
        return "forward first" if self.order[1] == self.start + 1 else "backward first"


def plan_optiseq(bp: BoundedPattern, sizes: Sequence[int]) -> OptiSeqPlan:
    """Seed 000's start list and direction from the list sizes."""
    h = len(bp.steps)
    singles = [s for s in range(h) if not bp.steps[s].looping]
    k = min(singles, key=lambda s: (sizes[s], s)) if singles else 0
    forward = list(range(k + 1, h))
    backward = list(range(k - 1, -1, -1))
    if forward and backward:
        front = sum(sizes[:k]) / k
        back = sum(sizes[k + 1 :]) / (h - k - 1)
        order = [k] + (forward + backward if front > back else backward + forward)
    else:
        order = [k] + forward + backward
    return OptiSeqPlan(k, tuple(order), tuple(sizes))


def run_optiseq(
    bp: BoundedPattern,
    events: Sequence[Any],
    ts: Sequence[int],
    plan: OptiSeqPlan | None = None,
    lists: Lists | None = None,
) -> list[Candidate]:
    """All matches of ``bp`` over one key's time-ordered ``events``, in ``order_key`` order."""
    if lists is None:
        lists = Lists.build(bp, events)
    if plan is None:
        plan = plan_optiseq(bp, [len(x) for x in lists.steps])
    checker = Checker(bp, events, ts, lists)
    steps = bp.steps
    h = len(steps)
    window = bp.window
    n = len(events)
    order = plan.order
    negations = bp.negations
    has_neg = [bool(g) for g in negations]
    chosen: list[tuple[int, ...]] = [()] * h
    found: list[Candidate] = []
    # each check keeps its results by the positions of the steps it needs: complete candidates
    # share them
    checks = [checker.test(p, 0, h - 1) for p in predicates(bp)]

    def gaps_ok(j: int) -> bool:
        if j > 0 and has_neg[j - 1] and chosen[j - 1]:
            if not checker.simple_negation_holds(j - 1, chosen[j - 1][-1], chosen[j][0]):
                return False
        if j < h - 1 and has_neg[j] and chosen[j + 1]:
            if not checker.simple_negation_holds(j, chosen[j][-1], chosen[j + 1][0]):
                return False
        return True

    def expand(depth: int, first_ts: int, last_ts: int) -> None:
        if depth == h:
            cand = tuple(chosen)
            for check in checks:
                if not check(cand):
                    return
            found.append(cand)
            return
        j = order[depth]
        positions = lists.steps[j]
        if depth == 0:
            lo_pos, hi_pos = 0, n
        elif j > order[0]:  # forward: after step j - 1, before first_ts + window
            lo_pos = chosen[j - 1][-1] + 1
            hi_pos = bisect_left(ts, first_ts + window) if window > 0 else n
        else:  # backward: before step j + 1, after last_ts - window
            hi_pos = chosen[j + 1][0]
            lo_pos = bisect_right(ts, last_ts - window) if window > 0 else 0
        a = bisect_left(positions, lo_pos)
        b = bisect_left(positions, hi_pos)
        if a >= b:
            return
        step = steps[j]
        if not step.looping:
            for i in positions[a:b]:
                chosen[j] = (i,)
                if gaps_ok(j):
                    t = ts[i]
                    expand(
                        depth + 1,
                        t if depth == 0 or t < first_ts else first_ts,
                        t if depth == 0 or t > last_ts else last_ts,
                    )
            chosen[j] = ()
            return
        cands = positions[a:b]
        if depth == 0:
            subsets: Iterator[tuple[int, ...]] = windowed_subsets(
                cands, ts, window, step.min_times, step.max_times
            )
        else:
            top = len(cands) if step.max_times is None else min(step.max_times, len(cands))
            subsets = (c for r in range(step.min_times, top + 1) for c in combinations(cands, r))
        for subset in subsets:
            chosen[j] = subset
            if gaps_ok(j):
                t0 = ts[subset[0]]
                t1 = ts[subset[-1]]
                expand(
                    depth + 1,
                    t0 if depth == 0 or t0 < first_ts else first_ts,
                    t1 if depth == 0 or t1 > last_ts else last_ts,
                )
        chosen[j] = ()

    expand(0, 0, 0)
    sort_candidates(bp, found)
    return found
