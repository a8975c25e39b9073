"""End-to-end PyFlink jobs: the connector gives the embedded runtime's results.

Two local Flink jobs run once per module (module fixtures); the tests check their parts.
Results are compared per key, in emission order: keys run in parallel, so the order across
keys is not defined.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import cep_scenarios as sc
import pytest
from flink_support import EVENT_TYPE, collect, event_source, make_env  # noqa: I001 - skips without PyFlink
from pyflink.common import Duration, Types, WatermarkStrategy

from flowcep import Pattern
from flowcep.connectors.flink import CEP, OutputTag
from flowcep.runtime import CEP as EmbeddedCEP
from flowcep.runtime import CepOperator, Output
from flowcep.runtime import OutputTag as FlowcepOutputTag


def by_key(items: list[Any], key_of: Any = lambda item: item[1]) -> dict[Any, list[Any]]:
    grouped: dict[Any, list[Any]] = defaultdict(list)
    for item in items:
        grouped[key_of(item)].append(item)
    return dict(grouped)


def embedded(events: list[tuple[Any, ...]], pattern: Pattern) -> Any:
    return EmbeddedCEP.pattern(
        events, pattern, key_by=lambda e: e[0], timestamp=lambda e: e[2], out_of_orderness=None
    )


# ---------------------------------------------------------------- job 1: event time, 2 subtasks

EVENTS = sc.random_events(seed=7)
SELECT_TIMEOUTS = FlowcepOutputTag("select-timeouts")  # flowcep tags work in both runtimes


@pytest.fixture(scope="module")
def event_time_job() -> dict[str, list[Any]]:
    """Three patterns over one bounded, out-of-order, four-key stream, on two parallel subtasks:
    process (with timeouts), select (Flink's timeout form) and flat_select."""
    env = make_env(parallelism=2)
    # the bounded out-of-orderness exceeds the stream's disorder: no record is ever late, so the
    # results cannot depend on when the periodic watermarks happen to be emitted
    source = event_source(env, EVENTS, WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(50)))
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    processed = CEP.pattern(keyed, sc.abc_pattern()).process(sc.Describe())
    selected = CEP.pattern(keyed, sc.rising_pattern()).select(SELECT_TIMEOUTS, sc.timeout_ts, sc.select_ts)
    flat = CEP.pattern(keyed, sc.any_pattern()).flat_select(sc.flat_pairs)
    batched = CEP.pattern(keyed, sc.abc_pattern(), batch_timers=True).process(sc.Describe())
    return collect(
        processed,
        timeouts=processed.get_side_output(sc.TIMEOUTS),
        late=processed.get_side_output(CEP.LATE_DATA),
        selected=selected,
        select_timeouts=selected.get_side_output(SELECT_TIMEOUTS),
        flat=flat,
        batched=batched,
        batched_timeouts=batched.get_side_output(sc.TIMEOUTS),
    )


def test_process_matches_and_timeouts_equal_the_embedded_runtime(
    event_time_job: dict[str, list[Any]],
) -> None:
    want = embedded(EVENTS, sc.abc_pattern()).process(sc.Describe())
    want_main = list(want)
    want_timeouts = list(want.get_side_output(sc.TIMEOUTS))
    assert want_main and want_timeouts
    assert by_key(event_time_job["main"]) == by_key(want_main)
    assert by_key(event_time_job["timeouts"]) == by_key(want_timeouts)
    assert event_time_job["late"] == []
    # one timer per key, running up to the watermark: the same results
    assert by_key(event_time_job["batched"]) == by_key(want_main)
    assert by_key(event_time_job["batched_timeouts"]) == by_key(want_timeouts)


def test_select_with_timeouts_equals_the_embedded_runtime(event_time_job: dict[str, list[Any]]) -> None:
    want = embedded(EVENTS, sc.rising_pattern()).select(SELECT_TIMEOUTS, sc.timeout_ts, sc.select_ts)
    want_main = list(want)
    want_timeouts = list(want.get_side_output(SELECT_TIMEOUTS))
    assert want_main and want_timeouts

    def first(item: Any) -> Any:
        return item[0]

    assert by_key(event_time_job["selected"], first) == by_key(want_main, first)
    assert by_key(event_time_job["select_timeouts"], first) == by_key(want_timeouts, first)


def test_flat_select_equals_the_embedded_runtime(event_time_job: dict[str, list[Any]]) -> None:
    want = list(embedded(EVENTS, sc.any_pattern()).flat_select(sc.flat_pairs))
    assert want
    assert by_key(event_time_job["flat"], lambda s: s[0]) == by_key(want, lambda s: s[0])


# ---------------------------------------------------------------- job 2: late data, processing time

# Making a record late on purpose. PyFlink watermarks are periodic (every 200 ms by default), so
# in a small job every record normally arrives while the watermark is still Long.MIN_VALUE. Here
# the source pauses (an un-chained map, upstream of the watermark generator) before the records
# meant to be late; meanwhile the generator, every 20 ms, emits the watermark of the records
# before the pause, and with one-record bundles no Python operator holds it back. So the records
# after the pause see watermark 4999 (monotonous timestamps: max timestamp - 1).
PAUSE = 1.0
LATE_EVENTS = [
    ("k1", "a", 1000),
    ("k2", "a", 1500),
    ("k1", "b", 2000),
    ("k2", "x", 2500),
    ("k1", "a", 5000),
    ("k1", "b", 3000, 0, PAUSE),  # late: 3000 <= 4999
    ("k2", "b", 3500),  # late
    ("k2", "x", 4999),  # late: equal to the watermark
    ("k1", "b", 6000),
    ("k2", "b", 7000),
]
AB = Pattern.begin("a").where(sc.kind_is("a")).followed_by("b").where(sc.kind_is("b"))

