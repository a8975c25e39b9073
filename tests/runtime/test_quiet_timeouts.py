"""Opt-in, beyond Flink: in processing time, a partial match times out at start + window even
when no element arrives (``quiet_timeouts=True``). By default, as in Flink, only an arriving
element times partial matches out."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from flowcep.runtime import CEP, CepOperator

from .support import Ev, ab_within, brief


def clocked(now: list[int], **options: Any) -> CepOperator:
    return CepOperator(
        ab_within(100), key_by=lambda e: e.key, processing_time=True, clock=lambda: now[0], **options
    )


def test_advance_processing_time_times_out_a_partial_match_at_start_plus_window() -> None:
    now = [1_000]
    op = clocked(now, quiet_timeouts=True)
    op.process_element(Ev("a", 0, "x"))
    now[0] = 1_050
    op.process_element(Ev("a", 0, "y"))
    assert op.next_processing_timeout() == 1_100
    now[0] = 1_099
    assert op.advance_processing_time() == []
    now[0] = 1_120
    assert brief(op.advance_processing_time()) == [("timeout", "x", "a0", 1_100)]
    assert op.next_processing_timeout() == 1_150
    assert brief(op.advance_processing_time(1_200)) == [("timeout", "y", "a0", 1_150)]
    assert op.next_processing_timeout() is None
    assert op.stats()["keys"] == 0


def test_by_default_only_an_element_times_out_as_in_flink() -> None:
    now = [1_000]
    op = clocked(now)
    op.process_element(Ev("a", 0, "x"))
    now[0] = 5_000
    with pytest.raises(ValueError, match="quiet_timeouts=True"):
        op.advance_processing_time()
    assert op.stats()["partial_matches"] == 1
    assert brief(op.process_element(Ev("c", 0, "x"))) == [("timeout", "x", "a0", 1_100)]


def test_quiet_timeouts_need_processing_time() -> None:
    with pytest.raises(ValueError, match="processing time"):
        CepOperator(ab_within(100), quiet_timeouts=True)


def test_the_pull_api_times_out_while_the_input_waits_for_its_next_element() -> None:
    seen_timeout = threading.Event()
    log: list[str] = []

    def source() -> Iterator[Ev]:
        yield Ev("a", 0)
        log.append("waiting")
        # the next element comes only once the timeout came out (or after 10 s: then the test fails)
        log.append("timeout seen" if seen_timeout.wait(10) else "gave up")
        yield Ev("b", 0)

    result = CEP.pattern(source(), ab_within(30), processing_time=True, quiet_timeouts=True).select(
        lambda m: m, timeout_fn=lambda m, ts: [e.name for e in m["a"]]
    )
    timeouts = result.get_side_output(CEP.TIMED_OUT)
    assert next(timeouts) == ["a"]
    seen_timeout.set()
    assert list(result) == []  # the b came after the a had timed out
    assert log == ["waiting", "timeout seen"]


def test_the_pull_api_passes_on_the_inputs_error() -> None:
    def source() -> Iterator[Ev]:
        yield Ev("a", 0)
        raise OSError("the input broke")

    result = CEP.pattern(source(), ab_within(30), processing_time=True, quiet_timeouts=True).select(
        lambda m: m
    )
    with pytest.raises(OSError, match="the input broke"):
        list(result)
