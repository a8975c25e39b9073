"""The planner: which evaluator runs a pattern over bounded data, and why.

``plan(pattern, events, ts)`` estimates the work of each evaluator from the buffer-filtered list
sizes (exact, since the data is bounded) and the independence model of ``tree.interval_cards``
(how many partial matches span steps ``a..b``):

- the NFA pays a fixed cost per event plus, per partial match, a cost to start it and a cost
  per event it sees while its window is open;
- OptiSeq pays the buffer filter (one call per event and step), one unit per partial
  candidate along its expansion order (built before any iterative predicate) and a binary
  search per step expanded, then the verification of each complete candidate;
- the operator tree pays the buffer filter plus its cost model's total.

The unit costs below are relative to one call of a simple condition; they were calibrated on
the benchmark (docs/bounded.md). ``auto`` picks a bounded evaluator only when its estimate is
below ``MARGIN`` times the NFA's, so that a misestimate rarely costs speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from flowcep.bounded.optiseq import OptiSeqPlan, plan_optiseq
from flowcep.bounded.plan import BoundedPattern, UnsupportedPattern, compile_bounded
from flowcep.bounded.predicates import Lists, predicates
from flowcep.bounded.tree import PREDICATE_COST, SEARCH_COST, TreePlan, check_cost, interval_cards, plan_tree
from flowcep.pattern import Pattern

EVALUATORS = ("nfa", "optiseq", "tree", "auto")

#: the NFA's cost per event (its loop, the shared buffer), per partial match it starts or
#: extends (a new run, its buffer entry, its pruning), and per live run per event
NFA_EVENT = 12.0
NFA_START = 24.0
NFA_RUN = 4.0
#: a buffer-filter call, and a partial candidate of OptiSeq's expansion or of a tree operator
FILTER = 1.0
EXPAND = 3.0
VERIFY = 10.0
TREE = 2.0
#: each evaluator's time per unit, relative to the NFA's: above the benchmark's median ratios,
#: a bias towards the NFA (docs/bounded.md §4)
OPTISEQ_SCALE = 1.4
TREE_SCALE = 1.7
MARGIN = 0.6
#: ``auto`` runs a key with fewer events on the NFA, unplanned: the bounded evaluators' fixed
#: cost per key (lists, estimates, plans) is then more than the NFA's whole work
SMALL_KEY = 32


@attrs.frozen(slots=True)
class Plan:
    """The planner's decision and what it was based on."""

    evaluator: str
    reason: str
    costs: dict[str, float]
    bounded: BoundedPattern | None = None
    optiseq: OptiSeqPlan | None = None
    tree: TreePlan | None = None
    lists: Lists | None = None

    def explain(self) -> str:
        """A plain-text account: the choice, the estimates, the OptiSeq plan and the tree."""
        lines = [f"evaluator: {self.evaluator} ({self.reason})"]
        if self.costs:
            lines.append("estimated cost: " + ", ".join(f"{k} {v:,.0f}" for k, v in self.costs.items()))
        bp = self.bounded
        if bp is None:
            return "\n".join(lines)
        names = bp.names
        if self.optiseq is not None:
            o = self.optiseq
            sizes = ", ".join(f"{n}={s}" for n, s in zip(names, o.sizes))
            lines.append(f"optiseq: list sizes {sizes}")
            lines.append(
                f"optiseq: start list {names[o.start]}, {o.direction}, order "
                + " -> ".join(names[i] for i in o.order)
            )
        if self.tree is not None:
            t = self.tree
            lines.append(f"tree: {t.root.shape(names)}, estimated cost {t.root.cost:,.0f}")
            for node in t.nodes():
                where = node.operator(names)
                for i in node.preds:
                    lines.append(f"tree: predicate [{t.preds[i].label}] at {where}")
            for gap, negs in enumerate(bp.negations):
                for n in negs:
                    if not n.rest:
                        lines.append(
                            f"tree: not {n.name} (simple) as an anti-join between {names[gap]} and {names[gap + 1]}"
                        )
        return "\n".join(lines)


