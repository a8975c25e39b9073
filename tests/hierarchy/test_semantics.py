"""The semantics of docs/semantics.md, section 11, one rule per test."""

from __future__ import annotations

import random

import pytest

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.hierarchy import RAW, ComplexEvent, Hierarchy, HierarchyOperator, LevelOutput, of_type
from flowcep.runtime import LONG_MIN, BadRecordError
from tests.hierarchy.support import ev, is_, matches, pair, run, spans


def two_incidents(window: int | None = None) -> Pattern:
    return (
        Pattern.begin("i")
        .where(of_type("incident"))
        .followed_by("j")
        .where(of_type("incident"))
        .within(window)
    )


def alarms(*times: int, key: str = "k") -> list[dict[str, object]]:
    return [ev(t, "alarm", key) for t in times]


def outages(window: int | None = None, incident_window: int | None = None) -> Hierarchy:
    return (
        Hierarchy()
        .define("incident", pair("alarm", "alarm", incident_window))
        .define("outage", two_incidents(window))
    )


# ---------------------------------------------------------------- 11.1 the time of a complex event


def test_a_complex_event_spans_its_first_and_last_constituent() -> None:
    h = Hierarchy().define("incident", pair("alarm", "alarm"))
    (incident,) = matches(run(h, alarms(3, 7)))
    assert (incident.type, incident.key, incident.start, incident.end) == ("incident", "k", 3, 7)
    assert incident.match == {"a": [ev(3, "alarm")], "b": [ev(7, "alarm")]}


def test_a_complex_event_of_complex_events_spans_everything_below_it() -> None:
    (outage,) = matches(run(outages(), alarms(1, 2, 5, 6)), "outage")
    assert (outage.start, outage.end) == (1, 6)
    first, second = outage.match["i"][0], outage.match["j"][0]
    assert ((first.start, first.end), (second.start, second.end)) == ((1, 2), (5, 6))
    assert outage.raw_events() == alarms(1, 2, 5, 6)


def test_the_composition_function_builds_attributes_and_may_set_the_interval() -> None:
    h = Hierarchy().define(
        "incident",
        pair("alarm", "alarm"),
        compose=lambda m: {"level": m["a"][0]["level"] + m["b"][0]["level"]},
        start=lambda m: m["a"][0]["ts"] - 1,
    )
    (incident,) = matches(run(h, [ev(3, "alarm", level=1), ev(7, "alarm", level=2)]))
    assert (incident.start, incident.end) == (2, 7)
    assert incident.level == 3 and incident["level"] == 3 and incident.attributes == {"level": 3}
    with pytest.raises(AttributeError, match="complex event 'incident' has no attribute 'colour'"):
        _ = incident.colour


def test_a_higher_step_reads_the_attributes_of_complex_events() -> None:
    severe = Pattern.begin("i").where(of_type("incident", lambda c: c.level >= 3))
    h = (
        Hierarchy()
        .define("incident", pair("alarm", "alarm"), compose=lambda m: {"level": m["b"][0]["level"]})
        .define("severe", severe)
    )
    events = [ev(1, "alarm", level=1), ev(2, "alarm", level=2), ev(3, "alarm", level=3)]
    assert spans(run(h, events)) == [(2, 3)]


# ---------------------------------------------------------------- 11.2 sequences of complex events


def test_in_a_sequence_the_previous_complex_event_ends_before_the_next_starts() -> None:
    # incidents [1, 2], [2, 5], [5, 6]: only [1, 2] then [5, 6] do not overlap
    every = Pattern.begin("i").where(of_type("incident")).followed_by_any("j").where(of_type("incident"))
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("outage", every)
    out = run(h, alarms(1, 2, 5, 6), emit=["incident", "outage"])
    assert spans(out, "incident") == [(1, 2), (2, 5), (5, 6)]
    assert spans(out, "outage") == [(1, 6)]


def test_raw_steps_of_a_level_that_reads_complex_events_follow_the_same_order() -> None:
    # the deploy at 4 comes after the incident [3, 5] started: only [5, 6] follows it
    bad_deploy = Pattern.begin("deploy").where(is_("deploy")).followed_by("i").where(of_type("incident"))
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("bad_deploy", bad_deploy)
    (match,) = matches(run(h, [ev(3, "alarm"), ev(4, "deploy"), ev(5, "alarm"), ev(6, "alarm")]))
    assert (match.start, match.end) == (4, 6)
    assert (match.match["i"][0].start, match.match["i"][0].end) == (5, 6)


