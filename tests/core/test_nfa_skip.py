"""After-match skip strategies (AfterMatchSkipITCase): pruning, deferred emission, misses."""

import pytest

from flowcep import AfterMatchSkipStrategy, Pattern

from .helpers import named, run, run_full, same_price_as

S = AfterMatchSkipStrategy


def two_then_two(skip):
    # start: 2 x's, then strictly end: 2 x's
    return Pattern.begin("start", skip).where(named("x")).times(2).next("end").where(named("x")).times(2)


EIGHT_X = "x1 x2 x3 x4 x5 x6 x7 x8"


def test_no_skip_keeps_every_overlapping_match():
    assert run(two_then_two(S.no_skip()), "x1 x2 x3 x4 x5 x6") == [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]]


def test_skip_past_last_event():
    assert run(two_then_two(S.skip_past_last_event()), EIGHT_X) == [[1, 2, 3, 4], [5, 6, 7, 8]]


def test_skip_to_first_prunes_runs_that_started_strictly_before_the_target():
    assert run(two_then_two(S.skip_to_first("end")), EIGHT_X) == [[1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 7, 8]]


def test_skip_to_last_prunes_runs_that_started_strictly_before_the_target():
    assert run(two_then_two(S.skip_to_last("end")), EIGHT_X) == [[1, 2, 3, 4], [4, 5, 6, 7]]


def test_skip_to_first_of_the_first_step_prunes_nothing():
    assert run(two_then_two(S.skip_to_first("start")), "x1 x2 x3 x4 x5 x6") == [
        [1, 2, 3, 4],
        [2, 3, 4, 5],
        [3, 4, 5, 6],
    ]


def test_skip_to_last_of_the_first_step():
    assert run(two_then_two(S.skip_to_last("start")), "x1 x2 x3 x4 x5 x6") == [
        [1, 2, 3, 4],
        [2, 3, 4, 5],
        [3, 4, 5, 6],
    ]


def test_skip_to_first_with_throw_on_miss_fails_when_skipping_to_the_first_event_of_the_match():
    p = two_then_two(S.skip_to_first("start").throw_exception_on_miss())
    with pytest.raises(Exception, match="Could not skip to first element of a match."):
        run(p, "x1 x2 x3 x4")


def pairs(skip):
    return Pattern.begin("a", skip).where(named("a")).followed_by_any("b").where(named("b"))


def test_pairs_without_skip():
    assert run(pairs(S.no_skip()), "a1 a2 b3 b4") == [[1, 3], [1, 4], [2, 3], [2, 4]]


def test_skip_to_next_prunes_runs_that_started_at_or_before_the_matchs_first_event():
    assert run(pairs(S.skip_to_next()), "a1 a2 b3 b4") == [[1, 3], [2, 3]]


def test_skip_past_last_event_prunes_runs_that_started_at_or_before_the_matchs_last_event():
    assert run(pairs(S.skip_past_last_event()), "a1 a2 b3 b4") == [[1, 3]]


def test_skip_to_next_on_a_loop_at_the_end():
    p = Pattern.begin("a", S.skip_to_next()).where(named("a")).one_or_more()
    assert run(p, "a1 a2 a3") == [[1], [2], [3]]


def test_skip_past_last_event_on_a_loop_at_the_end():
    p = Pattern.begin("a", S.skip_past_last_event()).where(named("a")).one_or_more()
    assert run(p, "a1 a2 a3") == [[1], [2], [3]]


def a_then_two_b(skip):
    return Pattern.begin("a", skip).where(named("a")).followed_by("b").where(named("b")).times(2)


def test_skip_to_last_of_a_repeated_step_targets_its_last_event():
    # [a1 b2 b4] prunes the run of a3 (3 < b4); the run of a5 survives
    assert run(a_then_two_b(S.skip_to_last("b")), "a1 b2 a3 b4 a5 b6 b7") == [[1, 2, 4], [5, 6, 7]]


def test_skip_to_first_of_a_repeated_step_targets_its_first_event():
    assert run(a_then_two_b(S.skip_to_first("b")), "a1 b2 a3 b4 a5 b6 b7") == [
        [1, 2, 4],
        [3, 4, 6],
        [5, 6, 7],
    ]


def test_skip_to_last_prunes_runs_that_share_the_target():
    assert run(a_then_two_b(S.skip_to_last("b")), "a1 a2 b3 a4 b5 b6") == [[1, 3, 5]]


# --- missing targets -------------------------------------------------------------------------


def optional_b(skip):
    return (
        Pattern.begin("a", skip)
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )


