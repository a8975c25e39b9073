"""``flowcep.nfa.expiry``: the timeouts of a queue sorted by start event, its first runs cut off,
against ``NFA.advance_time`` (the reference); any other queue is left to the reference. Random
patterns and streams hold the two to each other through the operator in
``tests/runtime/test_generated_step.py``."""

from __future__ import annotations

from typing import Any

from flowcep import Pattern, WithinType
from flowcep.nfa import NFA, NFACompiler
from flowcep.nfa.computation_state import NFAState
from flowcep.nfa.expiry import expiry
from flowcep.sharedbuffer import PathlessBuffer

from .helpers import events, named


def a_then_b(window: int) -> Pattern:
    return Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(window)


def _runs(nfa: NFA, spec: str) -> tuple[PathlessBuffer, NFAState]:
    """The key's buffer and state after the events of ``spec`` (interpreted step)."""
    buffer = PathlessBuffer()
    state = nfa.create_initial_state()
    for e in events(spec):
        nfa.process(buffer, state, e, e.ts)
    return buffer, state


def _starts(state: NFAState) -> list[Any]:
    return [run.start_event_id for run in state.queue]


def test_the_first_runs_of_a_sorted_queue_time_out_as_advance_time_has_them() -> None:
    # a1, a2 and a4 wait for a b within 5 ms: at 7, a1 and a2 are out (1 + 5 <= 7, 2 + 5 <= 7)
    nfa = NFACompiler.compile(a_then_b(5), timeout_handling=True)
    expire = expiry(nfa)
    assert expire is not None
    buffer, state = _runs(nfa, "a1 a2 x3 a4")
    ref_buffer, reference = _runs(nfa, "a1 a2 x3 a4")
    timed_out = expire(buffer, state, 7)
    matches, ref_timed_out = nfa.advance_time(ref_buffer, reference, 7)
    assert matches == []
    assert timed_out == ref_timed_out == [({"a": events("a1")}, 6), ({"a": events("a1 a2")[1:]}, 7)]
    assert _starts(state) == _starts(reference) == [(4, 0), None]
    assert [run.version for run in state.queue] == [run.version for run in reference.queue]


def test_a_run_whose_window_is_still_open_stays() -> None:
    # at 6, only a1 is out: a2 started 4 ms before, within its 5 ms
    nfa = NFACompiler.compile(a_then_b(5), timeout_handling=True)
    expire = expiry(nfa)
    assert expire is not None
    buffer, state = _runs(nfa, "a1 a2")
    assert expire(buffer, state, 6) == [({"a": events("a1")}, 6)]
    assert _starts(state) == [(2, 0), None]
    assert expire(buffer, state, 6) == []
    assert _starts(state) == [(2, 0), None]


def test_a_queue_not_sorted_by_start_event_is_left_to_advance_time() -> None:
    # a heap in Java's order that is not sorted (a4 before a2): the reference re-adds the runs
    nfa = NFACompiler.compile(a_then_b(5), timeout_handling=True)
    expire = expiry(nfa)
    assert expire is not None
    buffer, state = _runs(nfa, "a1 a2 a4")
    first, second, third, start = state.queue
    state.queue = [first, third, second, start]
    assert expire(buffer, state, 7) is None
    assert _starts(state) == [(1, 0), (4, 0), (2, 0), None]
    _, timed_out = nfa.advance_time(buffer, state, 7)
    assert [partial for partial, _ in timed_out] == [{"a": events("a1")}, {"a": events("a1 a2")[1:]}]


def test_patterns_with_step_windows_or_a_pending_end_keep_advance_time() -> None:
    step_window = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .within(5, WithinType.PREVIOUS_AND_CURRENT)
    )
    not_followed = Pattern.begin("a").where(named("a")).not_followed_by("b").where(named("b")).within(5)
    no_window = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    for pattern in (step_window, not_followed, no_window):
        assert expiry(NFACompiler.compile(pattern)) is None
