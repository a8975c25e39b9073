"""The pattern builder, quantifiers and skip strategies: behaviour, aliases and Flink's error messages."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from flowcep.pattern import (
    AfterMatchSkipStrategy,
    BooleanConditions,
    ConditionError,
    ConsumingStrategy,
    FlinkRuntimeException,
    GroupPattern,
    IllegalArgumentException,
    MalformedPatternException,
    NullPointerException,
    Pattern,
    Quantifier,
    QuantifierProperty,
    RichAndCondition,
    RichOrCondition,
    SubtypeCondition,
    Times,
    UnsupportedOperationException,
    WithinType,
    to_millis,
)

P = QuantifierProperty
S = ConsumingStrategy
OPTIONAL_TO_NOT = (
    "Specifying a pattern with an optional path to NOT condition is not supported yet. "
    "You can simulate such pattern with two independent patterns, one with and the other "
    "without the optional part."
)


def exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def names(p: Pattern | None) -> list[str]:
    out = []
    while p is not None:
        out.append(p.name)
        p = p.previous
    return out[::-1]


# ---------------------------------------------------------------- begin and chaining


def test_begin_defaults() -> None:
    p = Pattern.begin("a")
    assert p.name == "a" and p.previous is None
    assert p.condition is None and p.until_condition is None and p.times_ is None
    assert p.window_times == {}
    assert p.quantifier.properties == frozenset({P.SINGLE})
    assert p.quantifier.consuming_strategy is S.STRICT
    assert p.quantifier.inner_consuming_strategy is S.SKIP_TILL_NEXT
    assert p.skip_strategy == AfterMatchSkipStrategy.no_skip()


def test_begin_with_skip_strategy_is_copied_to_every_node() -> None:
    skip = AfterMatchSkipStrategy.skip_past_last_event()
    p = Pattern.begin("a", skip).next("b").followed_by("c").not_next("d")
    node: Pattern | None = p
    while node is not None:
        assert node.skip_strategy is skip
        node = node.previous


def test_begin_rejects_non_name() -> None:
    with pytest.raises(TypeError):
        Pattern.begin(3)  # type: ignore[arg-type]


def test_begin_rejects_bad_skip_strategy() -> None:
    with pytest.raises(TypeError):
        Pattern.begin("a", "skip")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "strategy"),
    [
        ("next", S.STRICT),
        ("followed_by", S.SKIP_TILL_NEXT),
        ("followedBy", S.SKIP_TILL_NEXT),
        ("followed_by_any", S.SKIP_TILL_ANY),
        ("followedByAny", S.SKIP_TILL_ANY),
        ("not_next", S.NOT_NEXT),
        ("notNext", S.NOT_NEXT),
        ("not_followed_by", S.NOT_FOLLOW),
        ("notFollowedBy", S.NOT_FOLLOW),
    ],
)
def test_chaining_creates_a_new_node_with_the_strategy(method: str, strategy: ConsumingStrategy) -> None:
    a = Pattern.begin("a")
    b = getattr(a, method)("b")
    assert b is not a and b.previous is a and b.name == "b"
    assert b.quantifier.consuming_strategy is strategy
    assert b.quantifier.properties == frozenset({P.SINGLE})


def test_chain_order() -> None:
    assert names(Pattern.begin("a").next("b").followed_by("c").followed_by_any("d")) == ["a", "b", "c", "d"]


def test_nodes_do_not_share_quantifiers() -> None:
    a = Pattern.begin("a")
    b = a.next("b")
    assert a.quantifier is not b.quantifier
    b.one_or_more().optional()
    assert a.quantifier.properties == frozenset({P.SINGLE})


@pytest.mark.parametrize("method", ["not_next", "not_followed_by"])
def test_not_after_optional_is_unsupported(method: str) -> None:
    with pytest.raises(UnsupportedOperationException, match=exact(OPTIONAL_TO_NOT)):
        getattr(Pattern.begin("a").optional(), method)("b")


def test_not_after_optional_looping_is_unsupported() -> None:
    with pytest.raises(UnsupportedOperationException, match=exact(OPTIONAL_TO_NOT)):
        Pattern.begin("a").one_or_more().optional().notFollowedBy("b")


def test_not_with_group_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Pattern.begin("a").not_next(Pattern.begin("b"))  # type: ignore[arg-type]


# ---------------------------------------------------------------- groups


def test_begin_with_pattern_creates_group() -> None:
    inner = Pattern.begin("x").next("y")
    g = Pattern.begin(inner)
    assert isinstance(g, GroupPattern)
    assert g.name == "GroupPattern" and g.previous is None
    assert g.raw_pattern is inner and g.get_raw_pattern() is inner and g.getRawPattern() is inner
    assert g.quantifier.consuming_strategy is S.STRICT


def test_begin_group_with_skip_strategy() -> None:
    skip = AfterMatchSkipStrategy.skip_to_next()
    g = Pattern.begin(Pattern.begin("x"), skip)
    assert g.skip_strategy is skip
    assert g.next("z").skip_strategy is skip


@pytest.mark.parametrize(
    ("method", "strategy"),
    [("next", S.STRICT), ("followed_by", S.SKIP_TILL_NEXT), ("followed_by_any", S.SKIP_TILL_ANY)],
)
def test_group_chaining(method: str, strategy: ConsumingStrategy) -> None:
    a = Pattern.begin("a")
    inner = Pattern.begin("x")
    g = getattr(a, method)(inner)
    assert isinstance(g, GroupPattern)
    assert g.previous is a and g.raw_pattern is inner
    assert g.quantifier.consuming_strategy is strategy


def test_group_where_is_unsupported() -> None:
    with pytest.raises(
        UnsupportedOperationException, match=exact("GroupPattern does not support where clause.")
    ):
        Pattern.begin(Pattern.begin("x")).where(lambda e: True)


def test_group_or_is_unsupported() -> None:
    with pytest.raises(
        UnsupportedOperationException, match=exact("GroupPattern does not support or clause.")
    ):
        Pattern.begin(Pattern.begin("x")).or_(lambda e: True)


def test_group_subtype_is_unsupported() -> None:
    with pytest.raises(
        UnsupportedOperationException, match=exact("GroupPattern does not support subtype clause.")
    ):
        Pattern.begin(Pattern.begin("x")).subtype(int)


def test_group_greedy_is_rejected() -> None:
    with pytest.raises(MalformedPatternException, match=exact("Option not applicable to group pattern")):
        Pattern.begin(Pattern.begin("x")).one_or_more().greedy()


def test_group_quantifiers_and_until() -> None:
    g = Pattern.begin("a").next(Pattern.begin("x")).one_or_more().optional().until(lambda e: False)
    assert g.quantifier.properties == frozenset({P.LOOPING, P.OPTIONAL})
    assert g.until_condition is not None


def test_nested_groups() -> None:
    g = Pattern.begin(Pattern.begin(Pattern.begin("x")))
    assert isinstance(g, GroupPattern) and isinstance(g.raw_pattern, GroupPattern)


# ---------------------------------------------------------------- conditions


def test_where_sets_condition_and_returns_self() -> None:
    p = Pattern.begin("a")
    assert p.where(lambda e: e == 1) is p
    fn, iterative = p.condition.compile()  # type: ignore[union-attr]
    assert iterative is False and fn(1) and not fn(2)


def test_where_twice_ands() -> None:
    p = Pattern.begin("a").where(lambda e: e > 0).where(lambda e: e < 10)
    assert isinstance(p.condition, RichAndCondition)
    fn, _ = p.condition.compile()
    assert fn(5) and not fn(11) and not fn(-1)


def test_where_iterative_callable() -> None:
    p = Pattern.begin("a").where(lambda e, ctx: True)
    assert p.condition is not None and p.condition.compile()[1] is True


def test_or_ors_with_existing_condition() -> None:
    p = Pattern.begin("a").where(lambda e: e == 1).or_(lambda e: e == 2)
    assert isinstance(p.condition, RichOrCondition)
    fn, _ = p.condition.compile()
    assert fn(1) and fn(2) and not fn(3)


def test_or_alone_is_just_the_condition() -> None:
    # Like Flink, or() on a node without condition does not OR with "true".
    p = Pattern.begin("a").or_(lambda e: e == 2)
    assert p.condition is not None and not isinstance(p.condition, RichOrCondition)
    fn, _ = p.condition.compile()
    assert fn(2) and not fn(1)


@pytest.mark.parametrize("method", ["where", "or_"])
def test_null_condition(method: str) -> None:
    with pytest.raises(NullPointerException, match=exact("The condition cannot be null.")):
        getattr(Pattern.begin("a"), method)(None)


def test_subtype_alone() -> None:
    p = Pattern.begin("a").subtype(int)
    assert isinstance(p.condition, SubtypeCondition)


def test_subtype_ands_with_where() -> None:
    p = Pattern.begin("a").where(lambda e: e != 3).subtype(int)
    assert isinstance(p.condition, RichAndCondition)
    fn, _ = p.condition.compile()
    assert fn(1) and not fn(3) and not fn("x")


def test_subtype_none() -> None:
    with pytest.raises(NullPointerException, match=exact("The class cannot be null.")):
        Pattern.begin("a").subtype(None)  # type: ignore[arg-type]


def test_get_condition_defaults_to_true() -> None:
    p = Pattern.begin("a")
    assert p.get_condition() is BooleanConditions.true_function()
    assert p.getCondition() is BooleanConditions.true_function()


# ---------------------------------------------------------------- until


def test_until_on_looping() -> None:
    p = Pattern.begin("a").one_or_more()
    assert p.until(lambda e: e == 0) is p
    assert p.until_condition is not None
    assert p.get_until_condition() is p.until_condition and p.getUntilCondition() is p.until_condition


def test_until_on_times_or_more() -> None:
    assert Pattern.begin("a").times_or_more(2).until(lambda e: True).until_condition is not None


def test_until_twice() -> None:
    p = Pattern.begin("a").one_or_more().until(lambda e: True)
    with pytest.raises(MalformedPatternException, match=exact("Only one until condition can be applied.")):
        p.until(lambda e: True)


@pytest.mark.parametrize(
    "build", [lambda p: p, lambda p: p.times(3), lambda p: p.times(1, 3), lambda p: p.optional()]
)
def test_until_on_non_looping(build: Any) -> None:
    with pytest.raises(
        MalformedPatternException, match=exact("The until condition is only applicable to looping states.")
    ):
        build(Pattern.begin("a")).until(lambda e: True)


def test_until_none() -> None:
    with pytest.raises(NullPointerException, match=exact("The condition cannot be null")):
        Pattern.begin("a").one_or_more().until(None)


# ---------------------------------------------------------------- quantifiers


def test_one_or_more() -> None:
    p = Pattern.begin("a")
    assert p.one_or_more() is p
    assert p.quantifier.properties == frozenset({P.LOOPING})
    assert p.times_ == Times(1, 1, None)


def test_one_or_more_with_window() -> None:
    p = Pattern.begin("a").oneOrMore(timedelta(seconds=2))
    assert p.times_ == Times(1, 1, 2000)


def test_one_or_more_keeps_consuming_strategy() -> None:
    p = Pattern.begin("a").followed_by_any("b").one_or_more()
    assert p.quantifier.consuming_strategy is S.SKIP_TILL_ANY


def test_times_or_more() -> None:
    p = Pattern.begin("a").times_or_more(3)
    assert p.quantifier.properties == frozenset({P.LOOPING})
    assert p.times_ == Times(3, 3, None)


def test_times_or_more_alias_and_window() -> None:
    p = Pattern.begin("a").timesOrMore(2, 500)
    assert p.times_ == Times(2, 2, 500)


def test_times_or_more_zero() -> None:
    with pytest.raises(
        IllegalArgumentException, match=exact("The from should be a positive number greater than 0.")
    ):
        Pattern.begin("a").times_or_more(0)


def test_times_exact() -> None:
    p = Pattern.begin("a")
    assert p.times(3) is p
    assert p.quantifier.properties == frozenset({P.TIMES})
    assert p.times_ == Times(3, 3, None)
    assert p.get_times() is p.times_ and p.getTimes() is p.times_


def test_times_range() -> None:
    p = Pattern.begin("a").times(2, 4)
    assert p.quantifier.properties == frozenset({P.TIMES})
    assert p.times_ == Times(2, 4, None)


def test_times_exact_with_timedelta_window() -> None:
    assert Pattern.begin("a").times(2, timedelta(milliseconds=30)).times_ == Times(2, 2, 30)


def test_times_exact_with_int_window_keyword() -> None:
    assert Pattern.begin("a").times(2, window=30).times_ == Times(2, 2, 30)


def test_times_range_with_window() -> None:
    assert Pattern.begin("a").times(2, 4, timedelta(seconds=1)).times_ == Times(2, 4, 1000)
    assert Pattern.begin("a").times(2, 4, window=7).times_ == Times(2, 4, 7)


def test_times_two_windows_is_an_error() -> None:
    with pytest.raises(TypeError):
        Pattern.begin("a").times(2, timedelta(1), window=5)


@pytest.mark.parametrize("n", [0, -1])
def test_times_not_positive(n: int) -> None:
    with pytest.raises(
        IllegalArgumentException, match=exact("You should give a positive number greater than 0.")
    ):
        Pattern.begin("a").times(n)


def test_times_zero_to_n_is_optional_one_to_n() -> None:
    p = Pattern.begin("a").times(0, 3)
    assert p.quantifier.properties == frozenset({P.TIMES, P.OPTIONAL})
    assert p.times_ == Times(1, 3, None)


def test_times_range_to_below_from() -> None:
    with pytest.raises(
        IllegalArgumentException, match=exact("The to should be a number greater than or equal to from: 3.")
    ):
        Pattern.begin("a").times(3, 2)


def test_times_zero_zero() -> None:
    with pytest.raises(
        IllegalArgumentException, match=exact("The to should be a number greater than or equal to from: 1.")
    ):
        Pattern.begin("a").times(0, 0)


def test_times_negative_from() -> None:
    with pytest.raises(
        IllegalArgumentException, match=exact("The from should be a positive number greater than 0.")
    ):
        Pattern.begin("a").times(-1, 2)


def test_failed_times_leaves_quantifier_unchanged() -> None:
    p = Pattern.begin("a")
    with pytest.raises(IllegalArgumentException):
        p.times(3, 2)
    assert p.quantifier.properties == frozenset({P.SINGLE}) and p.times_ is None


def test_times_rejects_non_int() -> None:
    with pytest.raises(TypeError):
        Pattern.begin("a").times(1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "second",
    [
        lambda p: p.one_or_more(),
        lambda p: p.times(2),
        lambda p: p.times(1, 2),
        lambda p: p.times_or_more(2),
    ],
)
def test_quantifier_applied_twice(second: Any) -> None:
    p = Pattern.begin("a").one_or_more()
    msg = (
        "Already applied quantifier to this Pattern. Current quantifier is: "
        "Quantifier{properties=[LOOPING], consumingStrategy=STRICT, innerConsumingStrategy=SKIP_TILL_NEXT}"
    )
    with pytest.raises(MalformedPatternException, match=exact(msg)):
        second(p)


def test_quantifier_applied_twice_message_lists_properties_in_flink_order() -> None:
    p = Pattern.begin("a").followed_by("b").times(2).optional().consecutive()
    msg = (
        "Already applied quantifier to this Pattern. Current quantifier is: "
        "Quantifier{properties=[TIMES, OPTIONAL], consumingStrategy=SKIP_TILL_NEXT, innerConsumingStrategy=STRICT}"
    )
    with pytest.raises(MalformedPatternException, match=exact(msg)):
        p.times(3)


def test_optional_then_quantifier_drops_optional_like_flink() -> None:
    p = Pattern.begin("a").optional().one_or_more()
    assert p.quantifier.properties == frozenset({P.LOOPING})


@pytest.mark.parametrize(
    "apply",
    [
        lambda p: p.one_or_more(),
        lambda p: p.times(2),
        lambda p: p.times(1, 2),
        lambda p: p.times_or_more(2),
        lambda p: p.greedy(),
    ],
)
@pytest.mark.parametrize("kind", ["not_next", "not_followed_by"])
def test_quantifier_on_not_pattern(apply: Any, kind: str) -> None:
    p = getattr(Pattern.begin("a"), kind)("b")
    with pytest.raises(MalformedPatternException, match=exact("Option not applicable to NOT pattern")):
        apply(p)


@pytest.mark.parametrize("kind", ["not_next", "not_followed_by"])
def test_not_pattern_cannot_be_optional(kind: str) -> None:
    with pytest.raises(MalformedPatternException, match=exact("NOT pattern cannot be optional")):
        getattr(Pattern.begin("a"), kind)("b").optional()


def test_optional() -> None:
    p = Pattern.begin("a")
    assert p.optional() is p
    assert p.quantifier.properties == frozenset({P.SINGLE, P.OPTIONAL})


def test_optional_twice() -> None:
    with pytest.raises(MalformedPatternException, match=exact("Optional already applied!")):
        Pattern.begin("a").optional().optional()


def test_optional_after_greedy() -> None:
    p = Pattern.begin("a").one_or_more().greedy().next("b")
    with pytest.raises(
        MalformedPatternException, match=exact("Optional pattern cannot be preceded by greedy pattern")
    ):
        p.optional()


def test_greedy() -> None:
    p = Pattern.begin("a").one_or_more()
    assert p.greedy() is p
    assert p.quantifier.properties == frozenset({P.LOOPING, P.GREEDY})


def test_greedy_on_times() -> None:
    assert Pattern.begin("a").times(1, 3).greedy().quantifier.has_property(P.GREEDY)


def test_greedy_on_single() -> None:
    with pytest.raises(
        MalformedPatternException, match=exact("Option not applicable to singleton quantifier")
    ):
        Pattern.begin("a").greedy()


def test_greedy_after_allow_combinations() -> None:
    with pytest.raises(
        MalformedPatternException, match=exact("Option not applicable to FollowedByAny pattern")
    ):
        Pattern.begin("a").one_or_more().allow_combinations().greedy()


def test_greedy_on_followed_by_any_looping_is_allowed() -> None:
    p = Pattern.begin("a").followed_by_any("b").one_or_more().greedy()
    assert p.quantifier.has_property(P.GREEDY)


def test_allow_combinations() -> None:
    p = Pattern.begin("a").one_or_more()
    assert p.allow_combinations() is p
    assert p.quantifier.inner_consuming_strategy is S.SKIP_TILL_ANY


def test_allow_combinations_alias() -> None:
    assert (
        Pattern.begin("a").times(2).allowCombinations().quantifier.inner_consuming_strategy is S.SKIP_TILL_ANY
    )


def test_allow_combinations_on_single() -> None:
    msg = (
        "Combinations not applicable to Quantifier{properties=[SINGLE], consumingStrategy=SKIP_TILL_NEXT, "
        "innerConsumingStrategy=SKIP_TILL_NEXT}!"
    )
    with pytest.raises(MalformedPatternException, match=exact(msg)):
        Pattern.begin("a").followed_by("b").allow_combinations()


def test_allow_combinations_twice() -> None:
    with pytest.raises(MalformedPatternException, match=exact("Combinations already applied!")):
        Pattern.begin("a").one_or_more().allow_combinations().allow_combinations()


def test_allow_combinations_after_consecutive() -> None:
    with pytest.raises(
        MalformedPatternException, match=exact("You can apply either combinations or consecutive, not both!")
    ):
        Pattern.begin("a").one_or_more().consecutive().allow_combinations()


def test_consecutive() -> None:
    p = Pattern.begin("a").times(3)
    assert p.consecutive() is p
    assert p.quantifier.inner_consuming_strategy is S.STRICT


def test_consecutive_on_single() -> None:
    msg = (
        "Consecutive not applicable to Quantifier{properties=[SINGLE, OPTIONAL], consumingStrategy=STRICT, "
        "innerConsumingStrategy=SKIP_TILL_NEXT}!"
    )
    with pytest.raises(MalformedPatternException, match=exact(msg)):
        Pattern.begin("a").optional().consecutive()


def test_consecutive_twice() -> None:
    with pytest.raises(MalformedPatternException, match=exact("Consecutive already applied!")):
        Pattern.begin("a").one_or_more().consecutive().consecutive()


def test_consecutive_after_combinations() -> None:
    with pytest.raises(
        MalformedPatternException, match=exact("You can apply either combinations or consecutive, not both!")
    ):
        Pattern.begin("a").one_or_more().allow_combinations().consecutive()


def test_quantifier_factories_and_copy() -> None:
    q = Quantifier.times(S.SKIP_TILL_ANY)
    assert q.properties == frozenset({P.TIMES}) and q.consuming_strategy is S.SKIP_TILL_ANY
    assert Quantifier.one(S.STRICT).has_property(P.SINGLE)
    assert Quantifier.looping(S.STRICT).hasProperty(P.LOOPING)
    c = q.copy()
    c.optional()
    assert c != q and not q.has_property(P.OPTIONAL)
    assert q.getConsumingStrategy() is S.SKIP_TILL_ANY and q.getInnerConsumingStrategy() is S.SKIP_TILL_NEXT


def test_times_value_class() -> None:
    t = Times.of(2, 5, 100)
    assert (t.from_, t.to, t.window_size) == (2, 5, 100)
    assert (t.getFrom(), t.getTo(), t.getWindowSize()) == (2, 5, 100)
    assert Times.of(3) == Times(3, 3)
    with pytest.raises(AttributeError):
        t.to = 9  # type: ignore[misc]


# ---------------------------------------------------------------- windows


def test_within_default_type() -> None:
    p = Pattern.begin("a")
    assert p.within(timedelta(seconds=10)) is p
    assert p.window_times == {WithinType.FIRST_AND_LAST: 10_000}
    assert p.get_window_size() == 10_000 and p.getWindowSize() == 10_000


def test_within_int_millis() -> None:
    assert Pattern.begin("a").within(250).window_times == {WithinType.FIRST_AND_LAST: 250}


def test_within_previous_and_current() -> None:
    p = Pattern.begin("a").within(5, WithinType.PREVIOUS_AND_CURRENT)
    assert p.get_window_size(WithinType.PREVIOUS_AND_CURRENT) == 5
    assert p.get_window_size() is None


def test_within_both_types_and_override() -> None:
    p = Pattern.begin("a").within(10).within(3, WithinType.PREVIOUS_AND_CURRENT).within(20)
    assert p.window_times == {WithinType.FIRST_AND_LAST: 20, WithinType.PREVIOUS_AND_CURRENT: 3}


def test_within_none_is_a_no_op() -> None:
    p = Pattern.begin("a").within(10).within(None)
    assert p.window_times == {WithinType.FIRST_AND_LAST: 10}


def test_within_zero_is_kept() -> None:
    assert Pattern.begin("a").within(0).get_window_size() == 0


def test_within_negative_is_kept_in_milliseconds_as_flink_does() -> None:
    # Flink takes Duration.ofMillis(-1) and matches as if there were no window (test_nfa_windows)
    assert Pattern.begin("a").within(-1).get_window_size() == -1
    assert Pattern.begin("a").within(timedelta(milliseconds=-3)).window_times == {
        WithinType.FIRST_AND_LAST: -3
    }
    # truncated towards zero, as Java's Duration.toMillis: -0.5 ms is 0 ms
    assert Pattern.begin("a").within(timedelta(microseconds=-500)).get_window_size() == 0
    p = Pattern.begin("a").within(-2, WithinType.PREVIOUS_AND_CURRENT)
    assert p.get_window_size(WithinType.PREVIOUS_AND_CURRENT) == -2


def test_quantifier_windows_may_be_negative_as_in_flink() -> None:
    assert Pattern.begin("a").times(2, timedelta(milliseconds=-1)).times_ == Times(2, 2, -1)
    assert Pattern.begin("a").times(1, 3, window=-2).times_ == Times(1, 3, -2)
    assert Pattern.begin("a").one_or_more(window=-1).times_ == Times(1, 1, -1)
    assert Pattern.begin("a").times_or_more(2, window=-5).times_ == Times(2, 2, -5)


def test_to_millis() -> None:
    assert to_millis(None) is None
    assert to_millis(7) == 7
    assert to_millis(timedelta(seconds=1, microseconds=1500)) == 1001
    with pytest.raises(IllegalArgumentException):
        to_millis(timedelta(milliseconds=-1))
    with pytest.raises(TypeError):
        to_millis(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        to_millis(True)


# ---------------------------------------------------------------- getters and repr


def test_getters_and_aliases() -> None:
    skip = AfterMatchSkipStrategy.skip_to_first("a")
    a = Pattern.begin("a", skip)
    b = a.next("b").times(2)
    assert b.get_name() == "b" == b.getName()
    assert b.get_previous() is a and b.getPrevious() is a
    assert b.get_quantifier() is b.quantifier and b.getQuantifier() is b.quantifier
    assert b.get_after_match_skip_strategy() is skip and b.getAfterMatchSkipStrategy() is skip
    assert b.get_until_condition() is None
    assert b.get_window_time() is None and b.getWindowTime() is None


def test_repr_like_flink() -> None:
    p = Pattern.begin("a").within(5)
    assert repr(p) == (
        "Pattern{name='a', previous=None, condition=None, windowTimes={FIRST_AND_LAST=5}, "
        "quantifier=Quantifier{properties=[SINGLE], consumingStrategy=STRICT, "
        "innerConsumingStrategy=SKIP_TILL_NEXT}, untilCondition=None, times=None, "
        "afterMatchSkipStrategy=NoSkipStrategy{}}"
    )


def test_repr_nested() -> None:
    assert "previous=Pattern{name='a'" in repr(Pattern.begin("a").next("b").times(2))


# ---------------------------------------------------------------- skip strategies

A = AfterMatchSkipStrategy


def test_skip_factories_and_aliases() -> None:
    assert A.noSkip() == A.no_skip() and not A.no_skip().is_skip_strategy()
    assert A.skipToNext() == A.skip_to_next() and A.skip_to_next().isSkipStrategy()
    assert A.skipPastLastEvent() == A.skip_past_last_event()
    assert A.skipToFirst("x") == A.skip_to_first("x") != A.skip_to_first("y")
    assert A.skipToLast("x") == A.skip_to_last("x") != A.skip_to_first("x")


def test_skip_reprs() -> None:
    assert repr(A.no_skip()) == "NoSkipStrategy{}"
    assert repr(A.skip_to_next()) == "SkipToNextStrategy{}"
    assert repr(A.skip_past_last_event()) == "SkipPastLastStrategy{}"
    assert repr(A.skip_to_first("x")) == "SkipToFirstStrategy{patternName='x'}"
    assert repr(A.skip_to_last("x")) == "SkipToLastStrategy{patternName='x'}"


def test_skip_pattern_name() -> None:
    assert A.no_skip().pattern_name is None and A.skip_past_last_event().pattern_name is None
    assert A.skip_to_last("x").pattern_name == "x" and A.skip_to_first("x").getPatternName() == "x"


def test_throw_exception_on_miss_returns_a_new_strategy() -> None:
    s = A.skip_to_first("x")
    t = s.throw_exception_on_miss()
    assert t is not s and t != s and t.should_throw_exception() and not s.should_throw_exception()
    assert s.throwExceptionOnMiss() == t
    assert isinstance(t, type(s))


def test_skip_strategies_are_immutable() -> None:
    with pytest.raises(AttributeError):
        A.skip_to_first("x").name = "y"  # type: ignore[misc]


MATCH = {"a": [(1, 0), (2, 0)], "b": [(3, 0), (5, 0)]}


def test_no_skip_prunes_nothing() -> None:
    assert A.no_skip().get_pruning_id([MATCH]) is None
    assert not A.no_skip().should_prune((0, 0), (9, 0))


def test_skip_to_next() -> None:
    s = A.skip_to_next()
    pid = s.get_pruning_id([MATCH, {"a": [(0, 5)]}])
    assert pid == (0, 5)
    assert s.should_prune((0, 5), pid) and not s.should_prune((0, 6), pid)
    assert not s.should_prune(None, pid)


def test_skip_past_last() -> None:
    s = A.skip_past_last_event()
    pid = s.get_pruning_id([MATCH])
    assert pid == (5, 0)
    assert s.should_prune((5, 0), pid) and not s.should_prune((5, 1), pid)


def test_skip_to_first() -> None:
    s = A.skip_to_first("b")
    pid = s.get_pruning_id([MATCH])
    assert pid == (3, 0)
    assert s.should_prune((2, 0), pid) and not s.should_prune((3, 0), pid)


def test_skip_to_last() -> None:
    s = A.skip_to_last("b")
    assert s.get_pruning_id([MATCH]) == (5, 0)
    assert not s.should_prune((5, 0), (5, 0))


def test_skip_to_element_takes_max_over_matches() -> None:
    assert A.skip_to_first("a").get_pruning_id([MATCH, {"a": [(4, 0)]}]) == (4, 0)


def test_skip_to_missing_element_is_no_skip() -> None:
    assert A.skip_to_first("zz").get_pruning_id([MATCH]) is None


def test_skip_to_missing_element_throws() -> None:
    s = A.skip_to_last("zz").throw_exception_on_miss()
    # Flink prints the match with EventId.toString() (checked with the Flink oracle)
    msg = (
        "Could not skip to zz. No such element in the found match {a=[EventId{id=0, timestamp=1}, "
        "EventId{id=0, timestamp=2}], b=[EventId{id=0, timestamp=3}, EventId{id=0, timestamp=5}]}"
    )
    with pytest.raises(FlinkRuntimeException, match=exact(msg)):
        s.get_pruning_id([MATCH])


def test_skip_to_first_element_of_match_throws() -> None:
    with pytest.raises(FlinkRuntimeException, match=exact("Could not skip to first element of a match.")):
        A.skip_to_first("a").throw_exception_on_miss().get_pruning_id([MATCH])


def test_skip_to_first_element_without_throw_is_fine() -> None:
    assert A.skip_to_first("a").get_pruning_id([MATCH]) == (1, 0)


def test_skip_to_name_must_be_str() -> None:
    with pytest.raises(TypeError):
        A.skip_to_first(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- exceptions


def test_exception_hierarchy() -> None:
    assert issubclass(MalformedPatternException, ValueError)
    assert issubclass(IllegalArgumentException, ValueError)
    assert issubclass(UnsupportedOperationException, NotImplementedError)
    assert issubclass(NullPointerException, TypeError)
    assert issubclass(FlinkRuntimeException, RuntimeError)


def test_condition_error_carries_event_and_step() -> None:
    import pickle

    cause = ZeroDivisionError("division by zero")
    err = ConditionError("start", {"id": 1}, cause)
    assert err.step == "start" and err.event == {"id": 1} and err.__cause__ is cause
    assert "'start'" in str(err) and "{'id': 1}" in str(err) and "ZeroDivisionError" in str(err)
    back = pickle.loads(pickle.dumps(err))
    assert (back.step, back.event, str(back)) == ("start", {"id": 1}, str(err))
    assert isinstance(err, RuntimeError)
