"""The connector's KeyedProcessFunction, driven without a JVM (``FakeFlink``).

These pin down what the PyFlink jobs cannot show deterministically: Flink's lateness rule, the
timers the function registers, state clean-up, restore from pickled state, errors.
"""

from __future__ import annotations

import pickle
import random
from typing import Any

import cep_scenarios as sc
import pytest
from flink_support import FakeFlink  # noqa: I001 - skips without PyFlink

from flowcep import Pattern, WithinType
from flowcep.connectors import flink as flink_connector
from flowcep.connectors.flink import CEP, _CepFunction, _Spec, _worker_tag
from flowcep.runtime import CEP as EmbeddedCEP
from flowcep.runtime import LONG_MAX, LONG_MIN, CepOperator
from flowcep.runtime.options import OperatorOptions

LATE = "late-data"


def function(pattern: Pattern, kind: str = "process", fn: Any = None, **kwargs: Any) -> _CepFunction:
    timeout_fn = kwargs.pop("timeout_fn", None)
    spec = _Spec(kind, fn if fn is not None else sc.Describe(), timeout_fn, CEP.TIMED_OUT)
    batch_timers = kwargs.pop("batch_timers", False)
    options = OperatorOptions(out_of_orderness=None, **kwargs)
    return _CepFunction(
        pattern, spec, options=options, late_data_tag=_worker_tag(CEP.LATE_DATA), batch_timers=batch_timers
    )


def ab(within: int | None = None) -> Pattern:
    pattern = Pattern.begin("a").where(sc.kind_is("a")).followed_by("b").where(sc.kind_is("b"))
    return pattern.within(within) if within is not None else pattern


# ---------------------------------------------------------------- event time


def test_a_record_at_or_before_the_watermark_is_late() -> None:
    flink = FakeFlink(function(ab()))
    flink.watermark(100)
    flink.element("k", ("k", "a", 99), 99)
    flink.element("k", ("k", "a", 100), 100)  # equal to the watermark: late, as in Flink
    flink.element("k", ("k", "a", 101), 101)
    assert flink.side(LATE) == [("k", "a", 99), ("k", "a", 100)]
    assert flink.late_counter == 2
    assert flink.timers() == [(101, "k")]


def test_records_wait_for_the_watermark_and_run_in_timestamp_order() -> None:
    flink = FakeFlink(function(ab()))
    flink.element("k", ("k", "b", 20), 20)
    flink.element("k", ("k", "a", 10), 10)
    assert flink.main() == []
    assert flink.timers() == [(10, "k"), (20, "k")]
    flink.watermark(15)
    assert flink.main() == []
    flink.watermark(20)
    assert flink.main() == [("match", "k", 20, {"a": [10], "b": [20]})]


def test_a_timer_at_the_window_deadline_reports_the_timeout() -> None:
    flink = FakeFlink(function(ab(within=10)))
    flink.element("k", ("k", "a", 5), 5)
    flink.watermark(5)
    assert flink.timers() == [(15, "k")]  # the partial match times out at 5 + 10
    flink.watermark(14)
    assert flink.side("timeouts") == []
    flink.watermark(15)
    assert flink.side("timeouts") == [("timeout", "k", 15, {"a": [5]})]
    assert flink.store == {}  # nothing pending: the key's state is cleared


def a_not_followed_by_c(within: int) -> Pattern:
    return (
        Pattern.begin("a").where(sc.kind_is("a")).not_followed_by("c").where(sc.kind_is("c")).within(within)
    )


