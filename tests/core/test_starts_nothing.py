"""``NFA.starts_nothing``: the pre-filter for keys without runs (seed 000), and its shortcut for
one start state whose decision is a table."""

from __future__ import annotations

from typing import Any

from flowcep import Pattern
from flowcep.nfa import NFACompiler


def is_(name: str) -> Any:
    return lambda e: e == name


def raising(e: Any) -> bool:
    if e == "boom":
        raise RuntimeError("bad event")
    return e == "a"


def test_one_start_state_judges_by_its_table_as_the_search_does() -> None:
    nfa = NFACompiler.compile(Pattern.begin("a").where(raising).followed_by("b").where(is_("b")))
    assert [nfa.starts_nothing(e) for e in ("a", "b", "x")] == [False, True, True]
    assert [nfa._starts_nothing(e) for e in ("a", "b", "x")] == [False, True, True]  # noqa: SLF001


def test_a_condition_that_raises_sends_the_event_the_normal_way() -> None:
    nfa = NFACompiler.compile(Pattern.begin("a").where(raising).followed_by("b").where(is_("b")))
    assert nfa.starts_nothing("boom") is False
    assert nfa._starts_nothing("boom") is False  # noqa: SLF001


def test_an_optional_first_step_lets_every_event_move_the_start_run() -> None:
    # the start run proceeds to b, where any event other than b is ignored with a new version
    pattern = Pattern.begin("a").where(is_("a")).optional().followed_by("b").where(is_("b"))
    nfa = NFACompiler.compile(pattern)
    assert [nfa.starts_nothing(e) for e in ("a", "b", "x")] == [False, False, False]
    assert [nfa._starts_nothing(e) for e in ("a", "b", "x")] == [False, False, False]  # noqa: SLF001


def test_an_iterative_first_condition_never_filters() -> None:
    pattern = Pattern.begin("a").where(lambda e, ctx: e == "a").followed_by("b").where(is_("b"))
    nfa = NFACompiler.compile(pattern)
    assert [nfa.starts_nothing(e) for e in ("a", "x")] == [False, False]
