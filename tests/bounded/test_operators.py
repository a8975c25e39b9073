"""User-defined operators in the tree evaluator (seed 002's S = <Z, Q, F>)."""

from __future__ import annotations

import pytest
from core.helpers import events, flat_ids, named, price_gt, run

from flowcep import Pattern
from flowcep.bounded import Composite, SequenceOperator, Stream, evaluate


def abc(window=None):
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b"))
        .followed_by_any("c").where(named("c"))
    )  # fmt: skip
    return p if window is None else p.within(window)


def ids(pattern, spec: str, operators, **kw) -> list[list[int]]:
    found = evaluate(pattern, events(spec), timestamp="ts", evaluator="tree", operators=operators, **kw)
    return [flat_ids(m) for m in found]


class PointTimeSequence(SequenceOperator):
    """Seed 002's example 2: the composite is a point in time, its left part's start (F)."""

    def compose(self, left: Composite, right: Composite, stream: Stream) -> Composite:
        return Composite(left.start, left.start, {**left.events, **right.events})


class FirstOnly(SequenceOperator):
    """Seed 002's example 1 in spirit (alarm de-duplication): each left composite is taken with
    the first right one only (Q), remembered in the output stream's states (Z)."""

    def stream(self, left: Stream, right: Stream) -> Stream:
        return Stream(f"first({left.type} ; {right.type})", {"taken": set()})

    def decide(self, left: Composite, right: Composite, stream: Stream) -> bool:
        taken = stream.states["taken"]
        if left.end >= right.start or left.start in taken:
            return False
        taken.add(left.start)
        return True


class Near(SequenceOperator):
    """Q: the right part starts at most 2 positions after the left part ends."""

    def decide(self, left: Composite, right: Composite, stream: Stream) -> bool:
        return left.end < right.start <= left.end + 2


def test_the_built_in_sequence_operator_gives_the_nfa_matches():
    stream = "a1 b2 a3 b4 c5 c6 b7 c8 c9"
    assert ids(abc(5), stream, {"b": SequenceOperator(), "c": SequenceOperator()}) == [
        [1, 2, 5],
        [1, 4, 5],
        [3, 4, 5],
        [3, 4, 6],
    ]
    assert sorted(ids(abc(5), stream, {"c": SequenceOperator()})) == run(abc(5), stream)


def test_a_point_time_composition_lets_the_next_step_follow_its_start():
    # (a ; b) is the point a: c need only follow a
    assert ids(abc(), "a1 c2 b3", {"b": PointTimeSequence()}) == [[1, 3, 2]]
    assert run(abc(), "a1 c2 b3") == []


def test_a_matching_decision_can_keep_the_first_pair_only_with_the_streams_states():
    assert ids(abc(), "a1 b2 b3 c4", {"b": FirstOnly()}) == [[1, 2, 4]]
    assert sorted(ids(abc(), "a1 b2 b3 c4", {})) == run(abc(), "a1 b2 b3 c4") == [[1, 2, 4], [1, 3, 4]]


def test_a_matching_decision_can_bound_the_distance():
    assert ids(abc(), "a1 b2 x3 x4 b5 c6", {"b": Near()}) == [[1, 2, 6]]


def test_the_window_and_the_conditions_still_hold_with_user_operators():
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b")).where(price_gt(3))
        .followed_by_any("c").where(named("c"))
        .where(lambda c, ctx: c.price > ctx.get_events_for_pattern("a")[0].price)
        .within(5)
    )  # fmt: skip
    # c2 may precede b3 (the point a); b4 is too cheap, c5 cheaper than a, c9 outside the window
    stream = "a1$2 c2$3 b3$5 b4$1 c5$1 c9$9"
    assert ids(p, stream, {"b": PointTimeSequence()}) == [[1, 3, 2]]


def test_operators_are_refused_outside_the_tree_and_for_unknown_or_first_steps():
    with pytest.raises(ValueError, match="give evaluator='tree', not 'auto'"):
        evaluate(abc(), events("a1"), timestamp="ts", evaluator="auto", operators={"b": Near()})
    with pytest.raises(ValueError, match="'x' is not a step of the pattern"):
        ids(abc(), "a1", {"x": Near()})
    with pytest.raises(ValueError, match="'a' is the first step"):
        ids(abc(), "a1", {"a": Near()})
    with pytest.raises(TypeError, match="must be a SequenceOperator"):
        ids(abc(), "a1", {"b": lambda left, right: True})
