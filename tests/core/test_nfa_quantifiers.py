"""Quantifiers: optional, times(n), times(a, b), times_or_more, one_or_more, greedy, until
(NFAITCase, GreedyITCase, TimesRangeITCase, TimesOrMoreITCase, UntilConditionITCase)."""

from flowcep import Pattern

from .helpers import named, run, run_full

# --- optional --------------------------------------------------------------------------------


def test_optional_middle_step_gives_the_match_with_and_without_it():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 c3") == [[1, 2, 3], [1, 3]]


def test_optional_middle_step_absent():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 x2 c3") == [[1, 3]]


def test_optional_strict_step_between_strict_steps():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .next("b")
        .where(named("b"))
        .optional()
        .next("c")
        .where(named("c"))
    )
    assert run(p, "a1 c2 a3 b4 c5 a6 x7 c8") == [[1, 2], [3, 4, 5]]


def test_optional_start_step():
    p = Pattern.begin("a").where(named("a")).optional().followed_by("b").where(named("b"))
    assert run(p, "a1 b2") == [[1, 2], [2]]


def test_optional_last_step_completes_immediately_without_it():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).optional()
    r = run_full(p, "a1 b2")
    assert r.emitted_at() == [(1, [1]), (2, [1, 2])]


def test_times_range_from_zero_is_an_optional_times():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .times(0, 2)
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 b3 b4 c5") == [[1, 2, 3, 5], [1, 2, 5], [1, 5]]


def test_optional_one_or_more_is_zero_or_more():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .optional()
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1 b2 b3 c4") == [[1, 2, 3, 4], [1, 2, 4], [1, 4]]


# --- times ------------------------------------------------------------------------------------


def test_times_exactly_n():
    p = Pattern.begin("a").where(named("a")).times(3)
    assert run(p, "a1 a2 x3 a4 a5") == [[1, 2, 4], [2, 4, 5]]


def test_times_one_is_like_a_single_step():
    p = Pattern.begin("a").where(named("a")).times(1).followed_by("b").where(named("b"))
    assert run(p, "a1 a2 b3") == [[1, 3], [2, 3]]


def test_times_range_emits_every_count_in_range():
    # TimesRangeITCase.testTimesRange-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times(2, 3)
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 a4 a5 b6") == [[1, 2, 3, 4, 6], [1, 2, 3, 6]]


def test_times_range_at_the_end_emits_as_soon_as_from_is_reached():
    p = Pattern.begin("start").where(named("c")).followed_by("middle").where(named("a")).times(2, 3)
    r = run_full(p, "c1 a2 a3 a4 a5")
    assert r.emitted_at() == [(3, [1, 2, 3]), (4, [1, 2, 3, 4])]


def test_times_range_optional():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times(2, 3)
        .optional()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3, 4], [1, 4]]


def test_times_or_more():
    # TimesOrMoreITCase-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 x3 a4 a5 b6") == [[1, 2, 4, 5, 6], [1, 2, 4, 6]]


def test_times_or_more_consecutive():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .consecutive()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 x3 a4 a5 b6") == []
    assert run(p, "c1 a2 a3 a4 x5 b6") == [[1, 2, 3, 4, 6], [1, 2, 3, 6]]


def test_times_or_more_allow_combinations():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .allow_combinations()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 a4 b5") == [[1, 2, 3, 4, 5], [1, 2, 3, 5], [1, 2, 4, 5]]


def test_times_or_more_optional():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .optional()
        .followed_by("end")
        .where(named("b"))
    )
    # the relaxed loop skips b3 and carries on; without the loop, b3 ends the match
    assert run(p, "c1 a2 b3 a4 a5 b6") == [[1, 2, 4, 5, 6], [1, 2, 4, 6], [1, 3]]


def test_one_or_more_followed_by_a_step_with_an_overlapping_condition():
    # the loop and the end step both accept "a": every split point is a match
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3], [1, 2, 3, 4]]


