"""Shape and multiplicity of results: dict keys in pattern order, only steps with events,
multiset duplicates, equal timestamps, emission time, state and buffer life cycle, API details."""

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.nfa import NFACompiler
from flowcep.sharedbuffer import SharedBuffer

from .helpers import dict_matches, events, named, run, run_full


def test_match_keys_follow_pattern_order_not_name_order():
    # NFAITCase.testNFAResultKeyOrdering
    p = (
        Pattern.begin("z")
        .where(named("a"))
        .followed_by("y")
        .where(named("b"))
        .followed_by("x")
        .where(named("c"))
    )
    (m,) = dict_matches(p, "a1 b2 c3")
    assert list(m) == ["z", "y", "x"]


def test_step_names_with_quotes_braces_and_newlines_name_their_events():
    # the NFA writes step names into generated code (decision plans): as literals, not as text
    first, second = "a'\"\\x\n", 'b}{"'
    p = Pattern.begin(first).where(named("a")).followed_by(second).where(named("b"))
    assert dict_matches(p, "a1 b2") == [{first: [1], second: [2]}]


def test_match_lists_are_in_event_order():
    p = Pattern.begin("a").where(named("a")).times(3)
    assert dict_matches(p, "a1 a2 a3") == [{"a": [1, 2, 3]}]


def test_steps_without_events_are_absent_from_the_match():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert dict_matches(p, "a1 c2") == [{"a": [1], "c": [2]}]


def test_matches_carry_the_event_objects_themselves():
    evs = events("a1 b2")
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    (m,) = [x.match for x in run_full(p, evs).emitted]
    assert m["a"][0] is evs[0] and m["b"][0] is evs[1]


def test_identical_flattened_matches_are_kept_as_a_multiset():
    # two optional loops over the same events: {m1: [a2, a3]}, {m1: [a2], m2: [a3]} and
    # {m2: [a2, a3]} all flatten to the same ids (NFAITCase.testMultipleTakesVersionCollision)
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("m1")
        .where(named("a"))
        .one_or_more()
        .optional()
        .followed_by("m2")
        .where(named("a"))
        .one_or_more()
        .optional()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 4], [1, 2, 4], [1, 4]]
    assert sorted(dict_matches(p, "c1 a2 a3 b4"), key=repr) == sorted(
        [
            {"start": [1], "m1": [2, 3], "end": [4]},
            {"start": [1], "m1": [2], "m2": [3], "end": [4]},
            {"start": [1], "m2": [2, 3], "end": [4]},
            {"start": [1], "m1": [2], "end": [4]},
            {"start": [1], "m2": [2], "end": [4]},
            {"start": [1], "end": [4]},
        ],
        key=repr,
    )


def test_two_combination_loops_after_followed_by_any():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by_any("m1")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .followed_by_any("m2")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .followed_by("end")
        .where(named("b"))
    )
    assert sorted(dict_matches(p, "c1 a2 a3 a4 b5"), key=repr) == sorted(
        [
            {"start": [1], "m1": [2, 3], "m2": [4], "end": [5]},
            {"start": [1], "m1": [3], "m2": [4], "end": [5]},
            {"start": [1], "m1": [2], "m2": [4], "end": [5]},
            {"start": [1], "m1": [2], "m2": [3], "end": [5]},
            {"start": [1], "m1": [2], "m2": [3, 4], "end": [5]},
        ],
        key=repr,
    )


def test_two_combination_loops_after_followed_by():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("m1")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .followed_by("m2")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .followed_by("end")
        .where(named("b"))
    )
    assert sorted(dict_matches(p, "c1 a2 a3 a4 a5 b6"), key=repr) == sorted(
        [
            {"start": [1], "m1": [2, 3, 4], "m2": [5], "end": [6]},
            {"start": [1], "m1": [2], "m2": [3], "end": [6]},
            {"start": [1], "m1": [2], "m2": [3, 5], "end": [6]},
            {"start": [1], "m1": [2], "m2": [3, 4], "end": [6]},
            {"start": [1], "m1": [2], "m2": [3, 4, 5], "end": [6]},
            {"start": [1], "m1": [2, 4], "m2": [5], "end": [6]},
            {"start": [1], "m1": [2, 3], "m2": [4], "end": [6]},
            {"start": [1], "m1": [2, 3], "m2": [4, 5], "end": [6]},
        ],
        key=repr,
    )


