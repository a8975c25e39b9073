"""OptiSeq and the operator tree: their matches, their order, what they serve and what not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from core.helpers import events, flat_ids, named, price_above_last_of, price_gt, run

from flowcep import AfterMatchSkipStrategy, ConditionError, Pattern, WithinType
from flowcep.bounded import UnsupportedPattern, compile_bounded, evaluate, explain, support
from flowcep.bounded.predicates import predicates
from flowcep.bounded.tree import Node, TreePlan, run_tree

BOUNDED = ["optiseq", "tree"]


def ids(pattern, spec: str, evaluator: str, **kw) -> list[list[int]]:
    """Matches flattened to event ids, in the evaluator's output order."""
    return [flat_ids(m) for m in evaluate(pattern, events(spec), timestamp="ts", evaluator=evaluator, **kw)]


def abc(window=None):
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b"))
        .followed_by_any("c").where(named("c"))
    )  # fmt: skip
    return p if window is None else p.within(window)


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_every_combination_inside_the_window_in_the_documented_order(evaluator):
    # ordered by the last event, then position by position
    assert ids(abc(5), "a1 b2 a3 b4 c5 c6 b7 c8 c9", evaluator) == [
        [1, 2, 5],
        [1, 4, 5],
        [3, 4, 5],
        [3, 4, 6],
    ]
    assert sorted(ids(abc(5), "a1 b2 a3 b4 c5 c6 b7 c8 c9", evaluator)) == run(
        abc(5), "a1 b2 a3 b4 c5 c6 b7 c8 c9"
    )


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_the_window_excludes_a_span_equal_to_it(evaluator):
    assert ids(abc(4), "a1 b2 c5", evaluator) == []
    assert ids(abc(4), "a1 b2 c4", evaluator) == [[1, 2, 4]]


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_equal_timestamps_follow_arrival_order(evaluator):
    assert ids(abc(2), "a1@0 b2@0 c3@0 b4@0", evaluator) == [[1, 2, 3]]


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_seed_000_stock_query(evaluator):
    # A;B;C;D WHERE a.price > 10 AND a.price > b.price AND c.price < d.price WITHIN 10
    p = (
        Pattern.begin("a").where(named("a")).where(price_gt(10))
        .followed_by_any("b").where(named("b")).where(lambda b, ctx: ctx.get_events_for_pattern("a")[0].price > b.price)
        .followed_by_any("c").where(named("c"))
        .followed_by_any("d").where(named("d")).where(lambda d, ctx: ctx.get_events_for_pattern("c")[0].price < d.price)
        .within(10)
    )  # fmt: skip
    stream = "a1$12 b2$11 a3$9 c4$5 b5$13 d6$6 c7$7 d8$6 a9$15 b10$14 c11$1 d12$2 d13$9"
    assert ids(p, stream, evaluator) == [[1, 2, 4, 6], [1, 2, 4, 8], [9, 10, 11, 12], [9, 10, 11, 13]]
    assert sorted(ids(p, stream, evaluator)) == run(p, stream)


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_not_followed_by_between_steps(evaluator):
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("x")
        .where(named("x"))
        .followed_by_any("c")
        .where(named("c"))
    )
    assert ids(p, "a1 c2 x3 c4 a5 c6", evaluator) == [[1, 2], [5, 6]]


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_a_negated_event_that_completes_the_match_does_not_stop_it(evaluator):
    # Flink: the negated event stops the run's live continuations, not the match it completes
    # (tests/bounded/flink_cases.py records Flink's answer)
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("x")
        .where(price_gt(5))
        .followed_by_any("c")
        .where(named("c"))
    )
    assert ids(p, "a1 c2$9 c3", evaluator) == [[1, 2]]


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_a_negated_event_taken_by_a_middle_step_stops_the_run(evaluator):
    p = (
        Pattern.begin("a").where(named("a"))
        .not_followed_by("x").where(price_gt(5))
        .followed_by_any("c").where(named("c"))
        .followed_by_any("d").where(named("d"))
    )  # fmt: skip
    assert ids(p, "a1 c2$9 d3 c4 d5", evaluator) == []


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_one_or_more_with_combinations_takes_every_subset(evaluator):
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b")).one_or_more().allow_combinations()
        .followed_by_any("c").where(named("c"))
    )  # fmt: skip
    assert ids(p, "a1 b2 b3 c4", evaluator) == [[1, 2, 3, 4], [1, 2, 4], [1, 3, 4]]


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_an_iterative_condition_sees_the_earlier_iterations(evaluator):
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b")).where(price_above_last_of("b")).times_or_more(2).allow_combinations()
    )  # fmt: skip
    stream = "a1 b2$3 b3$1 b4$4"
    assert ids(p, stream, evaluator) == [[1, 2, 4], [1, 3, 4]]
    assert sorted(ids(p, stream, evaluator)) == run(p, stream)