# --- greedy -----------------------------------------------------------------------------------


def test_greedy_loop_leaves_no_event_it_could_take_to_the_next_step():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3, 4]]


def test_greedy_zero_or_more():
    # GreedyITCase.testGreedyZeroOrMore-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .optional()
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3, 4]]


def test_greedy_zero_or_more_with_nothing_to_take():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .optional()
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 x2 b3") == [[1, 3]]


def test_greedy_times_range():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times(2, 3)
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 a4 b5") == [[1, 2, 3, 4, 5]]


def test_greedy_times_range_blocks_the_next_step_on_events_the_loop_condition_accepts():
    # once the loop is full (3 a's), the next a can neither be taken nor skipped by `end`:
    # greedy adds "not a" to every transition of the following step, so the run dies
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times(2, 3)
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 a4 a5 b6") == []


def test_greedy_times_or_more():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 a4 b5") == [[1, 2, 3, 4, 5]]


def test_greedy_has_no_effect_when_the_loop_is_last():
    # GreedyITCase.testEndWithZeroOrMoreGreedy / testEndWithOneOrMoreGreedy
    greedy = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .greedy()
    )
    plain = Pattern.begin("start").where(named("c")).followed_by("middle").where(named("a")).one_or_more()
    expected = [[1, 2], [1, 2, 3], [1, 2, 3, 4]]
    assert run(greedy, "c1 a2 a3 a4") == expected
    assert run(plain, "c1 a2 a3 a4") == expected


def test_greedy_optional_loop_at_the_end_still_emits_the_empty_match():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .optional()
        .greedy()
    )
    assert run(p, "c1 a2 a3") == [[1], [1, 2], [1, 2, 3]]


def test_greedy_consecutive_loop():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .consecutive()
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 x4 b5") == [[1, 2, 3, 5]]


def test_greedy_following_step_cannot_skip_an_event_the_loop_condition_accepts():
    # after the consecutive loop broke at x4, `end` may not skip a5 (greedy: "not a" on its ignore too)
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .consecutive()
        .greedy()
        .followed_by("end")
        .where(named("a", "b"))
    )
    assert run(p, "c1 a2 a3 x4 a5 b6") == []


# --- until ------------------------------------------------------------------------------------


def test_until_stops_the_loop_and_its_event_is_never_taken():
    # UntilConditionITCase.testUntilConditionFollowedByOneOrMore-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a", "u"))
        .one_or_more()
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 u4 a5 b6") == [[1, 2, 3, 6], [1, 2, 6]]


def test_until_at_the_end_of_the_pattern():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .until(named("u"))
    )
    assert run(p, "c1 a2 a3 u4 a5") == [[1, 2], [1, 2, 3]]


def test_until_with_consecutive():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .consecutive()
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 u4 b5") == [[1, 2, 3, 5], [1, 2, 5]]


def test_until_with_allow_combinations():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 u4 a5 b6") == [[1, 2, 3, 6], [1, 2, 6]]


def test_until_on_times_or_more():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times_or_more(2)
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 u3 a4 b5") == []
    assert run(p, "c1 a2 a3 u4 a5 b6") == [[1, 2, 3, 6]]


def test_until_on_optional_loop():
    # UntilConditionITCase.testUntilConditionOnZeroOrMore-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .optional()
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 u3 a4 b5") == [[1, 2, 5], [1, 5]]


def test_until_does_not_apply_before_the_first_repetition():
    # the until condition guards the loop's inner states only: an until-event before the
    # first repetition is skipped like any other non-matching event
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .optional()
        .until(named("u"))
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 u2 a3 b4") == [[1, 3, 4], [1, 4]]


def test_until_with_greedy():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .greedy()
        .until(named("u"))
        .followed_by("end")
        .where(named("a", "b", "u"))
    )
    assert run(p, "c1 a2 a3 u4 b5") == [[1, 2, 3, 4]]
