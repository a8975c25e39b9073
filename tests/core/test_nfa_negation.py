"""Negation at every position: not_next / not_followed_by in the middle and at the end
(NotPatternITCase, NFAITCase), and how taking events cancels pending not_followed_by's."""

from flowcep import Pattern, WithinType

from .helpers import id_dict, named, run, run_full

# --- not_next ---------------------------------------------------------------------------------


def a_not_next_n_then_c():
    return (
        Pattern.begin("a")
        .where(named("a"))
        .not_next("n")
        .where(named("n"))
        .followed_by("c")
        .where(named("c"))
    )


def test_not_next_in_the_middle_forbids_the_event_right_after():
    assert run(a_not_next_n_then_c(), "a1 n2 c3") == []


def test_not_next_in_the_middle_allows_the_forbidden_event_later():
    assert run(a_not_next_n_then_c(), "a1 x2 n3 c4") == [[1, 4]]


def test_not_next_in_the_middle_lets_the_next_event_be_taken_by_the_following_step():
    assert run(a_not_next_n_then_c(), "a1 c2") == [[1, 2]]


def test_not_next_between_strict_steps():
    p = Pattern.begin("a").where(named("a")).not_next("n").where(named("n")).next("c").where(named("c"))
    assert run(p, "a1 c2 a3 n4 c5 a6 x7 c8") == [[1, 2]]


def test_not_next_at_the_end_emits_on_the_next_event():
    p = Pattern.begin("a").where(named("a")).not_next("n").where(named("n"))
    r = run_full(p, "a1 x2 a3 n4")
    assert r.emitted_at() == [(2, [1])]


def test_not_next_at_the_end_needs_one_more_event():
    p = Pattern.begin("a").where(named("a")).not_next("n").where(named("n"))
    r = run_full(p, "a1")
    assert r.emitted == []


def test_not_next_at_the_end_is_accepted_without_a_window():
    p = Pattern.begin("a").where(named("a")).not_next("n").where(named("n"))
    assert run(p, "a1 a2 a3") == [[1], [2]]


def test_two_not_next_in_a_row():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_next("n")
        .where(named("n"))
        .not_next("m")
        .where(named("m"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 m2 c3") == []
    assert run(p, "a1 n2 c3") == []
    assert run(p, "a1 x2 c3") == [[1, 3]]


# --- not_followed_by --------------------------------------------------------------------------


def a_not_followed_by_n_then_c():
    return (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("c")
        .where(named("c"))
    )


def test_not_followed_by_in_the_middle_forbids_the_event_anywhere_before_the_next_step():
    assert run(a_not_followed_by_n_then_c(), "a1 x2 n3 c4") == []


def test_not_followed_by_in_the_middle_does_not_look_after_the_next_step():
    assert run(a_not_followed_by_n_then_c(), "a1 c2 n3") == [[1, 2]]


def test_not_followed_by_in_the_middle_kills_only_the_runs_it_sees():
    assert run(a_not_followed_by_n_then_c(), "a1 n2 a3 c4") == [[3, 4]]


def test_not_followed_by_before_followed_by_any():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by_any("c")
        .where(named("c"))
    )
    assert run(p, "a1 c2 n3 c4") == [[1, 2]]


def test_not_followed_by_at_the_end_emits_when_time_passes_the_window():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(10)
    r = run_full(p, "a1@1 x2@5 x3@20")
    assert r.emitted_at() == [(3, [1])]
    assert r.timed_out == []


def test_not_followed_by_at_the_end_is_vetoed_inside_the_window():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(10)
    assert run(p, "a1@1 n2@5 x3@20") == []


def test_not_followed_by_at_the_end_allows_the_event_after_the_window():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(10)
    r = run_full(p, "a1@1 n2@11")
    assert r.emitted_at() == [(2, [1])]


def test_not_followed_by_at_the_end_emits_at_the_final_advance_time():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(10)
    r = run_full(p, "a1@1 a2@3")
    assert r.emitted_at() == [("end", [1]), ("end", [2])]


def test_not_followed_by_at_the_end_is_not_emitted_before_the_window_ends():
    p = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("n")).within(10)
    r = run_full(p, "a1@1 x2@10", final_ts=10)
    assert r.emitted == []
    r = run_full(p, "a1@1 x2@10", final_ts=11)
    assert r.emitted_at() == [("end", [1])]


