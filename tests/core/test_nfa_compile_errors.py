"""Patterns NFACompiler rejects, with Flink's exact messages (NFACompilerTest, reference §1.7)."""

import re

import pytest

from flowcep import AfterMatchSkipStrategy, MalformedPatternException, Pattern, WithinType
from flowcep.nfa import NFACompiler, StateType, original_name

from .helpers import named, run


def compile_error(pattern) -> str:
    with pytest.raises(MalformedPatternException) as info:
        NFACompiler.compile(pattern)
    return str(info.value)


def test_duplicate_step_names():
    p = Pattern.begin("a").where(named("a")).followed_by("b").followed_by("a")
    assert compile_error(p) == "Duplicate pattern name: a. Names must be unique."


def test_duplicate_step_names_across_a_group():
    group = Pattern.begin("a").where(named("a")).followed_by("x")
    p = Pattern.begin("a").followed_by(group)
    assert compile_error(p) == "Duplicate pattern name: a. Names must be unique."


def test_duplicate_step_names_inside_nested_groups():
    inner = Pattern.begin("x").followed_by("y")
    outer = Pattern.begin(inner).followed_by("x")
    p = Pattern.begin("s").followed_by(outer)
    assert compile_error(p) == "Duplicate pattern name: x. Names must be unique."


def test_the_end_state_name_is_reserved():
    p = Pattern.begin("$endState$").where(named("a"))
    assert compile_error(p) == "Duplicate pattern name: $endState$. Names must be unique."


def test_not_followed_by_at_the_end_needs_a_window():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n"))
    assert (
        compile_error(p) == "NotFollowedBy is not supported without windowTime as a last part of a Pattern!"
    )


def test_not_followed_by_at_the_end_with_a_window_on_an_earlier_step_compiles():
    p = Pattern.begin("a").where(named("a")).within(5).not_followed_by("n").where(named("n"))
    assert run(p, "a1@1 x2@10") == [[1]]


def test_not_followed_by_at_the_end_with_a_negative_window_compiles_and_is_ignored():
    # Flink 2.3 rejects only a window of exactly 0; with a negative one it creates no pending
    # state, so the pattern ends at "a": a1 matches although n2 follows (recorded from Flink)
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(-1)
    assert run(p, "a1@1 n2@1 x3@3") == [[1]]


def test_not_followed_by_at_the_end_with_only_a_negative_previous_and_current_window_is_rejected():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n"))
    p = p.within(-1, WithinType.PREVIOUS_AND_CURRENT)
    assert (
        compile_error(p) == "NotFollowedBy is not supported without windowTime as a last part of a Pattern!"
    )


def test_a_previous_and_current_window_larger_than_a_negative_global_window_is_rejected():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    p = p.within(0, WithinType.PREVIOUS_AND_CURRENT).within(-1)
    assert compile_error(p) == (
        "The window length between the previous and current event cannot be larger than the window "
        "length between the first and last event for a Pattern."
    )


def test_not_followed_by_at_the_end_with_a_zero_window_is_rejected():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(0)
    assert (
        compile_error(p) == "NotFollowedBy is not supported without windowTime as a last part of a Pattern!"
    )


def test_previous_and_current_window_larger_than_the_global_window():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .within(10, WithinType.PREVIOUS_AND_CURRENT)
        .within(5)
    )
    assert compile_error(p) == (
        "The window length between the previous and current event cannot be larger than the window "
        "length between the first and last event for a Pattern."
    )


def test_previous_and_current_window_on_another_step_larger_than_the_global_window():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .within(10, WithinType.PREVIOUS_AND_CURRENT)
        .followed_by("b")
        .where(named("b"))
        .within(5)
    )
    assert compile_error(p).startswith("The window length between the previous and current event")


def test_previous_and_current_window_without_a_global_window_compiles():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .within(10, WithinType.PREVIOUS_AND_CURRENT)
    )
    states, window, windows = NFACompiler.compile_states(p)
    assert (window, windows) == (0, {"b": 10})
    # and the compiled window holds: b 4 ms after a matches, b 29 ms after does not
    assert run(p, "a1@1 b2@5") == [[1, 2]]
    assert run(p, "a1@1 b2@30") == []


SKIP_MISSING = "The pattern name specified in AfterMatchSkipStrategy can not be found in the given Pattern"


@pytest.mark.parametrize(
    "skip",
    [
        AfterMatchSkipStrategy.skip_to_first("nope"),
        AfterMatchSkipStrategy.skip_to_last("nope"),
        AfterMatchSkipStrategy.skip_to_first("nope").throw_exception_on_miss(),
    ],
    ids=["first", "last", "first-throw"],
)
def test_skip_target_must_name_a_step(skip):
    p = Pattern.begin("a", skip).where(named("a")).followed_by("b").where(named("b"))
    assert compile_error(p) == SKIP_MISSING


def test_skip_target_inside_a_group_is_not_found():
    # Flink's check walks only the top-level steps, not into groups
    group = Pattern.begin("x").where(named("a")).followed_by("y").where(named("b"))
    p = Pattern.begin("s", AfterMatchSkipStrategy.skip_to_last("y")).where(named("s")).followed_by(group)
    assert compile_error(p) == SKIP_MISSING


def test_skip_target_may_name_the_last_step():
    p = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_last("b"))
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
    )
    assert run(p, "a1 b2") == [[1, 2]]


def test_errors_are_malformed_pattern_exceptions_with_the_message_as_str():
    p = Pattern.begin("a").followed_by("a")
    with pytest.raises(MalformedPatternException, match=re.escape("Duplicate pattern name: a.")):
        NFACompiler.compile(p)


def test_an_optional_step_after_a_negation_that_leads_into_a_proceed_cycle():
    # Flink's compiler copies the cycle without end (StackOverflowError, oracle case s6174-658);
    # flowcep names what it found (docs/semantics.md 10.5)
    group = Pattern.begin("p0").not_followed_by("p1").followed_by("p2").optional()
    p = Pattern.begin(group).followed_by(Pattern.begin("p3").optional()).one_or_more()
    message = compile_error(p)
    assert message.startswith("Cannot compile the pattern: the optional step 'p2' after 'p1'")
    assert "cycle of PROCEED edges" in message and "StackOverflowError" in message


def test_the_same_steps_without_the_loop_compile():
    group = Pattern.begin("p0").not_followed_by("p1").followed_by("p2").optional()
    nfa = NFACompiler.compile(Pattern.begin(group).followed_by(Pattern.begin("p3").optional()))
    kinds = {state.name: state.state_type for state in nfa.raw_states}
    assert {original_name(name) for name in kinds} == {"p0", "p1", "p2", "p3", "$endState$"}
    assert kinds["p0"] is StateType.Start and kinds["p1"] is StateType.Stop