# --- equal timestamps ------------------------------------------------------------------------


def test_events_with_equal_timestamps_are_processed_in_arrival_order():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    assert run(p, "a1@5 b2@5 b3@5") == [[1, 2]]
    assert run(p, "b1@5 a2@5") == []


def test_skip_strategy_orders_runs_with_equal_timestamps_by_arrival():
    p = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_next())
        .where(named("a"))
        .followed_by_any("b")
        .where(named("b"))
    )
    r = run_full(p, "a1@5 a2@5 b3@5 b4@5")
    assert r.emitted_at() == [(3, [1, 3]), (3, [2, 3])]


def test_skip_past_last_event_with_equal_timestamps():
    p = Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event()).where(named("a")).times(2)
    assert run(p, "a1@7 a2@7 a3@7 a4@7 a5@7") == [[1, 2], [3, 4]]


# --- emission time ---------------------------------------------------------------------------


def test_match_is_returned_by_the_process_call_of_its_last_event():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    r = run_full(p, "a1 x2 b3 a4 b5")
    assert r.emitted_at() == [(3, [1, 3]), (5, [4, 5])]


def test_process_and_advance_time_return_plain_lists():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(10)
    nfa = NFACompiler.compile(p, timeout_handling=True)
    state, buffer = nfa.create_initial_state(), SharedBuffer()
    a1, b2 = events("a1 b2")
    assert nfa.advance_time(buffer, state, 1) == ([], [])
    assert nfa.process(buffer, state, a1, 1) == []
    out = nfa.advance_time(buffer, state, 2)
    assert out == ([], [])
    (m,) = nfa.process(buffer, state, b2, 2)
    assert m == {"a": [a1], "b": [b2]}


def test_events_can_be_any_python_objects():
    p = Pattern.begin("a").where(lambda e: e[0] == "a").followed_by("b").where(lambda e: e[0] == "b")
    nfa = NFACompiler.compile(p)
    state, buffer = nfa.create_initial_state(), SharedBuffer()
    out = []
    for ts, e in enumerate([("a", 1), ("x", 2), ("b", 3)]):
        nfa.advance_time(buffer, state, ts)
        out += nfa.process(buffer, state, e, ts)
    assert out == [{"a": [("a", 1)], "b": [("b", 3)]}]


# --- state and buffer life cycle -------------------------------------------------------------


def test_fresh_state_and_buffer_are_empty():
    p = Pattern.begin("a").where(named("a"))
    nfa = NFACompiler.compile(p)
    assert nfa.create_initial_state().is_empty()
    assert SharedBuffer().is_empty()


def test_state_and_buffer_are_empty_after_the_only_run_completed():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    r = run_full(p, "a1 b2", final_ts=None)
    assert r.matches == [[1, 2]]
    assert r.state.is_empty() and r.buffer.is_empty()


def test_open_run_keeps_its_events_in_the_buffer():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    r = run_full(p, "a1 x2")
    assert not r.state.is_empty()
    assert not r.buffer.is_empty()


def test_non_matching_events_are_never_stored():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    r = run_full(p, "x1 x2 x3", final_ts=None)
    assert r.state.is_empty() and r.buffer.is_empty()


def test_killed_runs_release_their_events():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    r = run_full(p, "a1 x2 a3 a4 x5", final_ts=None)
    assert r.matches == []
    assert r.state.is_empty() and r.buffer.is_empty()


def test_buffer_empties_when_the_window_expires():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by_any("b")
        .where(named("b"))
        .one_or_more()
        .followed_by("c")
        .where(named("c"))
        .within(5)
    )
    r = run_full(p, "a1@1 b2@2 a3@3 b4@4 c5@5", final_ts=None)
    assert not r.buffer.is_empty()
    r.nfa.advance_time(r.buffer, r.state, 100)
    assert r.state.is_empty() and r.buffer.is_empty()