# What Flink 2.3's CepOperator gives as ctx.timestamp() for {a:[a1]} of a_not_followed_by_c(10),
# from a Java job on the real jar with these records and explicit watermarks (issue 34): the
# watermark at which a timer releases the match, or the time of the key's next record if that
# record is processed in the same firing.
@pytest.mark.parametrize("batch_timers", [False, True], ids=["timer-per-timestamp", "batch-timers"])
@pytest.mark.parametrize(
    ("steps", "match_timestamp"),
    [
        ([("a", 1), ("watermark", 4), ("watermark", 29)], 29),
        ([("a", 1), ("watermark", 4), ("x", 15), ("watermark", 20)], 15),
        ([("a", 1), ("watermark", 11)], 11),
    ],
    ids=["window-timer-fires-late", "next-record-in-the-same-firing", "window-timer-fires-on-time"],
)
def test_a_match_released_by_a_timer_carries_flinks_timestamp(
    steps: list[tuple[str, int]], match_timestamp: int, batch_timers: bool
) -> None:
    flink = FakeFlink(function(a_not_followed_by_c(within=10), batch_timers=batch_timers))
    for kind, ts in steps:
        if kind == "watermark":
            flink.watermark(ts)
        else:
            flink.element("A", ("A", kind, ts), ts)
    assert flink.main() == [("match", "A", match_timestamp, {"a": [1]})]


def test_keys_are_independent() -> None:
    flink = FakeFlink(function(ab()))
    flink.element("x", ("x", "a", 1), 1)
    flink.element("y", ("y", "b", 2), 2)
    flink.element("y", ("y", "a", 3), 3)
    flink.element("x", ("x", "b", 4), 4)
    flink.watermark(LONG_MAX)
    assert flink.main() == [("match", "x", 4, {"a": [1], "b": [4]})]
    assert set(flink.store) == {"y"}  # y's a@3 still waits for a b


def test_a_record_without_timestamp_fails_with_a_hint() -> None:
    flink = FakeFlink(function(ab()))
    with pytest.raises(ValueError, match="assign_timestamps_and_watermarks"):
        flink.element("k", ("k", "a", 1), LONG_MIN)  # what PyFlink gives for no timestamp


def test_select_and_flat_select_with_timeout_functions() -> None:
    flink = FakeFlink(function(ab(within=10), "select", sc.select_ts, timeout_fn=sc.timeout_ts))
    for ts, kind in ((1, "a"), (2, "b"), (20, "a")):
        flink.element("k", ("k", kind, ts), ts)
    flink.watermark(LONG_MAX)
    assert flink.main() == [("k", {"a": [1], "b": [2]})]
    assert flink.side("timed-out") == [("k", 30, {"a": [20]})]

    def flat_timeout(match: Any, ts: int, out: Any) -> None:
        out.collect(ts)
        out.collect(-ts)

    flink = FakeFlink(function(ab(within=10), "flat_select", sc.flat_pairs, timeout_fn=flat_timeout))
    for ts, kind in ((1, "a"), (2, "b"), (20, "a")):
        flink.element("k", ("k", kind, ts), ts)
    flink.watermark(LONG_MAX)
    assert flink.main() == [("k", 1, 2)]
    assert flink.side("timed-out") == [30, -30]


