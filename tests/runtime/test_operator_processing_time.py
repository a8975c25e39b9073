"""CepOperator in processing time, with an injected clock."""

from __future__ import annotations

from typing import Any

from flowcep.pattern import Pattern
from flowcep.runtime import CepOperator, Output

from .support import Ev, ab_within, brief, is_, operator


class Clock:
    """A hand-driven processing-time clock."""

    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def pt_operator(pattern: Pattern, clock: Clock, **kwargs: Any) -> CepOperator:
    return operator(pattern, processing_time=True, clock=clock, timestamp=None, **kwargs)


def test_each_element_is_processed_at_the_current_processing_time() -> None:
    clock = Clock(100)
    op = pt_operator(ab_within(10), clock)
    assert op.process_element(Ev("a", 0)) == []
    clock.now = 105
    assert brief(op.process_element(Ev("b", 0))) == [("match", "k", "a0 b0", 105)]


def test_event_timestamps_are_not_read_in_processing_time() -> None:
    clock = Clock(1)
    op = operator(ab_within(10), processing_time=True, clock=clock, timestamp=lambda e: 1 / 0)
    op.process_element(Ev("a", 0))
    assert brief(op.process_element(Ev("b", 0))) == [("match", "k", "a0 b0", 1)]


def test_processing_time_advances_a_key_only_when_its_next_element_arrives() -> None:
    clock = Clock(1)
    op = pt_operator(ab_within(10), clock)
    op.process_element(Ev("a", 0))
    clock.now = 50
    assert op.process_element(Ev("x", 0, key="other")) == []
    assert op.flush() == []
    assert brief(op.process_element(Ev("x", 0))) == [("timeout", "k", "a0", 11)]


def test_watermarks_are_ignored_in_processing_time() -> None:
    clock = Clock(1)
    op = pt_operator(ab_within(10), clock)
    op.process_element(Ev("a", 0))
    assert op.process_watermark(1000) == []
    assert op.has_state()


def test_no_element_is_late_in_processing_time() -> None:
    clock = Clock(10)
    op = pt_operator(ab_within(10), clock)
    op.process_element(Ev("a", 500))
    assert brief(op.process_element(Ev("b", 1))) == [("match", "k", "a500 b1", 10)]


def test_a_clock_running_backwards_is_held_at_its_latest_value() -> None:
    clock = Clock(100)
    op = pt_operator(ab_within(10), clock)
    op.process_element(Ev("a", 0))
    clock.now = 90
    assert brief(op.process_element(Ev("b", 0))) == [("match", "k", "a0 b0", 100)]


def test_with_a_comparator_elements_of_one_millisecond_are_sorted_once_the_clock_moves_on() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))
    clock = Clock(7)
    op = pt_operator(pattern, clock, comparator=lambda x, y: (x.name > y.name) - (x.name < y.name))
    assert op.process_element(Ev("b", 0)) == []
    assert op.process_element(Ev("a", 0)) == []
    assert op.next_deadline() == 8
    clock.now = 8
    assert brief(op.process_watermark(0)) == [("match", "k", "a0 b0", 7)]


def test_with_a_comparator_flush_releases_the_buffered_elements() -> None:
    pattern = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))
    clock = Clock(7)
    op = pt_operator(pattern, clock, comparator=lambda x, y: (x.name > y.name) - (x.name < y.name))
    op.process_element(Ev("b", 0))
    op.process_element(Ev("a", 0))
    assert op.flush() == [Output("match", "k", {"a": [Ev("a", 0)], "b": [Ev("b", 0)]}, 7)]
    assert not op.has_state()


def test_with_a_comparator_keys_are_released_in_order_of_first_appearance() -> None:
    pattern = Pattern.begin("a").where(is_("a"))
    clock = Clock(5)
    op = pt_operator(pattern, clock, comparator=lambda x, y: 0)
    op.process_element(Ev("a", 0, "q"))  # q appears first
    op.process_element(Ev("a", 0, "p"))
    clock.now = 6
    op.process_element(Ev("a", 0, "r"))  # releases millisecond 5; r waits for 7
    op.process_element(Ev("a", 0, "p"))  # p's key, dropped after its match, appears anew
    clock.now = 7
    assert [(o.key, o.timestamp) for o in op.process_watermark(0)] == [("r", 6), ("p", 6)]
    op2 = pt_operator(pattern, Clock(5), comparator=lambda x, y: 0)
    op2.process_element(Ev("a", 0, "q"))
    op2.process_element(Ev("a", 0, "p"))
    assert [(o.key, o.timestamp) for o in op2.flush()] == [("q", 5), ("p", 5)]


def test_keys_without_pending_matches_are_dropped_in_processing_time() -> None:
    clock = Clock(1)
    op = pt_operator(ab_within(10), clock)
    for i in range(100):
        op.process_element(Ev("x", 0, key=f"k{i}"))
    assert op.stats()["keys"] == 0