# ---------------------------------------------------------------- 11.3 event time across levels


def test_a_complex_event_enters_the_next_level_at_its_end() -> None:
    # the ack at 5 comes before the incident [1, 10] is complete; the ack at 12 after it
    acked = Pattern.begin("i").where(of_type("incident")).followed_by("ack").where(is_("ack"))
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("acked", acked)
    (match,) = matches(run(h, [ev(1, "alarm"), ev(5, "ack"), ev(10, "alarm"), ev(12, "ack")]))
    assert match.match["ack"] == [ev(12, "ack")]
    assert (match.start, match.end) == (1, 12)


def test_out_of_order_raw_events_within_the_bound_give_the_sorted_result() -> None:
    events = alarms(1, 2, 4, 5, 7, 8, 11, 12)
    shuffled = events[:]
    random.Random(7).shuffle(shuffled)
    bound = max(events.index(e) - i for i, e in enumerate(shuffled)) * 4 + 4  # >= the disorder in ms
    emit = ["incident", "outage"]
    in_order = run(outages(), events, emit=emit)
    out_of_order = run(outages(), shuffled, emit=emit, out_of_orderness=bound)
    assert [o for o in out_of_order if o.kind == "late"] == []
    assert sorted(spans(out_of_order, "outage")) == sorted(spans(in_order, "outage"))
    assert sorted(spans(out_of_order, "incident")) == sorted(spans(in_order, "incident"))


def test_a_level_runs_its_window_behind_a_level_that_releases_matches_late() -> None:
    # "silent": an alarm not followed by a clear within 10, released when its window closes
    silent = Pattern.begin("a").where(is_("alarm")).not_followed_by("clear").where(is_("clear")).within(10)
    twice = Pattern.begin("s").where(of_type("silent")).followed_by("t").where(of_type("silent"))
    h = Hierarchy().define("silent", silent).define("twice", twice)
    operator = HierarchyOperator(h, key_by="key", timestamp="ts", emit=["silent", "twice"])
    out: list[LevelOutput] = []
    for event in alarms(1, 12, 30):
        out += operator.process_element(event)
    assert operator.level_watermarks() == {"silent": 29, "twice": 19}
    out += operator.flush()
    assert [o for o in out if o.kind == "late"] == []
    assert spans(out, "silent") == [(1, 1), (12, 12), (30, 30)]
    assert spans(out, "twice") == [(1, 12), (12, 30)]


# ---------------------------------------------------------------- 11.4 nested windows


def test_a_higher_window_counts_from_the_start_of_its_first_constituent() -> None:
    # [1, 8] then [12, 13]: 13 - 1 >= 10, though 13 - 8 (from the first one's arrival) is not
    out = run(outages(window=10), alarms(1, 8, 12, 13), emit=["incident", "outage"])
    assert spans(out, "incident") == [(1, 8), (8, 12), (12, 13)]
    assert spans(out, "outage") == []


def test_a_higher_window_holds_a_sequence_within_it() -> None:
    assert spans(run(outages(window=10), alarms(1, 2, 5, 6))) == [(1, 6)]


def test_a_constituent_longer_than_the_higher_window_is_refused() -> None:
    single = Pattern.begin("i").where(of_type("incident")).within(5)
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("short", single)
    assert spans(run(h, alarms(1, 8, 10, 12)), "short") == [(8, 10), (10, 12)]


def test_a_lower_window_bounds_every_complex_event_of_its_level() -> None:
    out = run(outages(incident_window=3), alarms(1, 5, 6, 20, 22), emit=["incident", "outage"])
    assert spans(out, "incident") == [(5, 6), (20, 22)]
    assert spans(out, "outage") == [(5, 22)]


# ---------------------------------------------------------------- 11.5 timeouts across levels


def test_a_lower_partial_match_timing_out_does_not_cancel_a_higher_one() -> None:
    # the alarms at 2 and 10 start incidents that time out; the outage that waits since [1, 2]
    # is completed by the next incident, [30, 31]
    out = run(outages(window=100, incident_window=5), alarms(1, 2, 10, 30, 31), emit=["incident", "outage"])
    timeouts = [(o.level, o.value, o.timestamp) for o in out if o.kind == "timeout" and o.level == "incident"]
    assert timeouts == [
        ("incident", {"a": alarms(2)}, 7),
        ("incident", {"a": alarms(10)}, 15),
        ("incident", {"a": alarms(31)}, 36),
    ]
    assert spans(out, "outage") == [(1, 31)]