def estimate(
    bp: BoundedPattern, lists: Lists, n: int, span: int
) -> tuple[dict[str, float], OptiSeqPlan, TreePlan]:
    """The estimated work of each evaluator, and the OptiSeq and tree plans it assumed."""
    sizes = [len(x) for x in lists.steps]
    neg_sizes = [[len(x) for x in g] for g in lists.negations]
    h = len(sizes)
    span = max(span, 1)
    preds = predicates(bp)
    card = interval_cards(bp, sizes, neg_sizes, span, preds)
    raw = interval_cards(bp, sizes, neg_sizes, span)
    seen = n * min(1.0, bp.window / span) / 2 if bp.window > 0 else n / 2
    live = sum(card[0][j] for j in range(h - 1))
    nfa = n * NFA_EVENT + live * (NFA_START + seen * NFA_RUN)
    filters = n * (h + sum(len(g) for g in bp.negations)) * FILTER
    o = plan_optiseq(bp, sizes)
    bound_lo = bound_hi = o.start
    expansion = raw[o.start][o.start]
    for j in o.order[1:]:
        before = raw[bound_lo][bound_hi]
        bound_lo, bound_hi = min(bound_lo, j), max(bound_hi, j)
        expansion += raw[bound_lo][bound_hi] + before * SEARCH_COST
    full = raw[0][h - 1]
    verification = sum(check_cost(raw, p, 0, h - 1, full) for p in preds) * VERIFY / PREDICATE_COST
    t = plan_tree(bp, sizes, neg_sizes, span, cards=(raw, card))
    costs = {
        "nfa": nfa,
        "optiseq": (filters + expansion * EXPAND + verification) * OPTISEQ_SCALE,
        "tree": (filters + t.root.cost * TREE) * TREE_SCALE,
    }
    return costs, o, t


def plan(
    pattern: Pattern,
    events: Sequence[Any],
    ts: Sequence[int],
    evaluator: str = "auto",
    bounded: BoundedPattern | None = None,
    detailed: bool = False,
) -> Plan:
    """Choose an evaluator for ``pattern`` over one key's bounded, time-ordered ``events``
    (``bounded``: ``compile_bounded(pattern)`` if already made, as for many keys). An explicit
    bounded evaluator raises ``UnsupportedPattern`` for a pattern outside the class.
    ``detailed``: make the estimates and plans even where the choice needs none (for explain)."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(map(repr, EVALUATORS))}, got {evaluator!r}")
    if evaluator == "nfa":
        return Plan("nfa", "requested", {})
    try:
        bp = compile_bounded(pattern) if bounded is None else bounded
    except UnsupportedPattern as exc:
        if evaluator == "auto":
            return Plan("nfa", f"the NFA serves {exc.feature}", {})
        raise
    small = evaluator == "auto" and len(events) < SMALL_KEY
    small_reason = f"{len(events)} events, fewer than {SMALL_KEY}: planning would cost more than it saves"
    if small and not detailed:
        return Plan("nfa", small_reason, {})
    lists = Lists.build(bp, events)
    empty = next((s.name for s, x in zip(bp.steps, lists.steps) if not x), None)
    empty_reason = f"no event passes the conditions of step {empty!r}: no match"
    chosen = "optiseq" if evaluator == "auto" else evaluator
    if empty is not None and not small and not detailed:
        return Plan(chosen, empty_reason, {}, bp, lists=lists)
    span = ts[-1] - ts[0] + 1 if ts else 1
    costs, o, t = estimate(bp, lists, len(events), span)
    if small:
        return Plan("nfa", small_reason, costs, bp, o, t, lists)
    if empty is not None:
        return Plan(chosen, empty_reason, costs, bp, o, t, lists)
    if evaluator != "auto":
        return Plan(evaluator, "requested", costs, bp, o, t, lists)
    best = min(("optiseq", "tree"), key=costs.__getitem__)
    if costs[best] < MARGIN * costs["nfa"]:
        return Plan(best, f"lowest estimate, below {MARGIN} x the NFA's", costs, bp, o, t, lists)
    return Plan("nfa", f"no bounded evaluator estimated below {MARGIN} x the NFA's", costs, bp, o, t, lists)
