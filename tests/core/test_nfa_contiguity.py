"""Contiguity between steps (next / followed_by / followed_by_any) and inside loops
(default relaxed / consecutive / allow_combinations): NFAITCase's testStrict*, testSkipTill*."""

import pytest

from flowcep import Pattern

from .helpers import always, named, run

# --- between single steps ---------------------------------------------------------------------


def test_next_requires_the_very_next_event():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    assert run(p, "a1 c2 b3 a4 b5") == [[4, 5]]


def test_followed_by_skips_non_matching_events_but_takes_the_first_matching_one():
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    assert run(p, "a1 c2 b3 a4 b5") == [[1, 3], [4, 5]]


def test_followed_by_any_branches_on_every_matching_event():
    p = Pattern.begin("a").where(named("a")).followed_by_any("b").where(named("b"))
    assert run(p, "a1 c2 b3 a4 b5") == [[1, 3], [1, 5], [4, 5]]


def test_every_event_starts_a_run_and_matches_overlap_without_skip():
    # NFAITCase.testNoConditionNFA: no conditions, followedBy takes the next event
    p = Pattern.begin("start").followed_by("end")
    assert run(p, "x1 x2 x3 x4 x5") == [[1, 2], [2, 3], [3, 4], [4, 5]]


def test_condition_less_followed_by_any_pairs_every_later_event():
    p = Pattern.begin("start").followed_by_any("end")
    assert run(p, "x1 x2 x3 x4") == [[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]]


def test_strict_chain_of_three():
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b")).next("c").where(named("c"))
    assert run(p, "a1 b2 c3 a4 b5 x6 c7 a8 b9 c10") == [[1, 2, 3], [8, 9, 10]]


def test_mixed_contiguity_chain():
    # a -> (relaxed) b -> (strict) c
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).next("c").where(named("c"))
    assert run(p, "a1 x2 b3 c4 b5 x6 c7") == [[1, 3, 4]]


def test_start_step_itself_has_no_ignore():
    # the start step only takes: a run cannot "wait" in the start state
    p = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    assert run(p, "x1 a2 x3 b4") == []


# --- inside and between loops ----------------------------------------------------------------
# start c, then `middle` a+ with the given between/inner contiguity, then followed_by end b.
# Stream: c1 a2 d3 a4 a5 d6 b7

LOOP_STREAM = "c1 a2 d3 a4 a5 d6 b7"

LOOP_CASES = {
    # (between, inner): expected matches
    ("followed_by", "relaxed"): [[1, 2, 4, 5, 7], [1, 2, 4, 7], [1, 2, 7]],
    ("followed_by", "consecutive"): [[1, 2, 7]],
    ("followed_by", "allow_combinations"): [[1, 2, 4, 5, 7], [1, 2, 4, 7], [1, 2, 5, 7], [1, 2, 7]],
    ("followed_by_any", "relaxed"): [
        [1, 2, 4, 5, 7],
        [1, 2, 4, 7],
        [1, 2, 7],
        [1, 4, 5, 7],
        [1, 4, 7],
        [1, 5, 7],
    ],
    ("followed_by_any", "consecutive"): [[1, 2, 7], [1, 4, 5, 7], [1, 4, 7], [1, 5, 7]],
    ("followed_by_any", "allow_combinations"): [
        [1, 2, 4, 5, 7],
        [1, 2, 4, 7],
        [1, 2, 5, 7],
        [1, 2, 7],
        [1, 4, 5, 7],
        [1, 4, 7],
        [1, 5, 7],
    ],
    ("next", "relaxed"): [[1, 2, 4, 5, 7], [1, 2, 4, 7], [1, 2, 7]],
    ("next", "consecutive"): [[1, 2, 7]],
    ("next", "allow_combinations"): [[1, 2, 4, 5, 7], [1, 2, 4, 7], [1, 2, 5, 7], [1, 2, 7]],
}


def loop_pattern(between: str, inner: str):
    p = Pattern.begin("start").where(named("c"))
    p = getattr(p, between)("middle").where(named("a")).one_or_more()
    if inner == "consecutive":
        p = p.consecutive()
    elif inner == "allow_combinations":
        p = p.allow_combinations()
    return p.followed_by("end").where(named("b"))


