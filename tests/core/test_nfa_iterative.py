"""Iterative conditions (IterativeConditionsITCase) and events shared between steps and matches
(SameElementITCase)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.nfa import context as context_module

from .helpers import (
    Event,
    dict_matches,
    events,
    fewer_than,
    named,
    price_above_avg_of,
    price_above_last_of,
    run,
    run_full,
)


def test_get_events_for_pattern_excludes_the_candidate_event():
    # with the candidate included, "price > last taken price" could never hold for a repetition
    p = Pattern.begin("a").where(named("a")).one_or_more().where(price_above_last_of("a"))
    assert run(p, "a1$1 a2$3 a3$2 a4$5") == [[1], [1, 2], [1, 2, 4], [2], [2, 4], [3], [3, 4], [4]]


def test_condition_reading_an_earlier_step():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .one_or_more()
        .followed_by("b")
        .where(named("b"))
        .where(price_above_avg_of("a"))
    )
    # [a1]: avg 1, b3 qualifies; [a1 a2]: avg 3, b3 is skipped and b4 qualifies; [a2]: avg 5, none
    assert run(p, "a1$1 a2$5 b3$2 b4$4") == [[1, 2, 4], [1, 3]]


def test_condition_counting_its_own_events_bounds_a_loop():
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .where(fewer_than("b", 2))
    )
    assert run(p, "a1 b2 b3 b4") == [[1, 2], [1, 2, 3]]


def test_an_iterative_negation_after_a_take_is_judged_for_each_run():
    # Runs [a1 a2] and [a2] wait in a's state; b3 takes b for both, and the search for a final
    # state after that TAKE passes not_next's edge, whose condition reads each run's own a's:
    # 1+1+5 < 7 fails for [a1 a2] (it completes), 1+5 < 7 holds for [a1] and [a2] (they wait).
    # Recorded by Flink 2.3 (tests/oracle/samples/basic.json, flat-negated-tail).
    def a_prices_and_this_below_7(e, ctx):
        return sum(x.price for x in ctx.get_events_for_pattern("a")) + e.price < 7

    p = (
        Pattern.begin("a")
        .where(named("a"))
        .one_or_more()
        .followed_by("b")
        .where(named("b"))
        .not_next("n")
        .where(a_prices_and_this_below_7)
        .followed_by("c")
        .where(named("c"))
        .optional()
    )
    assert dict_matches(p, "a1$1 a2$1 b3$5") == [{"a": [1, 2], "b": [3]}]


def test_get_events_for_pattern_is_empty_for_a_step_without_events():
    seen = []

    def cond(e, ctx):
        seen.append(
            (
                e.id,
                tuple(x.id for x in ctx.get_events_for_pattern("b")),
                tuple(x.id for x in ctx.get_events_for_pattern("a")),
            )
        )
        return e.name == "a"

    p = Pattern.begin("a").where(cond).followed_by("b").where(named("b"))
    run(p, "a1 a2")
    # only the start step asks this condition, and a start run has taken nothing yet
    assert sorted(set(seen)) == [(1, (), ()), (2, (), ())]


def test_ctx_timestamp_is_the_candidates_timestamp():
    seen = []

    def cond(e, ctx):
        seen.append((e.id, ctx.timestamp()))
        return True

    p = Pattern.begin("a").where(named("a")).followed_by("b").where(cond)
    run(p, "a1@10 x2@20 x3@35")
    assert set(seen) == {(2, 20)}  # (conditions may be asked more than once per event)


def test_iterative_condition_as_a_two_argument_lambda():
    # a b whose price exceeds the sum of all a's taken so far
    p = (
        Pattern.begin("a")
        .where(lambda e: e.name == "a")
        .one_or_more()
        .followed_by("b")
        .where(
            lambda e, ctx: e.name == "b" and e.price > sum(x.price for x in ctx.get_events_for_pattern("a"))
        )
    )
    assert run(p, "a1$1 a2$2 b3$2 b4$5") == [[1, 2, 4], [1, 3], [2, 4]]


def test_iterative_condition_in_a_not_followed_by_reads_the_earlier_steps():
    # FLINK-15964: the negated step may read events of earlier steps
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("n")
        .where(price_above_last_of("a"))
        .followed_by("c")
        .where(named("c"))
    )
    assert run(p, "a1$5 x2$3 c3$1") == [[1, 3]]
    assert run(p, "a1$5 x2$9 c3$1") == []


def test_iterative_condition_sees_only_its_own_runs_events():
    # two overlapping runs: each compares with its own a
    p = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by_any("b")
        .where(named("b"))
        .where(price_above_last_of("a"))
    )
    assert run(p, "a1$1 a2$5 b3$3 b4$9") == [[1, 3], [1, 4], [2, 4]]


# --- the same element in several steps and matches ----------------------------------------------


def test_an_event_can_serve_different_steps_in_different_matches():
    p = Pattern.begin("a").where(named("x")).followed_by_any("b").where(named("x"))
    assert run(p, "x1 x2 x3") == [[1, 2], [1, 3], [2, 3]]


def test_equal_events_are_distinct_occurrences():
    e = events("a1")[0]
    p = Pattern.begin("a").where(named("a")).followed_by("b").where(named("a"))
    r = run_full(p, [e, e, e])
    assert r.matches == [[1, 1], [1, 1]]


def test_a_run_in_a_loops_ignore_state_cannot_proceed():
    # SameElementITCase.testIterativeConditionWSameElement-like: the run that skipped m3
    # sits in the loop's ignore state and must take another m before it may finish;
    # [s1 m2 e4] therefore appears once, not twice
    p = (
        Pattern.begin("s")
        .where(named("s"))
        .followed_by("m")
        .where(named("m"))
        .one_or_more()
        .allow_combinations()
        .followed_by("e")
        .where(named("e"))
    )
    assert run(p, "s1 m2 m3 e4") == [[1, 2, 3, 4], [1, 2, 4]]


def test_followed_by_any_allow_combinations_is_exponential():
    # SameElementITCase.testZeroOrMoreSameElement-like: every subset of the a's
    p = (
        Pattern.begin("s")
        .where(named("s"))
        .followed_by_any("m")
        .where(named("a"))
        .one_or_more()
        .allow_combinations()
        .optional()
        .followed_by("e")
        .where(named("e"))
    )
    assert len(run(p, "s1 a2 a3 a4 a5 a6 e7")) == 32


def test_an_event_matching_two_consecutive_steps_is_taken_by_one_of_them_per_run():
    p = Pattern.begin("a").where(named("x")).one_or_more().followed_by("b").where(named("x"))
    assert dict_matches(p, "x1 x2") == [{"a": [1], "b": [2]}]


# -- runs hand their partial match on (a cache for iterative conditions) -------------------------

_SHAPES = {
    "rising loop, then b": lambda: (
        Pattern.begin("a")
        .where(named("a"))
        .one_or_more()
        .where(price_above_avg_of("a"))
        .followed_by("b")
        .where(named("b"))
        .where(price_above_last_of("a"))
    ),
    "counted loop after a": lambda: (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by_any("b")
        .where(named("b"))
        .times_or_more(1)
        .allow_combinations()
        .where(fewer_than("b", 3))
        .followed_by("c")
        .where(price_above_last_of("b"))
    ),
    "optional step read later": lambda: (
        Pattern.begin("a")
        .where(named("a"))
        .optional()
        .followed_by("b")
        .where(named("b"))
        .times(1, 3)
        .where(price_above_avg_of("a"))
        .next("c")
        .where(price_above_avg_of("b"))
        .within(12)
    ),
}


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(_SHAPES)),
    st.lists(st.tuples(st.sampled_from("abcx"), st.integers(1, 9), st.integers(0, 2)), max_size=14),
)
def test_a_cached_partial_match_is_what_the_buffer_gives(shape, raw):
    # conditions must see what extracting the run's path from the shared buffer gives, for
    # every run, including runs made by IGNORE or TAKE from a run whose match was cached
    evs, ts = [], 0
    for i, (name, price, gap) in enumerate(raw, start=1):
        ts += gap
        evs.append(Event(name, price=price, ts=ts, id=i))

    def extracted_every_time(buffer, run):
        if run.previous_entry is None:
            return {}
        paths = buffer.extract_patterns(run.previous_entry, run.version)
        return buffer.materialize_match(paths[0]) if paths else {}

    cached = run_full(_SHAPES[shape](), evs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(context_module, "current_match", extracted_every_time)
        mp.setattr(context_module, "built_match", extracted_every_time)
        uncached = run_full(_SHAPES[shape](), evs)
    assert [(x.at, x.match) for x in cached.emitted] == [(x.at, x.match) for x in uncached.emitted]
    assert cached.timed_out == uncached.timed_out