def test_the_tree_checks_a_predicate_again_at_the_root_when_it_reads_a_step_it_cannot_see():
    # the step name is built at run time: the static guess cannot place it, the check still holds
    def above_first_step(e, ctx):
        return e.price > ctx.get_events_for_pattern(chr(97))[0].price

    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b"))
        .followed_by_any("c").where(named("c")).where(above_first_step)
    )  # fmt: skip
    stream = "a1$5 b2 c3$4 c4$6 a5$1 b6 c7$2"
    assert ids(p, stream, "tree") == [[1, 2, 4], [5, 6, 7]]
    assert sorted(ids(p, stream, "tree")) == run(p, stream)


def test_the_tree_does_not_reuse_a_kept_result_when_a_condition_reads_outside_its_steps():
    # c's condition names "b" (the guess: it needs b and c) but also reads a, by a name built at
    # run time; at the root of ((a ; b) ; (c ; d)) the pair (b3, c4) comes with a1 and with a2
    def above_first(e, ctx):
        assert ctx.get_events_for_pattern("b")
        return e.price > ctx.get_events_for_pattern(chr(97))[0].price

    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b"))
        .followed_by_any("c").where(named("c")).where(above_first)
        .followed_by_any("d").where(named("d"))
    )  # fmt: skip
    bp = compile_bounded(p)
    preds = predicates(bp)
    assert [(q.need_lo, q.need_hi) for q in preds] == [(1, 2)]

    def node(lo, hi, left=None, right=None, here=()):
        return Node(lo, hi, left, right, here, 1.0, 1.0)

    root = node(0, 3, node(0, 1, node(0, 0), node(1, 1)), node(2, 3, node(2, 2), node(3, 3)), (0,))
    stream = events("a1$5 a2$1 b3 c4$3 d5")
    found = run_tree(bp, stream, [e.ts for e in stream], TreePlan(root, preds, False))
    assert found == [((1,), (2,), (3,), (4,))]  # a2 b3 c4 d5, by position
    assert run(p, stream) == [[2, 3, 4, 5]]


def inverse_price_positive(e, ctx):
    return 1 / e.price > 0


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_a_raising_condition_is_the_nfa_error(evaluator):
    # the tree tests b's condition on every event, a1 included, where the NFA never does: the
    # NFA runs instead and raises on the event it tests
    p = Pattern.begin("a").where(named("a")).followed_by_any("b").where(inverse_price_positive)
    with pytest.raises(ConditionError) as info:
        evaluate(p, events("a1$0 b2$0"), timestamp="ts", evaluator=evaluator)
    assert info.value.step == "b" and info.value.event.id == 2


@pytest.mark.parametrize("evaluator", BOUNDED)
def test_a_condition_raising_only_where_the_nfa_never_tests_it_gives_the_nfa_matches(evaluator):
    p = Pattern.begin("a").where(named("a")).followed_by_any("b").where(inverse_price_positive)
    assert ids(p, "b1$0 a2$1 b3$2", evaluator) == [[2, 3]]


def test_the_tree_keeps_declaration_order_unless_reordering_is_asked_for():
    calls = []

    def first(e, ctx):
        calls.append(("first", e.id))
        return e.price > 0

    def second(e, ctx):
        calls.append(("second", e.id))
        return e.price > 5

    p = Pattern.begin("a").where(named("a")).followed_by_any("b").where(named("b")).where(first).where(second)
    stream = events("a1 " + " ".join(f"b{i}${i % 9}" for i in range(2, 200)))

    def per_event() -> set[tuple[str, ...]]:
        seen: dict[int, list[str]] = {}
        for which, event_id in calls:
            seen.setdefault(event_id, []).append(which)
        return {tuple(x) for x in seen.values()}

    evaluate(p, stream, timestamp="ts", evaluator="tree")
    assert per_event() == {("first",), ("first", "second")}  # b2 .. : price 0 fails first
    calls.clear()
    reordered = evaluate(p, stream, timestamp="ts", evaluator="tree", reorder_predicates=True)
    # second passes less often (prices 6..8 of 0..8): once measured, it runs first
    assert ("second",) in per_event()
    assert sorted(flat_ids(m) for m in reordered) == run(p, stream)