def test_not_followed_by_at_the_end_after_a_loop():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .not_followed_by("n")
        .where(named("n"))
        .within(10)
    )
    assert run(p, "a1@1 b2@2 b3@3 n4@4") == []
    assert run(p, "a1@1 b2@2 b3@3 x4@4") == [[1, 2], [1, 2, 3]]


# --- negation around optional and looping steps ------------------------------------------------


def test_not_followed_by_before_an_optional_step_also_guards_the_following_step():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 n2 c3") == []
    assert run(p, "a1 x2 c3") == [[1, 3]]


def test_taking_the_optional_step_cancels_the_pending_not_followed_by():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 n3 c4") == [[1, 2, 4]]


def test_not_followed_by_before_a_loop():
    # NotPatternITCase.testNotFollowedByBeforeOneOrMore-like
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 n3 b4 c5") == [[1, 2, 4, 5], [1, 2, 5]]
    assert run(p, "a1 n2 b3 c4") == []


def test_not_followed_by_after_a_loop():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 b3 c4") == [[1, 2, 3, 4], [1, 2, 4]]


def test_not_followed_by_after_a_loop_kills_the_loop_itself():
    # the looping state carries the stop edge: n3 ends the whole branch, the loop included
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 n3 b4 c5") == []


def test_not_next_after_a_loop():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .not_next("n")
        .where(named("n"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 x3 b4 c5") == [[1, 2, 4, 5], [1, 2, 5]]
    # n3 right after a repetition kills the whole branch, the loop included
    assert run(p, "a1 b2 n3 b4 c5") == []


def test_not_followed_by_before_an_optional_loop_at_the_end_does_not_veto_the_empty_match():
    # NotPatternITCase.testNotFollowByBeforeZeroOrMore-like: the optional tail completes the
    # match at once, before the not_followed_by can see anything
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .optional()
    )
    r = run_full(p, "a1 n2 b3")
    assert r.emitted_at() == [(1, [1])]


def test_not_followed_by_before_an_optional_times_with_window():
    # NotPatternITCase.testNotFollowByBeforeTimesWithin-like
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(named("n"))
        .followed_by("b")
        .where(named("b"))
        .times(0, 2)
        .within(10)
    )
    assert run(p, "a1@1 n2@2 b3@3 b4@4") == [[1]]
    assert run(p, "a1@1 b2@2 n3@3 b4@4") == [[1], [1, 2], [1, 2, 4]]


def test_not_followed_by_before_an_optional_step_kills_the_run_that_skipped_it():
    # Flink (oracle case s31-411): a1 skips the optional s and waits for b's: c3 kills it. The
    # run that took a2 as s escaped the negation. Its state is a copy without the stop edge,
    # with a name of its own (b:1:0): sharing the original's name would bring the stop back
    # to one run and take it from the other.
    p = (
        Pattern.begin("a")
        .not_followed_by("n")
        .where(named("c"))
        .followed_by("s")
        .optional()
        .followed_by("b")
        .where(named("b"))
        .times(3)
        .within(12)
    )
    r = run_full(p, "a1@3 a2@5 c3@8")
    assert r.emitted == []
    assert sorted(((id_dict(m), ts) for m, ts in r.timed_out), key=lambda x: x[1]) == [
        ({"a": [1], "s": [2]}, 15),
        ({"a": [3]}, 20),
    ]


def test_a_pending_not_followed_by_match_does_not_wait_for_an_older_open_run_without_skip():
    # Flink (oracle case s1234-325): d1's run waits forever in an optional repetition of p1;
    # with no_skip nothing can be pruned, so d4 a5's match comes out when its window passes
    def soon_after_p0(e, ctx):
        return e.ts - ctx.get_events_for_pattern("p0")[0].ts < 4

    p = (
        Pattern.begin("p0")
        .next("p1")
        .where(soon_after_p0)
        .times(1, 3)
        .not_followed_by("p2")
        .where(named("d"))
        .within(2, WithinType.PREVIOUS_AND_CURRENT)
    )
    r = run_full(p, "d1@15 c2@17 b3@22 d4@27 a5@28 a6@31")
    assert [id_dict(x.match) for x in r.emitted] == [{"p0": [1], "p1": [2]}, {"p0": [4], "p1": [5]}]
