"""``NFA.starts_nothing``: the pre-filter for keys without runs (seed 000), and its shortcut for
one start state whose decision is a table (generated in one function, held to the search)."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flowcep import ConditionError, Pattern
from flowcep.nfa import NFA, NFACompiler
from flowcep.nfa.context import EventHandle

from .helpers import Event
from .test_properties import LETTERS, SETTINGS, compile_or_reject, pattern_specs


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


def _searched(nfa: NFA, event: Any) -> bool:
    """What the NFA's search says of ``event`` for its one start state: no edge holds (an event
    for which a condition raises is not judged: False)."""
    [name] = nfa._start_names  # noqa: SLF001
    try:
        decision = nfa._decide(None, None, EventHandle(event, 0), nfa.states[name], None)  # type: ignore[arg-type]  # noqa: SLF001
    except ConditionError:
        return False
    return not decision.edges


@settings(SETTINGS, max_examples=200)
@given(pattern_specs(), st.lists(st.sampled_from([*LETTERS, "x"]), min_size=1, max_size=4))
def test_the_generated_pre_filter_judges_every_event_as_the_search_does(spec: Any, names: list[str]) -> None:
    _, nfa = compile_or_reject(spec)
    # (generated for one start state whose decision is simple: generated_starts_nothing)
    assume(nfa.starts_nothing.__code__.co_filename.startswith("<flowcep generated starts_nothing"))
    for name in names:
        event = Event(name=name)
        assert nfa.starts_nothing(event) is _searched(nfa, event)