def test_a_higher_partial_match_times_out_its_window_after_its_first_constituent_starts() -> None:
    # seed 004's nested deadline: the incident [1, 2] starts at 1, so the outage's time runs
    # out at 1 + 100, though its operator counts from the incident's arrival at 2
    out = run(outages(window=100), alarms(1, 2))
    ((level, value, at),) = [(o.level, o.value, o.timestamp) for o in out if o.kind == "timeout"]
    assert (level, at) == ("outage", 101)
    assert [(c.start, c.end) for c in value["i"]] == [(1, 2)]


def test_a_timeout_comes_out_once_the_watermark_passes_the_first_arrival_plus_the_window() -> None:
    # incident [1, 5]: the outage partial match is dead from 1 + 20 on (no constituent can end
    # before 21 any more), but its operator drops it at 5 + 20
    h = outages(window=20)
    operator = HierarchyOperator(h, key_by="key", timestamp="ts")
    operator.process_elements(alarms(1, 5, 6))
    assert [o for o in operator.process_watermark(24) if o.kind == "timeout"] == []
    (timeout,) = [o for o in operator.process_watermark(25) if o.kind == "timeout"]
    assert (timeout.level, timeout.timestamp) == ("outage", 21)


# ---------------------------------------------------------------- 11.6 late data at every level


def test_a_late_raw_event_comes_out_at_the_raw_level() -> None:
    out = run(Hierarchy().define("incident", pair("alarm", "alarm")), alarms(5, 3))
    assert [o for o in out if o.kind == "late"] == [LevelOutput("late", RAW, "k", ev(3, "alarm"), 3)]


def test_a_complex_event_that_ends_behind_its_readers_watermark_is_late_there() -> None:
    # a composition function that dates the incident at its first alarm: at 5 it ends at 1, and
    # the outage level's watermark is already 4
    h = (
        Hierarchy()
        .define("incident", pair("alarm", "alarm"), end=lambda m: m["a"][0]["ts"])
        .define("outage", two_incidents())
    )
    late = [o for o in run(h, alarms(1, 5)) if o.kind == "late"]
    assert [(o.level, type(o.value), o.value.start, o.timestamp) for o in late] == [
        ("outage", ComplexEvent, 1, 1)
    ]


# ---------------------------------------------------------------- 11.7 sharing, results, keys


def test_a_lower_level_is_detected_once_for_all_its_readers() -> None:
    last = Pattern.begin("i").where(of_type("incident", lambda c: c.end > 5))
    h = outages().define("late_incident", last)
    operator = HierarchyOperator(h, key_by="key", timestamp="ts")
    out = operator.process_elements(alarms(1, 2, 5, 6)) + operator.flush()
    assert operator.stats()["levels"]["incident"]["matches"] == 3
    assert spans(out, "outage") == [(1, 6)]
    assert spans(out, "late_incident") == [(5, 6)]


def test_only_the_top_levels_come_out_unless_others_are_asked_for() -> None:
    assert {o.level for o in run(outages(), alarms(1, 2, 5, 6))} == {"outage"}
    asked = run(outages(), alarms(1, 2, 5, 6), emit=["incident"])
    assert {o.level for o in asked if o.kind == "match"} == {"incident"}


def test_keys_do_not_mix_at_any_level() -> None:
    events = sorted(alarms(1, 2, 5, 6, key="x") + alarms(3, 4, key="y"), key=lambda e: e["ts"])
    out = run(outages(), events, emit=["incident", "outage"])
    assert sorted((c.key, c.start, c.end) for c in matches(out, "incident")) == [
        ("x", 1, 2),
        ("x", 2, 5),
        ("x", 5, 6),
        ("y", 3, 4),
    ]
    assert [(c.key, c.start, c.end) for c in matches(out, "outage")] == [("x", 1, 6)]


# ---------------------------------------------------------------- 11.8 snapshots


def test_a_snapshot_restores_every_level() -> None:
    events = alarms(1, 2, 5, 6, 9, 10, 14, 15)
    whole = HierarchyOperator(outages(window=20), key_by="key", timestamp="ts", emit=["incident", "outage"])
    expected = whole.process_elements(events) + whole.flush()
    first = HierarchyOperator(outages(window=20), key_by="key", timestamp="ts", emit=["incident", "outage"])
    got = first.process_elements(events[:3])
    second = HierarchyOperator(outages(window=20), key_by="key", timestamp="ts", emit=["incident", "outage"])
    second.restore(first.snapshot())
    got += second.process_elements(events[3:]) + second.flush()
    assert [(o.kind, o.level, o.timestamp) for o in got] == [(o.kind, o.level, o.timestamp) for o in expected]
    assert spans(got) == spans(expected)


