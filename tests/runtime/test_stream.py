"""CEP.pattern -> PatternStream -> select / flat_select / process, with side outputs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from flowcep.pattern import Pattern
from flowcep.runtime import (
    CEP,
    BadRecord,
    BadRecordError,
    Collector,
    Context,
    OutputTag,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
)

from .support import Ev, ab_within, abc_within, events, is_

E = events("a1 b2 c4 a20 b21 x40")


def names(match: dict[str, list[Ev]]) -> str:
    return " ".join(f"{e.name}{e.ts}" for evs in match.values() for e in evs)


def test_select_with_the_identity_gives_the_matches() -> None:
    result = list(CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).select(lambda m: m))
    assert result == [{"a": [Ev("a", 1)], "b": [Ev("b", 2)], "c": [Ev("c", 4)]}]


def test_select_applies_the_function_to_each_match() -> None:
    stream = CEP.pattern(events("a1 b2 a3 b4"), ab_within(10), timestamp=lambda e: e.ts)
    assert list(stream.select(names)) == ["a1 b2", "a3 b4"]


def test_events_can_be_an_unbounded_generator() -> None:
    def forever() -> Iterator[Ev]:
        for t in itertools.count():
            yield Ev("ab"[t % 2], t)

    result = CEP.pattern(forever(), ab_within(10), timestamp=lambda e: e.ts).select(names)
    assert list(itertools.islice(result, 3)) == ["a0 b1", "a2 b3", "a4 b5"]


def test_input_is_consumed_only_as_far_as_results_are_pulled() -> None:
    pulled: list[int] = []

    def source() -> Iterator[Ev]:
        for e in events("a1 b2 x3 a4 b5 x6 x7"):
            pulled.append(e.ts)
            yield e

    result = CEP.pattern(source(), ab_within(10), timestamp=lambda e: e.ts).select(names)
    assert next(result) == "a1 b2"
    assert pulled == [1, 2, 3]  # b2 is released by the watermark of x3


def test_key_by_partitions_the_stream() -> None:
    stream = [Ev("a", 1, "p"), Ev("a", 2, "q"), Ev("b", 3, "q"), Ev("b", 4, "p")]
    result = CEP.pattern(stream, ab_within(10), key_by=lambda e: e.key, timestamp=lambda e: e.ts)
    assert sorted(result.select(names)) == ["a1 b4", "a2 b3"]


def test_out_of_orderness_tolerates_disorder() -> None:
    stream = events("b3 a1 x9 c5")
    result = CEP.pattern(stream, abc_within(10), timestamp=lambda e: e.ts, out_of_orderness=5)
    assert list(result.select(names)) == ["a1 b3 c5"]


def test_flat_select_emits_through_the_collector() -> None:
    def both(match: dict[str, list[Ev]], out: Collector) -> None:
        for evs in match.values():
            for e in evs:
                out.collect(e.name)

    result = CEP.pattern(events("a1 b2"), ab_within(10), timestamp=lambda e: e.ts).flat_select(both)
    assert list(result) == ["a", "b"]


def test_select_with_a_timeout_function_sends_timeouts_to_the_timed_out_side_output() -> None:
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).select(
        names, timeout_fn=lambda partial, ts: f"{names(partial)} timed out at {ts}"
    )
    assert list(result) == ["a1 b2 c4"]
    assert list(result.get_side_output(CEP.TIMED_OUT)) == ["a20 b21 timed out at 30"]


def test_select_accepts_flinks_tag_timeout_select_arguments() -> None:
    tag = OutputTag("late-a")
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).select(tag, lambda p, ts: ts, names)
    assert list(result) == ["a1 b2 c4"]
    assert list(result.get_side_output(tag)) == [30]


def test_flat_select_with_a_timeout_function_collects_timeouts() -> None:
    def flat_timeout(partial: dict[str, list[Ev]], ts: int, out: Collector) -> None:
        out.collect(ts)
        out.collect(names(partial))

    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).flat_select(
        lambda m, out: out.collect(names(m)), timeout_fn=flat_timeout
    )
    assert list(result) == ["a1 b2 c4"]
    assert list(result.get_side_output(CEP.TIMED_OUT)) == [30, "a20 b21"]


def test_without_a_timeout_function_timeouts_are_not_reported() -> None:
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).select(names)
    assert list(result) == ["a1 b2 c4"]
    assert list(result.get_side_output(CEP.TIMED_OUT)) == []
    assert result.stats()["timeouts"] == 0


class Matches(PatternProcessFunction, TimedOutPartialMatchHandler):
    TIMEOUTS = OutputTag("timeouts")

    def __init__(self) -> None:
        self.opened = self.closed = False

    def open(self, context: Any = None) -> None:
        self.opened = True

    def close(self) -> None:
        self.closed = True

    def process_match(self, match: dict[str, list[Ev]], ctx: Context, out: Collector) -> None:
        out.collect((ctx.key, names(match), ctx.timestamp()))

    def process_timed_out_match(self, match: dict[str, list[Ev]], ctx: Context) -> None:
        ctx.output(self.TIMEOUTS, (ctx.key, names(match), ctx.timestamp()))


def test_process_gives_the_function_the_key_and_the_match_timestamp() -> None:
    fn = Matches()
    result = CEP.pattern(E, abc_within(10), key_by=lambda e: e.key, timestamp=lambda e: e.ts).process(fn)
    assert list(result) == [("k", "a1 b2 c4", 4)]
    assert list(result.get_side_output(Matches.TIMEOUTS)) == [("k", "a20 b21", 30)]
    assert fn.opened and fn.closed


def test_process_accepts_flinks_camel_case_method_names() -> None:
    class Camel(PatternProcessFunction, TimedOutPartialMatchHandler):
        def processMatch(self, match: Any, ctx: Context, out: Collector) -> None:  # noqa: N802
            out.collect(names(match))

        def processTimedOutMatch(self, match: Any, ctx: Context) -> None:  # noqa: N802
            ctx.output(CEP.TIMED_OUT, names(match))

    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).process(Camel())
    assert list(result) == ["a1 b2 c4"]
    assert list(result.getSideOutput(CEP.TIMED_OUT)) == ["a20 b21"]


def test_process_accepts_a_plain_function() -> None:
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).process(
        lambda match, ctx, out: out.collect(ctx.timestamp())
    )
    assert list(result) == [4]


def test_context_gives_the_processing_time_of_the_clock() -> None:
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts, clock=lambda: 12345).process(
        lambda match, ctx, out: out.collect(ctx.current_processing_time())
    )
    assert list(result) == [12345]


def test_late_events_go_to_the_late_data_side_output() -> None:
    stream = events("a5 b3 b6 a1")  # b3 and a1 are behind the watermark (4, then 5)
    result = CEP.pattern(stream, ab_within(10), timestamp=lambda e: e.ts).select(names)
    assert list(result) == ["a5 b6"]
    assert list(result.get_side_output(CEP.LATE_DATA)) == [Ev("b", 3), Ev("a", 1)]


def test_side_output_late_data_chooses_the_tag() -> None:
    tag = OutputTag("too-late")
    stream = CEP.pattern(events("a5 b3"), ab_within(10), timestamp=lambda e: e.ts).side_output_late_data(tag)
    result = stream.select(names)
    assert list(result) == []
    assert list(result.get_side_output(tag)) == [Ev("b", 3)]
    assert list(result.get_side_output(CEP.LATE_DATA)) == []


def test_a_side_output_can_be_read_before_the_main_output() -> None:
    result = CEP.pattern(events("a5 b3 b6"), ab_within(10), timestamp=lambda e: e.ts).select(names)
    assert next(result.get_side_output(CEP.LATE_DATA)) == Ev("b", 3)
    assert list(result) == ["a5 b6"]


def test_bad_records_go_to_the_bad_records_side_output_on_request() -> None:
    stream = [Ev("a", 1), "garbage", Ev("b", 2)]
    result = CEP.pattern(stream, ab_within(10), timestamp=lambda e: e.ts, on_error="side_output").select(
        names
    )
    assert list(result) == ["a1 b2"]
    [bad] = result.get_side_output(CEP.BAD_RECORDS)
    assert bad == BadRecord(
        "garbage",
        "timestamp extractor raised AttributeError: 'str' object has no attribute 'ts'",
        "timestamp",
    )


def test_a_bad_record_stops_the_stream_after_the_results_before_it() -> None:
    stream = [Ev("a", 1), Ev("b", 2), Ev("x", 3), "garbage", Ev("a", 4)]
    result = CEP.pattern(stream, ab_within(10), timestamp=lambda e: e.ts).select(names)
    assert next(result) == "a1 b2"
    with pytest.raises(BadRecordError, match="bad record 'garbage' at the timestamp stage"):
        next(result)
    assert list(result) == []


def test_processing_time_uses_the_clock() -> None:
    ticks = itertools.count(100, 3)
    stream = CEP.pattern(events("a0 b0 a0 x0 b0"), ab_within(5), clock=lambda: next(ticks))
    assert list(stream.in_processing_time().select(names)) == ["a0 b0"]


def test_camel_case_aliases_exist() -> None:
    stream = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts)
    assert list(stream.inEventTime().flatSelect(lambda m, out: out.collect(1))) == [1]
    assert stream.sideOutputLateData(OutputTag("x")).late_data_tag == OutputTag("x")
    assert stream.inProcessingTime().processing_time


def test_output_tags_with_the_same_name_are_the_same_output() -> None:
    assert OutputTag("late-data") == CEP.LATE_DATA
    assert OutputTag("x").id == "x"


def test_select_needs_one_function_or_flinks_three_arguments() -> None:
    stream = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts)
    with pytest.raises(TypeError, match="takes"):
        stream.select(names, names)


def test_cep_pattern_needs_a_pattern() -> None:
    with pytest.raises(TypeError, match="needs a Pattern"):
        CEP.pattern(E, "a b c")  # type: ignore[arg-type]


def test_the_result_reports_operator_stats() -> None:
    result = CEP.pattern(E, abc_within(10), timestamp=lambda e: e.ts).select(names)
    list(result)
    stats = result.stats()
    assert (stats["events_in"], stats["matches"], stats["keys"]) == (6, 1, 0)


def test_a_pattern_ending_in_not_followed_by_is_released_at_the_end_of_input() -> None:
    pattern = Pattern.begin("a").where(is_("a")).not_followed_by("b").where(is_("b")).within(100)
    result = CEP.pattern(events("a1 a2 b3 a7"), pattern, timestamp=lambda e: e.ts).select(names)
    assert list(result) == ["a7"]


def test_open_comes_before_the_first_match_and_close_after_the_last() -> None:
    log: list[str] = []

    class Logged(PatternProcessFunction):
        def open(self, context: Any = None) -> None:
            log.append("open")

        def process_match(self, match: dict[str, list[Ev]], ctx: Context, out: Collector) -> None:
            log.append(names(match))

        def close(self) -> None:
            log.append("close")

    pattern = Pattern.begin("a").where(is_("a")).not_followed_by("b").where(is_("b")).within(100)
    list(CEP.pattern(events("a1 x2"), pattern, timestamp=lambda e: e.ts).process(Logged()))
    assert log == ["open", "a1", "close"]
