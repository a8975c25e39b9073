"""Windows and timeouts: FIRST_AND_LAST (within), PREVIOUS_AND_CURRENT, per-quantifier windows,
timed-out partial matches and their timestamps (NFATest.testWindowBorders, NFAITCase, CEPITCase)."""

from flowcep import Pattern, WithinType
from flowcep.nfa import NFACompiler
from flowcep.nfa.computation_state import NFAState
from flowcep.sharedbuffer import SharedBuffer

from .helpers import FINAL_TS, events, id_dict, named, run, run_full

PC = WithinType.PREVIOUS_AND_CURRENT


def a_then_b(window):
    return Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(window)


# --- FIRST_AND_LAST ---------------------------------------------------------------------------


def test_match_span_must_be_strictly_smaller_than_the_window():
    # NFATest.testWindowBorders
    assert run(a_then_b(2), "a1@1 b2@3") == []
    assert run(a_then_b(2), "a1@1 b2@2") == [[1, 2]]


def test_within_accepts_a_timedelta():
    from datetime import timedelta

    assert run(a_then_b(timedelta(milliseconds=2)), "a1@1 b2@3") == []
    assert run(a_then_b(timedelta(seconds=1)), "a1@1 b2@1000") == [[1, 2]]


def test_window_is_counted_from_the_first_event_of_the_match():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(named("c"))
        .within(10)
    )
    assert run(p, "a1@0 b2@5 c3@9") == [[1, 2, 3]]
    assert run(p, "a1@0 b2@5 c3@10") == []


def test_window_declared_on_an_earlier_step_applies_to_the_whole_pattern():
    p = Pattern.begin("a").where(named("a")).within(5).followed_by("b").where(named("b"))
    assert run(p, "a1@1 b2@6") == []
    assert run(p, "a1@1 b2@5") == [[1, 2]]


def test_global_window_is_the_smallest_within():
    p = Pattern.begin("a").where(named("a")).within(5).followed_by("b").where(named("b")).within(10)
    assert run(p, "a1@1 b2@6") == []
    assert run(p, "a1@1 b2@5") == [[1, 2]]


def test_within_zero_anywhere_disables_the_window():
    # NFACompilerTest.testMultipleWindowTimeWithZeroLength
    p = Pattern.begin("a").where(named("a")).within(0).followed_by("b").where(named("b")).within(10)
    assert run(p, "a1@1 b2@1000") == [[1, 2]]


def test_a_negative_window_is_no_window_as_in_flink():
    # Flink 2.3 takes within(Duration.ofMillis(-1)): begin("b").within(-1 ms) on b0@0 gives {b:[b0]}
    assert run(Pattern.begin("b").where(named("b")).within(-1), "b0@0") == [[0]]
    assert run(a_then_b(-1), "a1@1 b2@50 b3@100") == [[1, 2]]
    # the smallest window wins, and a negative one is smaller than any other
    p = Pattern.begin("a").where(named("a")).within(5).followed_by("b").where(named("b")).within(-1)
    assert run(p, "a1@1 b2@50") == [[1, 2]]
    assert run_full(a_then_b(-1), "a1@1 x2@100").timed_out == []


def test_a_negative_quantifier_or_previous_and_current_window_is_no_window():
    # Flink 2.3: times(2, Duration.ofMillis(-1)) and within(-1 ms, PREVIOUS_AND_CURRENT)
    assert run(Pattern.begin("a").where(named("a")).times(2, window=-1), "a1@1 a2@50") == [[1, 2]]
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(-1, PC)
    assert run(p, "a1@1 b2@50") == [[1, 2]]


def test_events_with_equal_timestamps_fit_in_any_window():
    assert run(a_then_b(1), "a1@5 b2@5") == [[1, 2]]


def test_loop_inside_a_window_stops_growing_at_the_border():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).one_or_more().within(3)
    assert run(p, "a1@1 b2@2 b3@3 b4@4") == [[1, 2], [1, 2, 3]]


# --- timeouts ---------------------------------------------------------------------------------


def test_timed_out_partial_match_is_reported_with_start_plus_window():
    r = run_full(a_then_b(10), "a1@1 x2@5 x3@20")
    assert [(id_dict(m), ts) for m, ts in r.timed_out] == [({"a": [1]}, 11)]
    assert r.matches == []


def test_runs_out_of_start_order_all_time_out_in_the_order_of_the_run_queue():
    # events out of time order leave the run queue in heap order, not start order: a1@1 moves
    # ahead of a3@9, and a4@3 stays behind a3@9 (its parent in the heap is a1); every run times
    # out all the same, in the queue's order, as Flink's advanceTime walks it
    r = run_full(a_then_b(5), "a3@9 a1@1 a4@3 x5@15", final_ts=None)
    assert [(id_dict(m), ts) for m, ts in r.timed_out] == [({"a": [1]}, 6), ({"a": [3]}, 14), ({"a": [4]}, 8)]