def test_a_snapshot_of_another_hierarchy_is_refused() -> None:
    from flowcep.runtime import SnapshotError

    one = HierarchyOperator(outages(window=20), timestamp="ts")
    other = HierarchyOperator(outages(window=30), timestamp="ts")
    with pytest.raises(SnapshotError):
        other.restore(one.snapshot())


def test_the_next_deadline_counts_the_release_lags_below_a_level() -> None:
    # the incidents skip past their last event: the outage level runs 10 ms (their window)
    # behind the raw watermark, so its own deadlines come 10 ms later in raw time
    skipping = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
        .where(is_("alarm"))
        .followed_by("b")
        .where(is_("alarm"))
        .within(10)
    )
    h = Hierarchy().define("incident", skipping).define("outage", two_incidents(100))
    operator = HierarchyOperator(h, key_by="key", timestamp="ts", out_of_orderness=None)
    operator.process_elements(alarms(1, 2))
    operator.process_watermark(2)  # incident [1, 2] goes up, to wait for the outage level's time
    assert operator.next_deadline() == 11  # the incident level's window timer (from the alarm at 1)
    operator.process_watermark(11)
    assert operator.next_deadline() == 12
    operator.process_watermark(12)  # the outage level takes it: its window timer is at 2 + 100
    assert operator.next_deadline() == 112
    assert [o for o in operator.process_watermark(111) if o.kind == "timeout"] == []
    assert [o.timestamp for o in operator.process_watermark(112) if o.kind == "timeout"] == [101]


def test_reset_drops_every_level_and_the_watermarks() -> None:
    operator = HierarchyOperator(outages(window=100), key_by="key", timestamp="ts")
    first = operator.process_elements(alarms(1, 2, 5, 6)) + operator.flush()
    operator.reset()
    assert (operator.has_state(), operator.keys(), operator.current_watermark) == (False, [], LONG_MIN)
    assert operator.process_elements(alarms(1, 2, 5, 6)) + operator.flush() == first


def test_discarding_a_key_drops_it_at_every_level() -> None:
    operator = HierarchyOperator(outages(window=100), key_by="key", timestamp="ts")
    operator.process_elements(alarms(1, 2, key="a") + alarms(3, 4, key="b") + alarms(5, key="b"))
    assert sorted(operator.keys()) == ["a", "b"]
    assert operator.discard_key("a") is True
    assert operator.keys() == ["b"]
    assert {o.key for o in operator.flush() if o.kind == "timeout"} == {"b"}


# ---------------------------------------------------------------- 11.9 bad records


def test_a_raw_event_without_a_timestamp_raises_naming_it() -> None:
    h = Hierarchy().define("incident", pair("alarm", "alarm"))
    with pytest.raises(
        BadRecordError, match=r"bad record \{'kind': 'alarm', 'key': 'k'\} at the timestamp stage"
    ):
        run(h, [{"kind": "alarm", "key": "k"}])


def test_a_condition_that_raises_is_a_bad_record_of_its_level() -> None:
    broken = Pattern.begin("i").where(of_type("incident", lambda c: c.missing > 0))
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("broken", broken)
    out = run(h, alarms(1, 2), on_error="side_output")
    ((level, stage, step),) = [(o.level, o.value.stage, o.value.step) for o in out if o.kind == "bad_record"]
    assert (level, stage, step) == ("broken", "condition", "i")


def test_one_event_object_pushed_twice_is_refused_only_where_it_is_late() -> None:
    # the same alarm object at 3, pushed again after the one at 5 in one call: only the second
    # push is late, and the level that reads raw events besides the incidents still gets the first
    alarm = ev(3, "alarm")
    before = Pattern.begin("a").where(is_("alarm")).followed_by("i").where(of_type("incident"))
    h = Hierarchy().define("incident", pair("alarm", "alarm")).define("before", before)
    operator = HierarchyOperator(h, key_by="key", timestamp="ts", emit=["incident", "before"])
    out = operator.process_elements([alarm, ev(5, "alarm"), alarm, ev(9, "alarm"), ev(10, "alarm")])
    out += operator.flush()
    assert [(o.level, o.value) for o in out if o.kind == "late"] == [(RAW, alarm)]
    assert spans(out, "incident") == [(3, 5), (5, 9), (9, 10)]
    assert spans(out, "before") == [(3, 9), (5, 10)]