@pytest.mark.parametrize(("between", "inner"), sorted(LOOP_CASES))
def test_contiguity_between_and_inside_one_or_more(between, inner):
    assert run(loop_pattern(between, inner), LOOP_STREAM) == LOOP_CASES[(between, inner)]


@pytest.mark.parametrize("inner", ["relaxed", "consecutive", "allow_combinations"])
def test_next_before_a_loop_makes_only_the_first_repetition_strict(inner):
    # a gap between c and the first a kills every run, whatever the inner contiguity
    assert run(loop_pattern("next", inner), "c1 d2 a3 a4 b5") == []


def test_next_after_a_loop_requires_the_event_right_after_the_last_taken_one():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .next("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 b4") == [[1, 2, 3, 4]]
    assert run(p, "c1 a2 d3 a4 d5 b6") == []


def test_followed_by_any_after_a_loop_branches_on_every_end_candidate():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .consecutive()
        .followed_by_any("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 b3 b4") == [[1, 2, 3], [1, 2, 4]]


def test_relaxed_loop_yields_prefixes_not_subsets():
    # NFAITCase.testSkipTillNextOneOrMore-like: the loop cannot skip a matching a
    p = Pattern.begin("start").where(named("c")).followed_by("middle").where(named("a")).one_or_more()
    assert run(p, "c1 a2 a3 a4") == [[1, 2], [1, 2, 3], [1, 2, 3, 4]]


def test_allow_combinations_loop_yields_every_subset_in_order():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
    )
    assert run(p, "c1 a2 a3 a4") == [[1, 2], [1, 2, 3], [1, 2, 3, 4], [1, 2, 4]]


def test_followed_by_any_allow_combinations_loop_yields_every_non_empty_subset():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by_any("middle")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
    )
    assert run(p, "c1 a2 a3 a4") == [
        [1, 2],
        [1, 2, 3],
        [1, 2, 3, 4],
        [1, 2, 4],
        [1, 3],
        [1, 3, 4],
        [1, 4],
    ]


def test_consecutive_loop_stops_at_the_first_gap():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .consecutive()
    )
    assert run(p, "c1 a2 a3 d4 a5") == [[1, 2], [1, 2, 3]]


def test_loop_at_the_start_emits_every_run_and_prefix():
    p = Pattern.begin("a").where(named("a")).one_or_more()
    assert run(p, "a1 a2 a3") == [[1], [1, 2], [1, 2, 3], [2], [2, 3], [3]]


def test_consecutive_loop_at_the_start():
    p = Pattern.begin("a").where(named("a")).one_or_more().consecutive()
    assert run(p, "a1 x2 a3 a4") == [[1], [3], [3, 4], [4]]


def test_allow_combinations_loop_at_the_start():
    p = Pattern.begin("a").where(named("a")).one_or_more().allow_combinations()
    assert run(p, "a1 x2 a3 a4") == [[1], [1, 3], [1, 3, 4], [1, 4], [3], [3, 4], [4]]


# --- times between and inside ---------------------------------------------------------------


def test_times_repetitions_are_relaxed_by_default_even_after_next():
    # NFAITCase.testTimesNonStrictWithNext-like
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .next("middle")
        .where(named("a"))
        .times(2)
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 d3 a4 a5 b6") == [[1, 2, 4, 6]]


def test_times_consecutive_requires_adjacent_repetitions():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .next("middle")
        .where(named("a"))
        .times(2)
        .consecutive()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 d3 a4 a5 b6") == []
    assert run(p, "c1 a2 a3 d4 b5") == [[1, 2, 3, 5]]


def test_times_allow_combinations_chooses_any_repetitions():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .times(2)
        .allow_combinations()
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 a4 b5") == [[1, 2, 3, 5], [1, 2, 4, 5]]


def test_times_after_followed_by_any_starts_at_any_candidate():
    p = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by_any("middle")
        .where(named("a"))
        .times(2)
        .followed_by("end")
        .where(named("b"))
    )
    assert run(p, "c1 a2 a3 a4 b5") == [[1, 2, 3, 5], [1, 3, 4, 5]]


def test_always_true_condition_takes_everything_in_a_loop():
    p = Pattern.begin("a").where(named("a")).followed_by("rest").where(always()).times(2)
    assert run(p, "a1 x2 a3 x4") == [[1, 2, 3]]