@pytest.mark.parametrize(
    ("pattern", "feature"),
    [
        (Pattern.begin("a").next("b"), "next before step 'b' (only followed_by_any)"),
        (Pattern.begin("a").followed_by("b"), "followed_by before step 'b' (only followed_by_any)"),
        (Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event()).followed_by_any("b"),
         "the after-match skip strategy SkipPastLastStrategy{} (only no_skip)"),
        (Pattern.begin("a").followed_by_any("b").optional(), "optional() on step 'b'"),
        (Pattern.begin("a").followed_by_any("b").one_or_more(),
         "a looping step without allow_combinations() (no inner contiguity) on step 'b'"),
        (Pattern.begin("a").followed_by_any("b").one_or_more().consecutive(),
         "a looping step without allow_combinations() (consecutive() inner contiguity) on step 'b'"),
        (Pattern.begin("a").followed_by_any("b").one_or_more().greedy(), "greedy() on step 'b'"),
        (Pattern.begin("a").followed_by_any("b").one_or_more().allow_combinations().until(lambda e: True),
         "until() on step 'b'"),
        (Pattern.begin("a").not_next("b").followed_by_any("c"), "not_next on step 'b'"),
        (Pattern.begin("a").not_followed_by("b").within(5), "not_followed_by as the last step ('b')"),
        (Pattern.begin("a").followed_by_any("b").one_or_more().allow_combinations().not_followed_by("x").followed_by_any("c"),
         "not_followed_by after the looping step 'b'"),
        (Pattern.begin("a").not_followed_by("x").followed_by_any("b").one_or_more().allow_combinations(),
         "not_followed_by before the looping step 'b'"),
        (Pattern.begin("a").followed_by_any(Pattern.begin("b")), "group patterns"),
        (Pattern.begin("a").followed_by_any("b").within(5, WithinType.PREVIOUS_AND_CURRENT),
         "a PREVIOUS_AND_CURRENT or per-quantifier window"),
        (Pattern.begin("a").followed_by_any("b").times_or_more(2, timedelta(milliseconds=5)).allow_combinations(),
         "a PREVIOUS_AND_CURRENT or per-quantifier window"),
    ],
)  # fmt: skip
def test_unsupported_features_are_named(pattern, feature):
    assert support(pattern) == feature
    for evaluator in BOUNDED:
        with pytest.raises(UnsupportedPattern, match="not supported by the bounded evaluators") as info:
            evaluate(pattern, events("a1 b2"), timestamp="ts", evaluator=evaluator)
        assert info.value.feature == feature
    assert explain(pattern, events("a1 b2"), timestamp="ts") == f"evaluator: nfa (the NFA serves {feature})"


def test_auto_falls_back_to_the_nfa_outside_the_class():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    assert [flat_ids(m) for m in evaluate(p, events("a1 b2 a3 c4 b5"), timestamp="ts")] == [[1, 2]]


def test_explain_shows_start_list_direction_tree_shape_and_predicate_placement():
    p = (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b")).where(price_above_last_of("a"))
        .followed_by_any("c").where(named("c"))
        .within(10)
    )  # fmt: skip
    text = explain(p, events("a1 b2 b3 c4 b5 c6 b7 c8 c9 c10"), timestamp="ts", evaluator="tree")
    lines = text.splitlines()
    assert lines[0] == "evaluator: tree (requested)"
    assert lines[1].startswith("estimated cost: nfa ")
    assert "optiseq: list sizes a=1, b=4, c=5" in lines
    assert "optiseq: start list a, forward first, order a -> b -> c" in lines
    assert any(line.startswith("tree: ((a ; b) ; c), estimated cost") for line in lines)
    assert any(line.startswith("tree: predicate [b: ") and line.endswith("] at a ; b") for line in lines)


def test_a_bounded_evaluator_needs_a_sized_ordered_input():
    with pytest.raises(TypeError, match="sized, ordered collection"):
        evaluate(abc(), iter(events("a1 b2 c3")), timestamp="ts", evaluator="optiseq")
    with pytest.raises(ValueError, match=r"event 1 \(.*\): timestamp 1 is before the previous event's 5"):
        evaluate(abc(), events("a1@5 b2@1"), timestamp="ts", evaluator="optiseq")


def test_an_unknown_evaluator_is_refused():
    with pytest.raises(ValueError, match="evaluator must be one of 'nfa', 'optiseq', 'tree', 'auto'"):
        evaluate(abc(), events("a1"), timestamp="ts", evaluator="zstream")