@pytest.mark.parametrize("skip", [S.skip_to_first("b"), S.skip_to_last("b")], ids=["first", "last"])
def test_missing_skip_target_prunes_nothing(skip):
    # [a1 c3] has no b: nothing is pruned, so [a2 c3] survives; it is still held back while the
    # run of a1 (waiting for an optional b) is open, and released when that run times out
    r = run_full(optional_b(skip).within(10), "a1 a2 c3")
    assert r.emitted_at() == [(3, [1, 3]), ("end", [2, 3])]


def test_a_present_skip_target_prunes_where_a_missing_one_does_not():
    r = run_full(optional_b(S.skip_past_last_event()).within(10), "a1 a2 c3")
    assert r.emitted_at() == [(3, [1, 3])]


def test_present_skip_target_prunes():
    assert run(optional_b(S.skip_to_last("b")), "a1 a2 b3 c4") == [[1, 3, 4]]


def test_missing_skip_target_with_throw_on_miss_raises():
    with pytest.raises(Exception, match="Could not skip to b. No such element in the found match"):
        run(optional_b(S.skip_to_first("b").throw_exception_on_miss()), "a1 c2")
    with pytest.raises(Exception, match="Could not skip to b. No such element in the found match"):
        run(optional_b(S.skip_to_last("b").throw_exception_on_miss()), "a1 c2")


def test_present_skip_target_with_throw_on_miss_does_not_raise():
    assert run(optional_b(S.skip_to_last("b").throw_exception_on_miss()), "a1 b2 c3") == [[1, 2, 3]]


# --- deferred emission -----------------------------------------------------------------------


def same_price(skip):
    # `b` must have the price of `a`: a run can stay open while a later-started one completes
    return Pattern.begin("a", skip).where(named("a")).followed_by_any("b").where(same_price_as("a"))


def test_without_skip_matches_are_emitted_as_soon_as_they_complete():
    r = run_full(same_price(S.no_skip()), "a1$1 a2$2 b3$2 b4$1")
    assert r.emitted_at() == [(3, [2, 3]), (4, [1, 4])]


def test_skip_strategy_holds_a_match_back_while_an_earlier_run_is_open():
    # [a2 b3] completes first but waits for the run of a1; when [a1 b4] completes it is emitted
    # first and its pruning (past b4) discards the held-back [a2 b3]
    r = run_full(same_price(S.skip_past_last_event()), "a1$1 a2$2 b3$2 b4$1")
    assert r.emitted_at() == [(4, [1, 4])]


def test_held_back_match_is_released_when_the_earlier_run_times_out():
    # FLINK-31017: the completed match must be emitted once the earlier partial match times out
    p = same_price(S.skip_past_last_event()).within(5)
    r = run_full(p, "a1$1@1 a2$2@2 b3$2@3 x4@10")
    assert r.emitted_at() == [(4, [2, 3])]
    assert r.timeouts == [([1], 6), ([2], 7)]


def test_held_back_match_is_released_at_the_final_advance_time():
    p = same_price(S.skip_to_next()).within(100)
    r = run_full(p, "a1$1@1 a2$2@2 b3$2@3")
    assert r.emitted_at() == [("end", [2, 3])]


def test_skip_to_next_emits_several_completed_matches_in_start_order():
    r = run_full(pairs(S.skip_to_next()), "a1 a2 b3 b4")
    assert r.emitted_at() == [(3, [1, 3]), (3, [2, 3])]


def test_process_accepts_a_skip_strategy_overriding_the_patterns():
    p = pairs(S.no_skip())
    assert run(p, "a1 a2 b3 b4", skip_strategy=S.skip_past_last_event()) == [[1, 3]]


def test_a_skip_strategy_that_prunes_by_paths_needs_a_buffer_that_keeps_them():
    # skip_to_next, skip_to_first and skip_to_last prune by the event ids of a match's paths;
    # a PathlessBuffer keeps none (no_skip and skip_past_last_event need none)
    from flowcep.nfa import NFACompiler
    from flowcep.sharedbuffer import PathlessBuffer

    from .helpers import events

    needs = {
        name: NFACompiler.compile(pairs(skip), timeout_handling=True).needs_paths()
        for name, skip in [
            ("no_skip", S.no_skip()),
            ("skip_past_last_event", S.skip_past_last_event()),
            ("skip_to_next", S.skip_to_next()),
            ("skip_to_first", S.skip_to_first("a")),
            ("skip_to_last", S.skip_to_last("a")),
        ]
    }
    assert needs == {
        "no_skip": False,
        "skip_past_last_event": False,
        "skip_to_next": True,
        "skip_to_first": True,
        "skip_to_last": True,
    }
    nfa = NFACompiler.compile(pairs(S.skip_to_next()), timeout_handling=True)
    state, buffer = nfa.create_initial_state(), PathlessBuffer()
    (a1,) = events("a1")
    with pytest.raises(ValueError, match="prunes by the paths of matches"):
        nfa.process(buffer, state, a1, a1.ts)