@pytest.mark.parametrize("batch_timers", [False, True], ids=["timer-per-timestamp", "batch-timers"])
@pytest.mark.parametrize("seed", range(4))
def test_random_streams_and_watermarks_match_the_embedded_runtime(
    seed: int, batch_timers: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any watermark schedule that leaves no record late gives the embedded runtime's results,
    whichever timer strategy, with live or pickled state (the function holding one key live,
    the others read back from the pickled state)."""
    if seed % 2 == 1:
        monkeypatch.setattr(flink_connector, "LIVE_KEYS", 1)
    rng = random.Random(seed)
    events = sc.random_events(seed, keys=3, count=300, disorder=8)
    flink = FakeFlink(function(sc.abc_pattern(), batch_timers=batch_timers), pickle_state=seed % 2 == 1)
    high = LONG_MIN
    for e in events:
        flink.element(e[0], e, e[2])
        high = max(high, e[2])
        if rng.random() < 0.2:
            flink.watermark(high - 9)  # the stream is at most 8 ms out of order
    flink.watermark(LONG_MAX)
    want = EmbeddedCEP.pattern(
        events, sc.abc_pattern(), key_by=lambda e: e[0], timestamp=lambda e: e[2], out_of_orderness=None
    )
    result = want.process(sc.Describe())
    want_main = list(result)
    assert flink.side(LATE) == []
    assert sorted(flink.main(), key=repr) == sorted(want_main, key=repr)
    assert sorted(flink.side("timeouts"), key=repr) == sorted(result.get_side_output(sc.TIMEOUTS), key=repr)
    assert flink.store == {}


def test_batch_timers_keep_one_timer_per_key_and_run_up_to_the_watermark() -> None:
    flink = FakeFlink(function(ab(within=10), batch_timers=True))
    for ts, kind in ((5, "a"), (7, "b"), (6, "a"), (30, "a")):
        flink.element("k", ("k", kind, ts), ts)
    assert flink.timers() == [(5, "k")]  # 7 and 30 came later than the pending 5; 6 -> none
    flink.watermark(20)  # one firing runs 5, 6, 7
    main = flink.main()
    assert [m[3] for m in main] == [{"a": [5], "b": [7]}, {"a": [6], "b": [7]}]
    assert [m[2] for m in main] == [7, 7]  # ctx.timestamp() is still the match's time
    assert flink.timers() == [(30, "k")]
    flink.watermark(40)
    assert flink.side("timeouts") == [("timeout", "k", 40, {"a": [30]})]
    assert flink.store == {}


@pytest.mark.parametrize("batch_timers", [False, True], ids=["timer-per-timestamp", "batch-timers"])
def test_a_window_timer_outlives_the_state_of_its_key_as_in_flink(batch_timers: bool) -> None:
    """Issue 35's case: key A's state empties once {a:[a90]} is released, but the window timer
    a90 registered (90 + 16) stays and releases {a:[a101]} at watermark 106, as Flink 2.3 does
    (tests/oracle/samples/basic.json, i35-not-followed-by). Watermark: max timestamp - 1."""
    pattern = (
        Pattern.begin("a")
        .where(sc.kind_is("a"))
        .not_followed_by("c")
        .where(sc.kind_is("c"))
        .within(1, WithinType.PREVIOUS_AND_CURRENT)
        .within(16)
    )
    flink = FakeFlink(function(pattern, batch_timers=batch_timers), pickle_state=True)
    emitted = []
    for key, kind, ts in (("A", "a", 90), ("B", "x", 101), ("A", "a", 101), ("B", "x", 102), ("B", "x", 107)):
        flink.element(key, (key, kind, ts), ts)
        flink.watermark(ts - 1)
        emitted.append(flink.main()[len(sum(emitted, [])) :])
    # a timer advances its key to the watermark, as Flink's onEventTime: {a:[a90]} at 100
    assert emitted[1] == [("match", "A", 100, {"a": [90]})]
    assert emitted[4] == [("match", "A", 106, {"a": [101]})]
    assert (117, "A") in flink.timers()
    flink.watermark(LONG_MAX)
    assert flink.store == {}


@pytest.mark.parametrize("batch_timers", [False, True], ids=["timer-per-timestamp", "batch-timers"])
def test_restoring_pickled_state_in_a_new_function_continues_the_matches(batch_timers: bool) -> None:
    """A checkpoint holds each key's pickled state; a restarted job unpickles it (and the
    function, shipped with cloudpickle) and goes on as if nothing happened."""
    import cloudpickle  # PyFlink's dependency

    events = sc.random_events(3, keys=3, count=300)
    half = len(events) // 2

    straight = FakeFlink(function(sc.abc_pattern(), batch_timers=batch_timers))
    for e in events:
        straight.element(e[0], e, e[2])
    straight.watermark(events[half][2] - 20)
    straight.watermark(LONG_MAX)

    before = FakeFlink(function(sc.abc_pattern(), batch_timers=batch_timers))
    for e in events[:half]:
        before.element(e[0], e, e[2])
    checkpoint = pickle.dumps(before.store)
    after = FakeFlink(
        cloudpickle.loads(cloudpickle.dumps(function(sc.abc_pattern(), batch_timers=batch_timers)))
    )
    after.store = pickle.loads(checkpoint)
    for t, key in before.timers():
        after.key = key
        after.register("event", t)
    for e in events[half:]:
        after.element(e[0], e, e[2])
    after.watermark(events[half][2] - 20)
    after.watermark(LONG_MAX)
    assert before.plain() + after.plain() == straight.plain()
    assert any(item[0] == "timeouts" for item in after.plain())


def test_a_failing_condition_fails_the_job_or_goes_to_bad_records() -> None:
    def boom(event: Any) -> bool:
        if event[3] < 0:
            raise ZeroDivisionError("boom")
        return bool(event[1] == "a")

    pattern = Pattern.begin("a").where(boom).followed_by("b").where(sc.kind_is("b"))
    flink = FakeFlink(function(pattern))
    flink.element("k", ("k", "a", 1, -1), 1)
    with pytest.raises(RuntimeError, match="boom"):
        flink.watermark(LONG_MAX)

    flink = FakeFlink(function(pattern, on_error="side_output"))
    flink.element("k", ("k", "a", 1, -1), 1)
    flink.element("k", ("k", "a", 2, 1), 2)
    flink.element("k", ("k", "b", 3, 1), 3)
    flink.watermark(LONG_MAX)
    [bad] = flink.side("bad-records")
    assert bad.record == ("k", "a", 1, -1) and bad.stage == "condition"
    assert flink.main() == [("match", "k", 3, {"a": [2], "b": [3]})]


# ---------------------------------------------------------------- processing time


def test_processing_time_matches_on_arrival() -> None:
    flink = FakeFlink(function(ab(within=100), processing_time=True))
    flink.advance_clock(1000)
    flink.element("k", ("k", "a", 1))
    flink.advance_clock(1050)
    flink.element("k", ("k", "b", 2))
    assert flink.main() == [("match", "k", 1050, {"a": [1], "b": [2]})]
    flink.element("k", ("k", "a", 3))
    flink.advance_clock(2000)
    flink.element("k", ("k", "x", 4))  # as in Flink, the window expires when the key sees a record
    assert flink.side("timeouts") == [("timeout", "k", 1150, {"a": [3]})]
    assert flink.timers("processing") == []
    assert flink.store == {}


def test_processing_time_with_a_comparator_sorts_each_millisecond_on_a_timer() -> None:
    def by_value(a: Any, b: Any) -> int:
        return a[3] - b[3]

    flink = FakeFlink(function(ab(), processing_time=True, comparator=by_value))
    flink.advance_clock(500)
    flink.element("k", ("k", "b", 1, 2))
    flink.element("k", ("k", "a", 2, 1))  # same millisecond, sorted first by the comparator
    assert flink.main() == []
    assert flink.timers("processing") == [(501, "k")]
    flink.advance_clock(501)
    assert flink.main() == [("match", "k", 500, {"a": [2], "b": [1]})]


# ---------------------------------------------------------------- the state object


def test_the_state_pickles_to_the_operator_snapshot() -> None:
    flink = FakeFlink(function(ab()))
    flink.element("k", ("k", "a", 1), 1)
    state = flink.store["k"]
    op = state.op
    assert isinstance(op, CepOperator)
    restored = pickle.loads(pickle.dumps(state))
    # the plain snapshot (canonical=False): restored, it is the same state as the canonical one
    assert restored.op is None and restored.data == op.snapshot(canonical=False)
    again = CepOperator(ab(), out_of_orderness=None)
    again.restore(restored.data)
    assert again.snapshot() == op.snapshot()