def test_a_run_out_of_start_order_behind_one_that_stays_times_out_all_the_same():
    # the queue is [a1, a3, a4, start] (heap order, as above): at 9 (window 5) a1 and a4 time
    # out, a3 stays although it comes before a4; what stays keeps Java's heap order
    r = run_full(a_then_b(5), "a3@9 a1@1 a4@3", final_ts=9)
    assert [(id_dict(m), ts) for m, ts in r.timed_out] == [({"a": [1]}, 6), ({"a": [4]}, 8)]
    assert [run.start_timestamp for run in r.state.queue] == [9, -1]


def test_runs_given_out_of_start_order_all_time_out_in_the_order_of_the_run_queue():
    # NFAState adds runs as Java's queue does: the start run, a3's run and a1's run, in this
    # order, make the heap [a1, start, a3], whose start run is not last
    nfa = NFACompiler.compile(a_then_b(5), timeout_handling=True)
    state, buffer = nfa.create_initial_state(), SharedBuffer()
    for e in events("a3@9 a1@1"):
        nfa.process(buffer, state, e, e.ts)
    by_start = {run.start_timestamp: run for run in state.queue}
    given = NFAState([by_start[-1], by_start[9], by_start[1]])
    assert [run.start_timestamp for run in given.queue] == [1, -1, 9]
    matches, timed_out = nfa.advance_time(buffer, given, 20)
    assert matches == []
    assert [(id_dict(m), ts) for m, ts in timed_out] == [({"a": [1]}, 6), ({"a": [3]}, 14)]
    assert [run.start_timestamp for run in given.queue] == [-1]


def test_timeout_is_detected_only_when_time_advances():
    # nothing times out while the next event is still inside the window
    r = run_full(a_then_b(10), "a1@1 x2@5", final_ts=None)
    assert r.timed_out == []
    r = run_full(a_then_b(10), "a1@1 x2@5", final_ts=11)
    assert r.timeouts == [([1], 11)]


def test_advance_time_exactly_at_the_window_end_times_out():
    r = run_full(a_then_b(10), "a1@1", final_ts=10)
    assert r.timed_out == []
    r = run_full(a_then_b(10), "a1@1", final_ts=11)
    assert r.timeouts == [([1], 11)]


def test_every_open_run_of_a_loop_times_out():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .followed_by("c")
        .where(named("c"))
        .within(10)
    )
    r = run_full(p, "a1@1 b2@2 b3@3 x4@30")
    assert r.timeouts == [([1, 2], 11), ([1, 2, 3], 11)]
    assert sorted(list(m) for m, _ in r.timed_out) == [["a", "b"], ["a", "b"]]


def test_timeouts_are_not_reported_without_timeout_handling():
    from flowcep.nfa import NFACompiler
    from flowcep.sharedbuffer import SharedBuffer

    nfa = NFACompiler.compile(a_then_b(10), timeout_handling=False)
    state, buffer = nfa.create_initial_state(), SharedBuffer()
    (a1,) = events("a1@1")
    nfa.advance_time(buffer, state, 1)
    nfa.process(buffer, state, a1, 1)
    matches, timed_out = nfa.advance_time(buffer, state, 100)
    assert (matches, timed_out) == ([], [])
    assert state.is_empty() and buffer.is_empty()


def test_completed_runs_do_not_time_out():
    r = run_full(a_then_b(10), "a1@1 b2@2 x3@50")
    assert r.matches == [[1, 2]]
    assert r.timed_out == []


def test_buffer_is_empty_after_every_run_timed_out():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by_any("b")
        .where(named("b"))
        .one_or_more()
        .allow_combinations()
        .followed_by("c")
        .where(named("c"))
        .within(10)
    )
    r = run_full(p, "a1@1 b2@2 b3@3 a4@4 b5@5")
    assert r.state.is_empty()
    assert r.buffer.is_empty()


# --- PREVIOUS_AND_CURRENT -----------------------------------------------------------------------


def test_previous_and_current_window_on_the_last_step_bounds_only_its_own_gap():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(named("c"))
        .within(3, PC)
    )
    r = run_full(p, "a1@1 b2@10 c3@12 a4@20 b5@21 c6@30")
    # a1 -> b2 is 9 ms apart but only the gap before c is bounded
    assert r.matches == [[1, 2, 3]]
    # the run of a4 waits for c after b5@21: it times out at previous + window = 24
    assert r.timeouts == [([4, 5], 24)]


def test_previous_and_current_window_on_a_middle_step():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .within(3, PC)
        .followed_by("c")
        .where(named("c"))
    )
    r = run_full(p, "a1@1 b2@10 c3@12 a4@20 b5@21 c6@30 a7@40 x8@41")
    assert r.matches == [[4, 5, 6]]
    assert r.timeouts == [([1], 4), ([7], 43)]


