"""CepOperator in event time: buffering, watermarks, late data, timeouts, keys."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep.pattern import IllegalArgumentException, Pattern, WithinType
from flowcep.runtime import LONG_MAX, Output

from .support import Ev, a_not_followed_by_b, ab_within, abc_within, brief, events, is_, operator, run


def test_a_match_comes_out_when_the_watermark_passes_its_last_event() -> None:
    op = operator(abc_within(10))  # out_of_orderness=0: watermark = max timestamp - 1
    assert op.process_element(Ev("a", 1)) == []
    assert op.process_element(Ev("b", 2)) == []
    assert op.process_element(Ev("c", 4)) == []
    assert brief(op.process_element(Ev("x", 5))) == [("match", "k", "a1 b2 c4", 4)]


def test_the_match_value_maps_step_names_to_events_in_pattern_order() -> None:
    op = operator(abc_within(10))
    [match] = run(op, events("a1 b2 c4"))
    assert match == Output("match", "k", {"a": [Ev("a", 1)], "b": [Ev("b", 2)], "c": [Ev("c", 4)]}, 4)
    assert list(match.value) == ["a", "b", "c"]


def test_the_generated_watermark_is_max_timestamp_minus_out_of_orderness_minus_one() -> None:
    op = operator(abc_within(10), out_of_orderness=5)
    op.process_element(Ev("x", 10))
    assert op.current_watermark == 4
    op.process_element(Ev("x", 8))  # not a new maximum: the watermark stays
    assert op.current_watermark == 4
    op.process_element(Ev("x", 12))
    assert op.current_watermark == 6


@pytest.mark.parametrize("delay", ["5ms", "5 milliseconds", "PT0.005S", 5.0, timedelta(milliseconds=5)])
def test_out_of_orderness_is_read_as_every_duration_is(delay: Any) -> None:
    op = operator(abc_within(10), out_of_orderness=delay)
    op.process_element(Ev("x", 10))
    assert op.current_watermark == 4


def test_a_negative_out_of_orderness_is_refused_in_any_form() -> None:
    with pytest.raises(IllegalArgumentException, match="cannot be negative"):
        operator(abc_within(10), out_of_orderness="-5ms")


def test_out_of_order_input_within_the_bound_gives_the_sorted_result() -> None:
    op = operator(abc_within(10), out_of_orderness=5)
    assert brief(run(op, events("c4 a1 b2"))) == [("match", "k", "a1 b2 c4", 4)]


def test_out_of_order_input_gives_the_same_per_key_outputs_as_sorted_input() -> None:
    rnd = random.Random(7)
    stream = [Ev(rnd.choice("abcx"), t, rnd.choice("pq")) for t in range(0, 400, 2)]
    shuffled = sorted(stream, key=lambda e: e.ts + rnd.randint(0, 20))  # disorder of at most 20 ms

    sorted_out = run(operator(abc_within(15)), stream)
    shuffled_out = run(operator(abc_within(15), out_of_orderness=20), shuffled)

    def per_key(outputs: list[Output]) -> dict[str, list[tuple[str, str]]]:
        result: dict[str, list[tuple[str, str]]] = {}
        for kind, key, text, _ in brief(outputs):
            result.setdefault(key, []).append((kind, text))
        return result

    assert per_key(shuffled_out) == per_key(sorted_out)
    assert sorted_out  # the comparison is not vacuous


def test_a_match_started_at_timestamp_0_times_out_at_the_end_only_if_a_timer_of_its_key_fires() -> None:
    # Flink 2.3 registers no window timer for a partial match that starts at ts <= 0: key p's
    # a0, processed before the end of input, is never advanced again; still buffered at the
    # end (out_of_orderness 6), its element's timer advances it to the final watermark
    in_order = run(operator(abc_within(15)), [Ev("a", 0, "p"), Ev("a", 1, "q")])
    assert brief(in_order) == [("timeout", "q", "a1", 16)]
    buffered = run(operator(abc_within(15), out_of_orderness=6), [Ev("a", 0, "p"), Ev("a", 1, "q")])
    assert brief(buffered) == [("timeout", "p", "a0", 15), ("timeout", "q", "a1", 16)]


@settings(max_examples=100, deadline=None)
@given(
    # from 1: a match started at 0 times out depending on arrival (the test above)
    raw=st.lists(st.tuples(st.sampled_from("abcx"), st.integers(1, 60), st.sampled_from("pq")), max_size=40),
    jitter=st.lists(st.integers(0, 6), min_size=40, max_size=40),
)
def test_any_disorder_within_the_bound_gives_the_per_key_outputs_of_sorted_input(
    raw: list[tuple[str, int, str]], jitter: list[int]
) -> None:
    arrived = [
        Ev(name, ts, key)
        for (name, ts, key), _ in sorted(zip(raw, jitter, strict=False), key=lambda p: p[0][1] + p[1])
    ]
    in_order = sorted(arrived, key=lambda e: e.ts)  # stable: equal timestamps keep their arrival order

    def per_key(outputs: list[Output]) -> dict[str, list[tuple[str, str]]]:
        result: dict[str, list[tuple[str, str]]] = {}
        for kind, key, text, _ in brief(outputs):
            result.setdefault(key, []).append((kind, text))
        return result

    expected = per_key(run(operator(abc_within(15)), in_order))
    assert per_key(run(operator(abc_within(15), out_of_orderness=6), arrived)) == expected


def test_an_element_that_cannot_start_a_match_creates_no_key_state() -> None:
    op = operator(abc_within(10), key_by=lambda e: e.key)
    op.process_elements([Ev("b", 1, "p"), Ev("c", 2, "q"), Ev("x", 3, "r")])
    assert op.stats()["keys"] == 0 and op.stats()["buffered_events"] == 0
    op.process_element(Ev("a", 4, "s"))
    assert op.stats()["keys"] == 1


def test_an_element_ahead_of_the_watermark_is_kept_for_the_earlier_elements_still_to_come() -> None:
    # c4 cannot start a match, but a1 and b2 may still come (out_of_orderness 5) and need it
    op = operator(abc_within(10), out_of_orderness=5)
    op.process_element(Ev("c", 4))
    assert op.stats()["buffered_events"] == 1


def test_stats_count_every_element_buffered_at_one_timestamp() -> None:
    op = operator(abc_within(10), out_of_orderness=5)
    op.process_elements([Ev("a", 4), Ev("b", 4), Ev("c", 4), Ev("a", 6)])
    assert op.stats()["buffered_events"] == 4


@settings(max_examples=100, deadline=None)
@given(
    raw=st.lists(st.tuples(st.sampled_from("abcx"), st.integers(0, 30), st.sampled_from("pqr")), max_size=40),
    out_of_orderness=st.sampled_from([None, 0, 3]),
)
def test_dropping_elements_that_start_nothing_changes_no_output(
    raw: list[tuple[str, int, str]], out_of_orderness: int | None
) -> None:
    arrived = [Ev(name, ts, key) for name, ts, key in raw]
    with_filter = operator(abc_within(8), key_by=lambda e: e.key, out_of_orderness=out_of_orderness)
    without = operator(abc_within(8), key_by=lambda e: e.key, out_of_orderness=out_of_orderness)
    without._starts_nothing = lambda event: False  # every element takes the normal path
    outputs = []
    for op in (with_filter, without):
        out = op.process_elements(arrived)
        if out_of_orderness is None:
            out += op.process_watermark(15)
        out += op.flush()
        per_key: dict[str, list[tuple[Any, ...]]] = {}
        for item in brief(out):
            per_key.setdefault(item[1], []).append(item)
        outputs.append(per_key)
    # per key, the same outputs in the same order (keys due at one timer may run in another
    # order: a key's state, and its tie-breaking rank, starts with its first useful element)
    assert outputs[0] == outputs[1]


def test_an_element_at_or_before_the_watermark_is_late() -> None:
    op = operator(abc_within(10))
    op.process_element(Ev("a", 5))  # watermark 4
    assert op.process_element(Ev("b", 4)) == [Output("late", "k", Ev("b", 4), 4)]
    assert op.process_element(Ev("b", 3)) == [Output("late", "k", Ev("b", 3), 3)]
    assert op.stats()["late"] == 2


def test_late_elements_do_not_reach_the_pattern() -> None:
    op = operator(ab_within(10))
    outputs = run(op, [Ev("a", 5), Ev("x", 7), Ev("b", 6)])  # b6 is late (watermark 6)
    assert brief(outputs) == [("late", "k", "b6", 6), ("timeout", "k", "a5", 15)]


def test_elements_after_flush_are_late() -> None:
    op = operator(ab_within(10))
    op.flush()
    assert op.process_element(Ev("a", 1)) == [Output("late", "k", Ev("a", 1), 1)]


def test_equal_timestamps_are_processed_in_arrival_order() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))
    op = operator(pattern)
    assert run(op, [Ev("b", 1), Ev("a", 1)]) == []
    op = operator(pattern)
    assert brief(run(op, [Ev("a", 1), Ev("b", 1)])) == [("match", "k", "a1 b1", 1)]


def test_a_comparator_orders_elements_with_equal_timestamps() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))

    def by_name(x: Ev, y: Ev) -> int:
        return (x.name > y.name) - (x.name < y.name)

    op = operator(pattern, comparator=by_name)
    assert brief(run(op, [Ev("b", 1), Ev("a", 1)])) == [("match", "k", "a1 b1", 1)]


def test_a_comparator_can_be_an_object_with_a_compare_method() -> None:
    class ByName:
        def compare(self, x: Ev, y: Ev) -> int:
            return (x.name > y.name) - (x.name < y.name)

    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))
    op = operator(pattern, comparator=ByName())
    assert brief(run(op, [Ev("b", 1), Ev("a", 1)])) == [("match", "k", "a1 b1", 1)]


def test_the_comparator_sort_is_stable() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(lambda e: e.name == "b" and e.value == 2)
    op = operator(pattern, comparator=lambda x, y: 0)  # everything equal: arrival order kept
    outputs = run(op, [Ev("a", 1), Ev("b", 1, value=2), Ev("b", 1, value=3)])
    assert [o.value["b"][0].value for o in outputs] == [2]


def test_a_comparator_orders_equal_timestamps_behind_an_earlier_buffered_one() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))

    def by_name(x: Ev, y: Ev) -> int:
        return (x.name > y.name) - (x.name < y.name)

    op = operator(pattern, out_of_orderness=None, comparator=by_name)
    for e in [Ev("x", 1), Ev("b", 2), Ev("a", 2), Ev("b", 3)]:  # all buffered until the watermark
        assert op.process_element(e) == []
    assert brief(op.process_watermark(10)) == [("match", "k", "a2 b2", 2)]


def test_without_out_of_orderness_only_explicit_watermarks_release_elements() -> None:
    op = operator(abc_within(10), out_of_orderness=None)
    for e in events("a1 b2 c4 x9"):
        assert op.process_element(e) == []
    assert op.process_watermark(3) == []
    assert brief(op.process_watermark(4)) == [("match", "k", "a1 b2 c4", 4)]


def test_a_watermark_that_does_not_advance_is_ignored() -> None:
    op = operator(abc_within(10), out_of_orderness=None)
    op.process_watermark(10)
    assert op.process_watermark(5) == []
    assert op.current_watermark == 10


def test_an_explicit_timestamp_overrides_the_extractor() -> None:
    op = operator(ab_within(10), timestamp=None)
    op.process_element(Ev("a", 0), 100)
    op.process_element(Ev("b", 0), 105)
    assert brief(op.flush()) == [("match", "k", "a0 b0", 105)]


def test_a_partial_match_times_out_when_the_watermark_reaches_start_plus_window() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    assert op.process_watermark(10) == []
    assert op.process_watermark(11) == [Output("timeout", "k", {"a": [Ev("a", 1)]}, 11)]


def test_the_timeout_timestamp_is_start_plus_window_not_the_watermark() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    assert brief(op.process_watermark(500)) == [("timeout", "k", "a1", 11)]


def test_a_firing_ends_by_advancing_to_the_watermark_even_at_its_last_timestamp() -> None:
    # Flink (oracle case s20261123-432): the run that skips the optional p1 on a8 waits in p3
    # with previous timestamp 1, so it is due at 2 = the watermark and the last element's time
    pattern = (
        Pattern.begin("p0")
        .followed_by("p1")
        .optional()
        .followed_by("p3")
        .where(is_("b"))
        .within(1, WithinType.PREVIOUS_AND_CURRENT)
    )
    op = operator(pattern, out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_element(Ev("a", 2))
    assert brief(op.process_watermark(2)) == [("timeout", "k", "a1", 2)]
    # the run that took a2 as p1 is due at 3, but Flink has no timer for it: it stays
    assert brief(op.process_watermark(LONG_MAX)) == []


def test_a_match_spanning_exactly_the_window_is_not_a_match() -> None:
    op = operator(ab_within(10))
    assert brief(run(op, events("a1 b11"))) == [("timeout", "k", "a1", 11)]
    op = operator(ab_within(10))
    assert brief(run(op, events("a1 b10"))) == [("match", "k", "a1 b10", 10)]


def test_a_trailing_not_followed_by_completes_when_the_window_has_passed() -> None:
    op = operator(a_not_followed_by_b(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    assert op.process_watermark(10) == []
    assert brief(op.process_watermark(11)) == [("match", "k", "a1", 11)]


def test_a_trailing_not_followed_by_is_vetoed_by_the_forbidden_event() -> None:
    op = operator(a_not_followed_by_b(10))
    assert run(op, events("a1 b5")) == []


def test_flush_releases_pending_not_followed_by_matches_and_timeouts() -> None:
    op = operator(a_not_followed_by_b(10), key_by=lambda e: e.key)
    op.process_element(Ev("a", 1))
    assert brief(op.flush()) == [("match", "k", "a1", LONG_MAX)]

    op = operator(ab_within(10))
    op.process_element(Ev("a", 1))
    assert brief(op.flush()) == [("timeout", "k", "a1", 11)]


def test_flush_of_an_empty_operator_gives_nothing() -> None:
    op = operator(ab_within(10))
    assert op.flush() == []
    assert op.flush() == []


def test_matches_of_one_advance_come_before_its_timeouts() -> None:
    pattern = (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by("c")
        .where(is_("c"))
        .not_followed_by("b")
        .where(is_("b"))
        .within(10)
    )
    op = operator(pattern, out_of_orderness=None)
    run(op, events("a1 c2 a3"), flush=False)
    assert brief(op.process_watermark(20)) == [("match", "k", "a1 c2", 20), ("timeout", "k", "a3", 13)]


def test_keys_are_matched_independently() -> None:
    op = operator(abc_within(10), out_of_orderness=None)
    stream = [
        Ev("a", 1, "p"),
        Ev("a", 2, "q"),
        Ev("c", 3, "q"),
        Ev("b", 4, "q"),
        Ev("b", 5, "p"),
        Ev("c", 6, "p"),
    ]
    run(op, stream, flush=False)
    assert brief(op.process_watermark(100)) == [("match", "p", "a1 b5 c6", 6), ("timeout", "q", "a2 b4", 12)]


def test_keys_due_at_one_watermark_run_in_order_of_their_first_buffered_timestamp() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    run(op, [Ev("a", 2, "p"), Ev("b", 3, "p"), Ev("a", 1, "q"), Ev("b", 5, "q")], flush=False)
    assert brief(op.process_watermark(8)) == [("match", "q", "a1 b5", 5), ("match", "p", "a2 b3", 3)]


def test_keys_with_equal_first_timestamps_run_in_order_of_first_appearance() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    run(op, [Ev("a", 1, "p"), Ev("a", 1, "q"), Ev("b", 3, "q"), Ev("b", 2, "p")], flush=False)
    assert brief(op.process_watermark(8)) == [("match", "p", "a1 b2", 2), ("match", "q", "a1 b3", 3)]


def test_the_keys_due_at_one_time_are_sorted_by_first_appearance_as_ints_or_by_key() -> None:
    from flowcep.runtime.keystate import NOT_DUE, KeyState
    from flowcep.runtime.schedule import due_by_seq  # (PyPy's way, also here)

    rnd = random.Random(3)
    for seq_limit in (10_000, 1 << 62):  # 1 << 62: seq and place need more than 62 bits
        keys = [KeyState(f"k{i}", seq, None, None) for i, seq in enumerate(rnd.sample(range(10_000), 1_000))]
        for ks in keys:
            ks.due = 5
        keys[7].due = 9  # listed at 5 but re-scheduled at 9: not due at 5
        listed = [*keys, keys[3]]  # keys[3] listed twice: leaves once
        expected = sorted((ks for ks in keys if ks is not keys[7]), key=lambda ks: ks.seq)
        assert due_by_seq(listed, 5, seq_limit) == expected
        assert all(ks.due == NOT_DUE for ks in expected) and keys[7].due == 9


def test_keys_run_in_the_order_of_their_earliest_due_timer() -> None:
    # Flink 2.3's CepOperator registers timers only at buffered timestamps and at ts + window
    # (no timer at watermark + 1, as older versions had): q's element timer at 3 fires before
    # p's at 8, although p holds a partial match since the previous watermark.
    op = operator(abc_within(20), out_of_orderness=None)
    op.process_element(Ev("a", 1, "p"))
    op.process_watermark(1)
    run(
        op, [Ev("a", 3, "q"), Ev("b", 4, "q"), Ev("c", 5, "q"), Ev("b", 8, "p"), Ev("c", 9, "p")], flush=False
    )
    assert brief(op.process_watermark(10)) == [("match", "q", "a3 b4 c5", 5), ("match", "p", "a1 b8 c9", 9)]


def test_a_key_with_nothing_pending_is_dropped() -> None:
    op = operator(abc_within(10))
    run(op, events("a1 b2 c4"))
    assert op.stats()["keys"] == 0
    assert not op.has_state()


def test_a_key_with_a_partial_match_is_kept_until_it_times_out() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_watermark(5)
    assert op.has_state()
    assert op.stats()["partial_matches"] == 1
    op.process_watermark(11)
    assert not op.has_state()


def test_next_deadline_is_the_first_buffered_timestamp_or_the_next_timeout() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    assert op.next_deadline() is None
    op.process_element(Ev("a", 5))
    assert op.next_deadline() == 5
    op.process_watermark(5)
    assert op.next_deadline() == 15
    op.process_element(Ev("x", 7))
    assert op.next_deadline() == 7


def test_a_window_timer_that_fired_is_no_deadline_any_more() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_watermark(1)  # a1 starts a partial match: a window timer at 11
    op.process_element(Ev("x", 50))
    assert op.next_deadline() == 11
    assert brief(op.process_watermark(11)) == [("timeout", "k", "a1", 11)]
    assert op.next_deadline() == 50


def test_a_window_timer_registered_behind_the_watermark_is_no_deadline() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_element(Ev("x", 150))
    # a1 registers its window timer (11) while the watermark is 100: it fires at once
    assert brief(op.process_watermark(100)) == [("timeout", "k", "a1", 11)]
    assert op.next_deadline() == 150


def test_a_key_that_empties_keeps_its_window_timer_until_it_fires() -> None:
    # the partial match a1 registers a window timer at 11; b5 completes the match and empties
    # the key: its state goes, but, as in Flink's CepOperator, the timer at 11 stays registered
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_watermark(1)
    assert op.next_deadline() == 11
    op.process_element(Ev("b", 5))
    assert op.next_deadline() == 5
    assert brief(op.process_watermark(5)) == [("match", "k", "a1 b5", 5)]
    assert op.stats()["keys"] == 0 and op.stats()["partial_matches"] == 0
    assert op.has_state()
    assert op.next_deadline() == 11
    assert op.process_watermark(20) == []
    assert op.next_deadline() is None
    assert not op.has_state()


def test_a_key_listed_twice_at_its_timeout_runs_once_there(monkeypatch: pytest.MonkeyPatch) -> None:
    # a1 schedules the key at its timeout (11); x5 schedules it earlier (5) and, once fired,
    # back at 11, where it is then listed twice: the timeout comes once, from one firing
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    op.process_watermark(1)
    op.process_element(Ev("x", 5))
    assert op.process_watermark(5) == []
    assert op.next_deadline() == 11
    fired: list[Any] = []
    real = type(op)._fire_key  # noqa: SLF001

    def fire_key(self: Any, ks: Any, watermark: int, out: list[Output]) -> None:
        fired.append(ks.key)
        real(self, ks, watermark, out)

    monkeypatch.setattr(type(op), "_fire_key", fire_key)
    assert brief(op.process_watermark(11)) == [("timeout", "k", "a1", 11)]
    assert fired == ["k"]
    assert op.next_deadline() is None and not op.has_state()


def test_a_watermark_visits_only_keys_with_something_due(monkeypatch: pytest.MonkeyPatch) -> None:
    op = operator(ab_within(1000), out_of_orderness=None)
    for i in range(2000):
        op.process_element(Ev("a", 1, f"k{i}"))
    op.process_watermark(1)
    calls = []
    real = op.nfa.advance_time

    def spy(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(op.nfa, "advance_time", spy)
    for wm in range(2, 500):
        op.process_watermark(wm)
    assert calls == []
    assert len(op.process_watermark(1001)) == 2000


def test_stats_count_events_matches_timeouts_and_late_events() -> None:
    op = operator(ab_within(10))
    run(op, [Ev("a", 1), Ev("b", 2), Ev("a", 5), Ev("x", 30), Ev("b", 3)])
    stats = op.stats()
    assert (stats["events_in"], stats["matches"], stats["timeouts"], stats["late"]) == (5, 1, 1, 1)
    assert (
        stats["keys"],
        stats["partial_matches"],
        stats["buffered_events"],
        stats["shared_buffer_entries"],
    ) == (
        0,
        0,
        0,
        0,
    )


def test_stats_gauges_show_buffered_elements_and_live_entries() -> None:
    op = operator(abc_within(100), out_of_orderness=None)
    run(op, events("a1 b2"), flush=False)
    op.process_watermark(2)
    op.process_element(Ev("x", 50))
    stats = op.stats()
    assert stats["buffered_events"] == 1
    assert stats["partial_matches"] == 1  # "a1 b2", waiting for c
    assert stats["shared_buffer_entries"] == 2
    assert stats["keys"] == 1


def test_process_elements_returns_the_outputs_of_all_elements() -> None:
    op = operator(ab_within(10))
    assert brief(op.process_elements(events("a1 b2 x3"))) == [("match", "k", "a1 b2", 2)]


def test_without_timeout_handling_timed_out_partial_matches_are_not_reported() -> None:
    op = operator(ab_within(10), timeout_handling=False)
    assert run(op, events("a1 x20")) == []
    assert not op.has_state()


# ---------------------------------------------------------------- window timers outlive a key's state
# Flink's CepOperator clears a key's state when nothing is pending, but not the window timers it
# registered (at ts + window when an element at ts started a partial match). Such a timer still
# fires and advances the key's NFA if the key has state again by then. The answers below were
# recorded from Flink 2.3 (tests/oracle/samples/basic.json, ids i35-*): watermark = max(ts) - 1
# after each element, keyed by name of the key.


def _keyed_ev(spec: str) -> Ev:
    """``"a/A@90"``: an ``a`` of key ``A`` at 90."""
    name_key, ts = spec.split("@")
    name, key = name_key.split("/")
    return Ev(name, int(ts), key)


def _emitted(op: Any, stream: str) -> list[tuple[str, tuple[Any, ...]]]:
    """Each output with the element whose watermark released it ("end": the final one)."""
    out = []
    for spec in stream.split():
        out += [(spec, o) for o in brief(op.process_element(_keyed_ev(spec)))]
    return out + [("end", o) for o in brief(op.flush())]


def test_a_window_timer_left_by_an_emptied_key_releases_a_later_not_followed_by_match() -> None:
    a_not_c = (
        Pattern.begin("a")
        .where(is_("a"))
        .not_followed_by("c")
        .where(is_("c"))
        .within(1, WithinType.PREVIOUS_AND_CURRENT)
        .within(16)
    )
    op = operator(a_not_c)
    # A's state empties at watermark 100 ({a:[e0]} is released), its window timer 90 + 16 stays;
    # e2 starts a new pending match at 101, which that timer releases at watermark 106
    assert _emitted(op, "a/A@90 x/B@101 a/A@101 x/B@102 x/B@107") == [
        ("x/B@101", ("match", "A", "a90", 100)),
        ("x/B@107", ("match", "A", "a101", 106)),
    ]


def test_a_window_timer_left_by_an_emptied_key_reports_a_later_timeout() -> None:
    a_then_b = (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .within(1, WithinType.PREVIOUS_AND_CURRENT)
        .within(16)
    )
    op = operator(a_then_b)
    assert _emitted(op, "a/A@90 b/A@91 x/B@101 a/A@101 x/B@102 x/B@107") == [
        ("x/B@101", ("timeout", "A", "a90", 91)),
        ("x/B@107", ("timeout", "A", "a101", 102)),
    ]


def test_a_key_with_only_window_timers_left_holds_no_nfa_state_and_leaves_after_the_last() -> None:
    op = operator(ab_within(10), out_of_orderness=None)
    for i in range(100):
        op.process_element(Ev("a", 1, f"k{i}"))
        op.process_element(Ev("b", 2, f"k{i}"))
    # every key matched "a1 b2" and emptied; its window timers stay: 11, and 12 (Flink registers
    # one after every element of the firing in which a partial match started)
    assert len(op.process_watermark(2)) == 100
    assert op.stats()["keys"] == 0
    assert op.has_state() and op.next_deadline() == 11
    assert all(ks.state is None and ks.timers == [11, 12] for ks in op._idle.values())  # noqa: SLF001
    assert op.process_watermark(11) == []
    assert op.has_state() and op.next_deadline() == 12
    assert op.process_watermark(12) == []
    assert not op.has_state() and op.next_deadline() is None


def test_a_window_timer_that_fired_while_the_key_had_no_state_is_gone_when_it_comes_back() -> None:
    # the timer at 11 fires with nothing to advance; a3 at 12 then waits for its own timer, 22
    op = operator(ab_within(10), out_of_orderness=None)
    op.process_elements([Ev("a", 1), Ev("b", 2)])
    assert brief(op.process_watermark(2)) == [("match", "k", "a1 b2", 2)]
    assert op.process_watermark(11) == []
    op.process_element(Ev("a", 12))
    assert op.process_watermark(12) == []
    assert op.next_deadline() == 22
    assert brief(op.process_watermark(22)) == [("timeout", "k", "a12", 22)]
