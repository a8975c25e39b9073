"""Run guards (flowcep.nfa.guards): iterative conditions a library adds to a pattern, which the
NFA evaluates natively. A state whose only iterative conditions are guards decides once for all
its runs when no guard was reached, and per run when one was; a user's iterative condition is
still asked once per run."""

from __future__ import annotations

from typing import Any

from flowcep import Pattern
from flowcep.nfa import NFACompiler
from flowcep.nfa.guards import GuardContext, RunGuard

from .helpers import named, run


class AboveLastPrice(RunGuard):
    """A guard: the event's price is above the price of the event the run took last; it keeps
    the ids of the events it was asked about."""

    __slots__ = ("asked",)

    def __init__(self) -> None:
        self.asked: list[int] = []

    def filter(self, value: Any, ctx: Any) -> bool:
        self.asked.append(value.id)
        if isinstance(ctx, GuardContext):
            ctx.consulted = True
        taken = ctx.get_events_for_pattern("a")
        return not taken or value.price > taken[-1].price


def counting(names: list[int], condition: Any) -> Any:
    """``condition``, keeping the id of each event it is called with."""

    def counted(e: Any) -> bool:
        names.append(e.id)
        return bool(condition(e))

    return counted


def a_then_guarded_b(simple_calls: list[int], guard: AboveLastPrice) -> Pattern:
    return (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(counting(simple_calls, named("b")))
        .where(guard)
    )


def test_a_guarded_state_decides_once_for_all_runs_when_no_guard_is_reached() -> None:
    calls: list[int] = []
    guard = AboveLastPrice()
    # three runs wait for b when x4 comes: its simple condition fails, the guard is not reached
    run(a_then_guarded_b(calls, guard), "a1$1 a2$2 a3$3 x4 b5$9")
    assert calls.count(4) == 1
    assert 4 not in guard.asked


def test_a_guarded_state_asks_the_guard_for_each_run_when_it_is_reached() -> None:
    guard = AboveLastPrice()
    # b4 is above a1's and a3's price, not a2's
    assert run(a_then_guarded_b([], guard), "a1$1 a2$5 a3$3 b4$4") == [[1, 4], [3, 4]]
    assert guard.asked.count(4) == 3


def test_a_state_with_a_guard_and_a_user_iterative_condition_asks_the_user_once_per_run() -> None:
    asked: list[int] = []

    def user(e: Any, ctx: Any) -> bool:
        asked.append(e.id)
        return e.name == "b"

    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(user).where(AboveLastPrice())
    run(pattern, "a1$1 a2$2 a3$3 x4")
    assert asked.count(4) == 3


def test_only_the_states_whose_iterative_conditions_are_all_guards_are_guarded() -> None:
    def b_after_a() -> Pattern:
        return Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))

    guarded = b_after_a().where(AboveLastPrice())
    mixed = b_after_a().where(AboveLastPrice()).where(lambda e, ctx: True)
    assert [slot.guarded for slot in NFACompiler.compile(guarded)._slots.values()] == [False, True, False]
    assert not any(slot.guarded for slot in NFACompiler.compile(mixed)._slots.values())