def test_previous_and_current_window_on_the_first_step_bounds_nothing():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .within(3, PC)
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1@1 b2@10 c3@12 a4@20 b5@21 c6@30") == [[1, 2, 3], [4, 5, 6]]


def test_previous_and_current_border_is_exclusive():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(3, PC)
    assert run(p, "a1@1 b2@4") == []
    assert run(p, "a1@1 b2@3") == [[1, 2]]


def test_previous_and_current_window_on_a_looping_step_bounds_no_gap():
    # Flink records PREVIOUS_AND_CURRENT windows only for singleton take states
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).one_or_more().within(3, PC)
    r = run_full(p, "a1@0 b2@5 b3@6 b4@20")
    assert r.matches == [[1, 2], [1, 2, 3], [1, 2, 3, 4]]
    assert r.timed_out == []


def test_previous_and_current_window_on_a_times_step_bounds_no_gap():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(3)
        .within(3, PC)
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1@0 b2@5 b3@6 b4@7 c5@8") == [[1, 2, 3, 4, 5]]
    assert run(p, "a1@0 b2@1 b3@6 b4@7 c5@8") == [[1, 2, 3, 4, 5]]
    assert run(p, "a1@0 b2@1 b3@2 b4@7 c5@8") == [[1, 2, 3, 4, 5]]


def test_identical_open_runs_time_out_as_identical_partial_matches():
    # the run waiting in the loop and the one waiting for c hold the same events
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .followed_by("c")
        .where(named("c"))
        .within(100)
    )
    r = run_full(p, "a1@0 b2@5 x3@6")
    assert r.timeouts == [([1, 2], 100), ([1, 2], 100)]


def test_both_window_types_together():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .within(3, PC)
        .within(5)
    )
    assert run(p, "a1@0 b2@2 b3@4 b4@6") == [[1, 2], [1, 2, 3]]


def test_previous_and_current_window_as_large_as_the_global_window_is_allowed():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(5, PC).within(5)
    assert run(p, "a1@1 b2@5") == [[1, 2]]


# --- per-quantifier windows --------------------------------------------------------------------


def test_times_window_bounds_the_gaps_between_repetitions():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(3, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    r = run_full(p, "a1@1 b2@2 b3@4 b4@6 c5@7")
    assert r.matches == [[1, 2, 3, 4, 5]]  # the repetitions span 4 ms, every gap is 2


def test_times_window_bounds_the_gap_before_the_first_repetition():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(3, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    r = run_full(p, "a1@10 b2@20 b3@21 b4@22 c5@23")
    assert r.matches == []
    assert r.timeouts == [([1], 13)]


def test_times_window_does_not_bound_the_gap_before_the_last_repetition():
    # Flink records the quantifier window only for the states whose internal name has a ":N"
    # suffix: the state of the last repetition is created first and keeps the plain name
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(3, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1@30 b2@31 b3@32 b4@35 c5@36") == [[1, 2, 3, 4, 5]]
    assert run(p, "a1@30 b2@31 b3@35 b4@36 c5@37") == []


def test_one_or_more_window():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more(window=3)
        .followed_by("c")
        .where(named("c"))
    )
    # the gap before the first repetition is bounded ...
    r = run_full(p, "a1@0 b2@5 b3@6 c4@7")
    assert r.matches == []
    assert r.timeouts == [([1], 3)]
    # ... the gaps between repetitions (the looping state) are not
    assert run(p, "a1@0 b2@1 b3@10 c4@11") == [[1, 2, 3, 4], [1, 2, 4]]


def test_times_or_more_window():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times_or_more(2, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1@0 b2@1 b3@2 b4@4 c5@20") == [[1, 2, 3, 4, 5], [1, 2, 3, 5]]
    # the gap between the first and the second (mandatory) repetition is bounded
    r = run_full(p, "a1@0 b2@1 b3@5 b4@6 c5@7")
    assert r.matches == []
    assert r.timeouts == [([1, 2], 4)]


def test_times_range_window():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(1, 3, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    # the last repetition's state has no window
    assert run(p, "a1@0 b2@1 b3@2 b4@10 c5@11") == [[1, 2, 3, 4, 5], [1, 2, 3, 5], [1, 2, 5]]
    r = run_full(p, "a1@0 b2@5 b3@6 c4@7")
    assert r.matches == []
    assert r.timeouts == [([1], 3)]


def test_times_range_window_bounds_the_gap_to_the_second_repetition():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(2, 3, window=3)
        .followed_by("c")
        .where(named("c"))
    )
    r = run_full(p, "a1@0 b2@1 b3@5 b4@6 c5@7")
    assert r.matches == []
    assert r.timeouts == [([1, 2], 4)]


def test_final_advance_time_far_in_the_future_is_harmless():
    r = run_full(a_then_b(10), "a1@1 b2@2", final_ts=FINAL_TS)
    assert r.matches == [[1, 2]]