# Processing time: a partial match of k2 outlives the 600 ms window during a 2 s pause.
PROCESSING_EVENTS = [
    ("k1", "a", 1),
    ("k1", "b", 2),  # match
    ("k2", "a", 3),
    ("k1", "a", 4, 0, 2.0),
    ("k2", "b", 5),  # times out k2's a@3 (the key sees a record after its window), no match
    ("k1", "c", 6),
    ("k1", "b", 7),  # match a@4, b@7
    ("k3", "x", 8, 0, 0.3),  # lets the last comparator timer fire before the input ends
]
AB_600 = Pattern.begin("a").where(sc.kind_is("a")).followed_by("b").where(sc.kind_is("b")).within(600)


def by_event_ts(a: Any, b: Any) -> int:
    return (a[2] > b[2]) - (a[2] < b[2])


@pytest.fixture(scope="module")
def timing_job() -> dict[str, list[Any]]:
    env = make_env({"python.fn-execution.bundle.size": "1"}, watermark_interval_ms=20)
    # event time with late records, to a typed tag: late records keep the input's type
    late_tag = OutputTag("late", EVENT_TYPE)
    source = event_source(env, LATE_EVENTS, WatermarkStrategy.for_monotonous_timestamps(), with_pauses=True)
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    late_result = CEP.pattern(keyed, AB).side_output_late_data(late_tag).select(sc.select_ts)
    # processing time, without and with a comparator
    source = event_source(env, PROCESSING_EVENTS, None, with_pauses=True)
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    plain = CEP.pattern(keyed, AB_600).in_processing_time().process(sc.Describe())
    ordered = CEP.pattern(keyed, AB_600, by_event_ts, processing_time=True).process(sc.Describe())
    # a non-keyed stream; its function's side output (timeouts) is never read
    source = event_source(env, LATE_EVENTS[:5], WatermarkStrategy.for_monotonous_timestamps())
    whole = CEP.pattern(source, AB.within(10_000)).process(sc.Describe())
    return collect(
        late_result,
        late=late_result.get_side_output(late_tag),
        processing=plain,
        processing_timeouts=plain.get_side_output(sc.TIMEOUTS),
        ordered=ordered,
        whole=whole,
    )


def test_late_records_go_to_the_late_data_side_output(timing_job: dict[str, list[Any]]) -> None:
    # the embedded operator, given the watermark the job had at the pause
    op = CepOperator(AB, key_by=lambda e: e[0], timestamp=lambda e: e[2], out_of_orderness=None)
    outputs: list[Output] = []
    for event in LATE_EVENTS:
        if len(event) > 4:
            outputs += op.process_watermark(4999)
        outputs += op.process_element(event)
    outputs += op.flush()
    want_late = [o.value[:3] for o in outputs if o.kind == "late"]
    want_matches = [sc.select_ts(o.value) for o in outputs if o.kind == "match"]

    assert want_late == [("k1", "b", 3000), ("k2", "b", 3500), ("k2", "x", 4999)]
    assert sorted(tuple(e[:3]) for e in timing_job["late"]) == sorted(want_late)
    assert by_key(timing_job["main"], lambda s: s[0]) == by_key(want_matches, lambda s: s[0])
    assert by_key(timing_job["main"], lambda s: s[0]) == {
        "k1": [("k1", {"a": [1000], "b": [2000]}), ("k1", {"a": [5000], "b": [6000]})],
        "k2": [("k2", {"a": [1500], "b": [7000]})],
    }


def shape(items: list[Any]) -> list[Any]:
    """Processing times vary from run to run: drop ``ctx.timestamp()``."""
    return sorted(((kind, key, steps) for kind, key, _, steps in items), key=repr)


PROCESSING_MATCHES = [("match", "k1", {"a": [1], "b": [2]}), ("match", "k1", {"a": [4], "b": [7]})]


def test_processing_time_matches_on_arrival_and_times_out(timing_job: dict[str, list[Any]]) -> None:
    assert shape(timing_job["processing"]) == PROCESSING_MATCHES
    assert shape(timing_job["processing_timeouts"]) == [("timeout", "k2", {"a": [3]})]


def test_processing_time_with_a_comparator_uses_processing_time_timers(
    timing_job: dict[str, list[Any]],
) -> None:
    assert shape(timing_job["ordered"]) == PROCESSING_MATCHES


def test_a_non_keyed_stream_is_matched_as_a_whole(timing_job: dict[str, list[Any]]) -> None:
    # one key for the whole stream: k1's and k2's events mix; no (tag, value) pair leaks into
    # the main output although nobody reads the function's timeout side output
    assert timing_job["whole"] == [
        ("match", 0, 2000, {"a": [1000], "b": [2000]}),
        ("match", 0, 2000, {"a": [1500], "b": [2000]}),
    ]
