"""Conditions: classes, callables by arity, composites and their compiled forms."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from flowcep import ConditionError, Pattern
from flowcep.pattern import (
    BooleanConditions,
    Condition,
    IterativeCondition,
    NullPointerException,
    RichAndCondition,
    RichNotCondition,
    RichOrCondition,
    SimpleCondition,
    SubtypeCondition,
    and_,
    as_condition,
    not_,
    or_,
)

from .helpers import run


class Ctx:
    def __init__(self, **events: list[Any]) -> None:
        self.events = events

    def get_events_for_pattern(self, name: str) -> list[Any]:
        return self.events.get(name, [])

    def timestamp(self) -> int:
        return 0


class Positive(SimpleCondition):
    def filter(self, value: Any) -> bool:
        return value > 0


class AboveStart(IterativeCondition):
    def filter(self, value: Any, ctx: Any) -> bool:
        return value > sum(ctx.get_events_for_pattern("start"))


def test_simple_subclass_compiles_to_one_argument_function() -> None:
    fn, iterative = Positive().compile()
    assert iterative is False
    assert fn(3) and not fn(-1)


def test_iterative_subclass_compiles_to_two_argument_function() -> None:
    fn, iterative = AboveStart().compile()
    assert iterative is True
    assert fn(5, Ctx(start=[1, 2])) and not fn(3, Ctx(start=[1, 2]))


def test_simple_condition_of_wraps_the_function_itself() -> None:
    def f(e: int) -> bool:
        return e == 1

    cond = SimpleCondition.of(f)
    assert isinstance(cond, SimpleCondition)
    assert cond.compile() == (f, False)
    assert cond.filter(1) is True


def test_simple_condition_of_none_raises_npe() -> None:
    with pytest.raises(NullPointerException, match=r"^The condition cannot be null\.$"):
        SimpleCondition.of(None)  # type: ignore[arg-type]


def test_as_condition_one_argument_is_simple() -> None:
    def f(e: int) -> bool:
        return e > 1

    cond = as_condition(f)
    assert isinstance(cond, SimpleCondition)
    assert cond.compile() == (f, False)


def test_as_condition_two_arguments_is_iterative() -> None:
    def f(e: int, ctx: Any) -> bool:
        return e > len(ctx.get_events_for_pattern("a"))

    cond = as_condition(f)
    assert isinstance(cond, IterativeCondition)
    assert cond.compile() == (f, True)


def test_as_condition_lambdas() -> None:
    assert as_condition(lambda e: True).compile()[1] is False
    assert as_condition(lambda e, ctx: True).compile()[1] is True


def test_as_condition_optional_second_parameter_is_simple() -> None:
    assert as_condition(lambda e, flag=True: flag).compile()[1] is False


def test_as_condition_bound_method_and_partial() -> None:
    class Holder:
        def check(self, e: int, ctx: Any) -> bool:
            return True

    assert as_condition(Holder().check).compile()[1] is True
    assert as_condition(functools.partial(lambda a, e: a == e, 1)).compile()[1] is False


def test_as_condition_builtin_without_signature_is_simple() -> None:
    assert as_condition(bool).compile()[1] is False


def test_as_condition_keeps_conditions() -> None:
    cond = Positive()
    assert as_condition(cond) is cond


def test_as_condition_none_raises_npe() -> None:
    with pytest.raises(NullPointerException, match=r"^The condition cannot be null\.$"):
        as_condition(None)


def test_as_condition_rejects_non_callable() -> None:
    with pytest.raises(TypeError, match="must be a Condition or a callable"):
        as_condition(42)


def test_as_condition_rejects_three_arguments() -> None:
    with pytest.raises(TypeError, match="one positional argument"):
        as_condition(lambda a, b, c: True)


def test_as_condition_rejects_zero_arguments() -> None:
    with pytest.raises(TypeError, match="one positional argument"):
        as_condition(lambda: True)


def test_true_and_false_functions() -> None:
    t, ti = BooleanConditions.true_function().compile()
    f, fi = BooleanConditions.false_function().compile()
    assert (ti, fi) == (False, False)
    assert t(object()) is True and f(object()) is False


def test_boolean_conditions_camel_case_aliases() -> None:
    assert BooleanConditions.trueFunction() is BooleanConditions.true_function()
    assert BooleanConditions.falseFunction() is BooleanConditions.false_function()


def test_subtype_condition() -> None:
    fn, iterative = SubtypeCondition(int).compile()
    assert iterative is False
    assert fn(1) and not fn("x")


def test_subtype_condition_none_raises_npe() -> None:
    with pytest.raises(NullPointerException, match=r"^The class cannot be null\.$"):
        SubtypeCondition(None)  # type: ignore[arg-type]


def test_and_of_simple_parts_is_simple() -> None:
    fn, iterative = RichAndCondition(as_condition(lambda e: e > 0), as_condition(lambda e: e < 10)).compile()
    assert iterative is False
    assert fn(5) and not fn(11) and not fn(-1)


def test_and_with_an_iterative_part_is_iterative() -> None:
    cond = RichAndCondition(as_condition(lambda e: e > 0), AboveStart())
    fn, iterative = cond.compile()
    assert iterative is True
    assert fn(5, Ctx(start=[1])) and not fn(5, Ctx(start=[10]))


def test_and_iterative_left_simple_right() -> None:
    fn, iterative = RichAndCondition(AboveStart(), Positive()).compile()
    assert iterative is True
    assert fn(2, Ctx(start=[1])) and not fn(2, Ctx(start=[5]))


def test_and_both_iterative() -> None:
    fn, iterative = RichAndCondition(AboveStart(), AboveStart()).compile()
    assert iterative is True
    assert fn(2, Ctx(start=[1]))


def test_and_short_circuits_left_to_right() -> None:
    seen: list[str] = []

    def left(e: int) -> bool:
        seen.append("l")
        return False

    def right(e: int) -> bool:
        seen.append("r")
        return True

    fn, _ = RichAndCondition(as_condition(left), as_condition(right)).compile()
    assert not fn(1)
    assert seen == ["l"]


def test_or_of_simple_parts_is_simple() -> None:
    fn, iterative = RichOrCondition(as_condition(lambda e: e == 1), as_condition(lambda e: e == 2)).compile()
    assert iterative is False
    assert fn(1) and fn(2) and not fn(3)


def test_or_mixed_is_iterative() -> None:
    for cond in (RichOrCondition(Positive(), AboveStart()), RichOrCondition(AboveStart(), Positive())):
        fn, iterative = cond.compile()
        assert iterative is True
        assert fn(-5, Ctx(start=[-10])) and not fn(-5, Ctx(start=[0]))


def test_or_both_iterative() -> None:
    fn, iterative = RichOrCondition(AboveStart(), AboveStart()).compile()
    assert iterative is True
    assert not fn(0, Ctx(start=[1]))


def test_not_simple() -> None:
    fn, iterative = RichNotCondition(Positive()).compile()
    assert iterative is False
    assert fn(-1) is True and fn(1) is False


def test_not_iterative() -> None:
    fn, iterative = RichNotCondition(AboveStart()).compile()
    assert iterative is True
    assert fn(0, Ctx(start=[1])) is True


def test_and_or_not_functions_accept_callables() -> None:
    fn, iterative = and_(lambda e: e > 0, lambda e: e % 2 == 0, not_(lambda e: e == 4)).compile()
    assert iterative is False
    assert fn(2) and not fn(4) and not fn(3)
    ofn, _ = or_(lambda e: e == 1, lambda e: e == 2, lambda e: e == 3).compile()
    assert ofn(3) and not ofn(4)


def test_and_single_argument_returns_it() -> None:
    cond = Positive()
    assert and_(cond) is cond


def test_and_without_arguments_is_an_error() -> None:
    with pytest.raises(TypeError, match="at least one condition"):
        and_()


def test_operators_build_composites() -> None:
    cond = Positive() & (lambda e: e < 10)
    assert isinstance(cond, RichAndCondition)
    assert isinstance(Positive() | (lambda e: e < 10), RichOrCondition)
    assert isinstance(~Positive(), RichNotCondition)


def test_composite_filter_and_test_slow_path() -> None:
    cond = RichAndCondition(Positive(), AboveStart())
    assert cond.filter(5, Ctx(start=[1])) is True
    assert Positive().test(1) is True


def test_composite_accessors() -> None:
    left, right = Positive(), AboveStart()
    cond = RichAndCondition(left, right)
    assert cond.get_left() is left and cond.getRight() is right
    assert cond.get_nested_conditions() == (left, right)
    assert RichNotCondition(left).getNestedConditions() == (left,)


def test_composite_equality() -> None:
    left = Positive()
    assert RichAndCondition(left, left) == RichAndCondition(left, left)
    assert RichAndCondition(left, left) != RichOrCondition(left, left)


def test_conditions_are_condition_instances() -> None:
    for cond in (Positive(), AboveStart(), SubtypeCondition(int), BooleanConditions.true_function()):
        assert isinstance(cond, Condition)


# --- how often the NFA evaluates a condition ------------------------------------------------


def test_a_followed_by_step_evaluates_its_condition_once_per_event():
    # the step takes on ``is_b`` and ignores on ``not is_b``: one call tells both
    calls: list[int] = []

    def is_b(e: Any) -> bool:
        calls.append(e.id)
        return bool(e.name == "b")

    p = Pattern.begin("a").where(lambda e: e.name == "a").followed_by("b").where(is_b)
    assert run(p, "a1 c2 c3 b4") == [[1, 4]]
    # a1 starts the run; c2, c3 and b4 are decided for it with one call each
    assert calls == [2, 3, 4]


def test_an_until_condition_that_raises_surfaces_although_the_step_condition_is_known():
    # the loop's edges test ``and(not until, b)``: the until side comes first and is evaluated
    def until(e: Any) -> bool:
        if e.name == "x":
            raise ValueError("until blew up")
        return False

    p = (
        Pattern.begin("a")
        .where(lambda e: e.name == "a")
        .followed_by("b")
        .where(lambda e: e.name == "b")
        .one_or_more()
        .until(until)
    )
    with pytest.raises(ConditionError, match="until blew up"):
        run(p, "a1 b2 x3")
