"""The one-pass engine (``OnePassHierarchy``) against ``HierarchyOperator``, the reference, on
random hierarchies of its class and random streams (docs/semantics.md, 11.9).

Per call both give the same outputs: the late and bad raw records first, in the same order;
then each level's outputs, levels in the same order; within a level and key the same kinds at
the same timestamps in the same order. Two things are not reproduced and are compared as
multisets: the order of outputs of one level, key, kind and timestamp (Flink's run queue is a
heap, and its array order decides there), and how a level's keys interleave.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.hierarchy import (
    ComplexEvent,
    Hierarchy,
    HierarchyError,
    HierarchyOperator,
    LevelOutput,
    hierarchy_operator,
    of_type,
)
from flowcep.hierarchy.onepass import OnePassHierarchy
from flowcep.hierarchy.onepass_class import one_pass_levels
from flowcep.runtime import BadRecordError
from flowcep.runtime.snapshot import SnapshotError
from tests.hierarchy.support import ev, is_, matches, pair, run

SETTINGS = settings(
    max_examples=int(os.environ.get("HIERARCHY_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# a step: ("raw", kind) or ("type", level, None or "size" or "long": what its condition reads of
# the complex event); a level: steps with the contiguity before each later step, a window, and
# whether it composes attributes (without, the one-pass engine builds its match on first read)
Level = tuple[list[tuple[Any, ...]], list[str], Any, bool]


@st.composite
def hierarchies(draw: Any) -> list[Level]:
    levels: list[Level] = []
    for i in range(draw(st.integers(1, 3))):
        raw = st.tuples(st.just("raw"), st.sampled_from("ab"))
        box = (
            st.tuples(st.just("type"), st.integers(0, i - 1), st.sampled_from([None, "size", "long"]))
            if i
            else raw
        )
        steps = [draw(raw)] + draw(st.lists(st.one_of(raw, box), min_size=0 if i == 0 else 1, max_size=3))
        if i and all(step[0] == "raw" for step in steps):
            steps[-1] = ("type", i - 1, None)
        joins = draw(
            st.lists(
                st.sampled_from(["next", "followed_by", "followed_by_any"]),
                min_size=len(steps) - 1,
                max_size=len(steps) - 1,
            )
        )
        window = draw(st.sampled_from([None, 3, 6, 12]))
        levels.append((steps, joins, window, draw(st.booleans())))
    return levels


def build(spec: list[Level]) -> Hierarchy:
    h = Hierarchy()
    for i, (steps, joins, window, composes) in enumerate(spec):
        pattern = Pattern.begin("s0").where(condition(steps[0]))
        for j, (step, join) in enumerate(zip(steps[1:], joins), 1):
            pattern = getattr(pattern, join)(f"s{j}").where(condition(step))
        h.define(f"L{i}", pattern.within(window), compose=_size if composes else None)
    return h


def condition(step: tuple[Any, ...]) -> Any:
    if step[0] == "raw":
        return is_(step[1])
    _, level, reads = step
    if reads == "size":
        return of_type(f"L{level}", lambda c: c.get("size", 0) >= 3)
    if reads == "long":
        return of_type(f"L{level}", lambda c: c.end - c.start >= 2)
    return of_type(f"L{level}")


def _size(match: Any) -> dict[str, int]:
    return {"size": len(match)}


@st.composite
def streams(draw: Any) -> list[dict[str, Any]]:
    """Up to 40 events of three kinds and three keys, out of order (some late)."""
    events = []
    ts = 1
    for i in range(draw(st.integers(1, 40))):
        back = draw(st.integers(0, 4))
        events.append(
            {
                "id": i,
                "ts": max(1, ts - back),
                "kind": draw(st.sampled_from("abc")),
                "key": draw(st.sampled_from("xxyz")),
            }
        )
        ts += draw(st.integers(0, 2))
    return events


@st.composite
def calls(draw: Any, events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The stream cut into batches, with watermarks and at most one snapshot between them."""
    made: list[tuple[str, Any]] = []
    at = 0
    while at < len(events):
        size = draw(st.integers(1, 5))
        made.append(("events", events[at : at + size]))
        at += size
        extra = draw(st.sampled_from(["", "", "", "watermark", "snapshot"]))
        if extra == "watermark":
            made.append(("watermark", events[min(at, len(events)) - 1]["ts"] - draw(st.integers(0, 3))))
        elif extra == "snapshot" and all(kind != "snapshot" for kind, _ in made):
            made.append(("snapshot", None))
    made.append(("flush", None))
    return made


def play(
    operator: Any, script: list[tuple[str, Any]], restart: Any = None
) -> tuple[list[list[LevelOutput]], Any]:
    """Each call's outputs; at "snapshot", ``restart(snapshot bytes)`` makes the operator that
    goes on (None: the same one goes on uninterrupted)."""
    results = []
    for kind, arg in script:
        if kind == "events":
            results.append(operator.process_elements(arg))
        elif kind == "watermark":
            results.append(operator.process_watermark(arg))
        elif kind == "flush":
            results.append(operator.flush())
        elif restart is not None:
            operator = restart(operator.snapshot())
    return results, operator


def plain(value: Any) -> Any:
    if type(value) is ComplexEvent:
        return (
            "complex",
            value.type,
            value.key,
            value.start,
            value.end,
            tuple(sorted(value.attributes.items())),
            plain(value.match),
        )
    if isinstance(value, dict):
        return tuple((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(plain(v) for v in value)
    return value


def shape(outputs: list[LevelOutput]) -> tuple[Any, ...]:
    """What the two engines share in one call's outputs (see the module's docstring)."""
    raw = [o for o in outputs if o.level == ""]
    levels = [o for o in outputs if o.level != ""]
    assert outputs[: len(raw)] == raw, "late and bad raw records come first"
    blocks = [level for level, _ in itertools.groupby(o.level for o in levels)]
    per_key: dict[tuple[str, Any], list[tuple[Any, ...]]] = {}
    for o in levels:
        per_key.setdefault((o.level, o.key), []).append((o.kind, o.timestamp, plain(o.value)))
    ordered = {
        group: [
            (kind_ts, Counter(v for _, _, v in same))
            for kind_ts, same in itertools.groupby(items, key=lambda x: x[:2])
        ]
        for group, items in per_key.items()
    }
    return (tuple(plain(o) for o in raw), tuple(blocks), sorted(ordered.items(), key=repr))


def counters(operator: Any) -> tuple[Any, ...]:
    stats = operator.stats()
    levels = {
        name: (s["matches"], s["timeouts"], s["partial_matches"]) for name, s in stats["levels"].items()
    }
    return stats["events_in"], stats["late"], stats["watermark"], levels


@SETTINGS
@given(hierarchies(), streams(), st.data())
def test_the_one_pass_engine_gives_the_reference_results_through_a_snapshot(
    spec: list[Level], events: list[dict[str, Any]], data: Any
) -> None:
    hierarchy = build(spec)
    script = data.draw(calls(events))
    ooo = data.draw(st.sampled_from([None, 0, 2]))
    emit = data.draw(st.sampled_from([None, "all"]))
    options: dict[str, Any] = {
        "key_by": "key",
        "timestamp": "ts",
        "out_of_orderness": ooo,
        "emit": [f"L{i}" for i in range(len(spec))] if emit == "all" else None,
    }
    reference, ref_op = play(HierarchyOperator(hierarchy, **options), script)
    one_pass, one_op = play(
        OnePassHierarchy(hierarchy, **options),
        script,
        restart=lambda snapshot: _restored(hierarchy, options, snapshot),
    )
    assert [shape(o) for o in one_pass] == [shape(o) for o in reference]
    assert counters(one_op) == counters(ref_op)


def _restored(hierarchy: Hierarchy, options: dict[str, Any], snapshot: bytes) -> OnePassHierarchy:
    operator = OnePassHierarchy(hierarchy, **options)
    operator.restore(snapshot)
    return operator


# ---------------------------------------------------------------- examples


def outage_hierarchy(first_join: str = "followed_by") -> Hierarchy:
    return (
        Hierarchy()
        .define("incident", pair("alarm", "alarm", 10), compose=lambda m: {"host": m["a"][0]["host"]})
        .define(
            "outage",
            getattr(Pattern.begin("s").where(is_("start")), first_join)("i")
            .where(of_type("incident", lambda c: c.host == "db"))
            .followed_by("e")
            .where(is_("end"))
            .within(50),
        )
    )


def test_an_outage_is_a_start_a_db_incident_and_an_end() -> None:
    events = [
        ev(1, "start"),
        ev(2, "alarm", host="web"),
        ev(3, "alarm", host="web"),
        ev(4, "alarm", host="db"),
        ev(6, "alarm", host="db"),
        ev(8, "end"),
        ev(9, "tick"),
    ]
    operator = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts")
    outputs = operator.process_elements(events) + operator.flush()
    [outage] = [o.value for o in outputs if o.kind == "match"]
    assert (outage.type, outage.start, outage.end) == ("outage", 1, 8)
    assert outage.match["i"][0].match == {"a": [events[3]], "b": [events[4]]}


def test_a_partial_match_times_out_at_its_start_plus_the_window() -> None:
    operator = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts")
    outputs = operator.process_elements([ev(1, "start"), ev(60, "tick")])
    assert [(o.kind, o.level, o.value, o.timestamp) for o in outputs] == [
        ("timeout", "outage", {"s": [ev(1, "start")]}, 51)
    ]


def test_a_late_raw_event_comes_out_as_late_at_the_raw_level() -> None:
    operator = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts")
    operator.process_elements([ev(5, "tick"), ev(7, "tick")])
    assert operator.process_element(ev(3, "start")) == [LevelOutput("late", "", "k", ev(3, "start"), 3)]


def test_a_hierarchy_outside_the_class_is_refused_with_the_reason() -> None:
    h = Hierarchy().define("burst", Pattern.begin("a").where(is_("alarm")).times(3))
    with pytest.raises(HierarchyError, match="'burst': step 'a' is not a single step"):
        OnePassHierarchy(h, timestamp="ts")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (
            pair("a", "b").not_followed_by("c").where(is_("c")),
            "step 'c' is not joined by next, followed_by or followed_by_any",
        ),
        (
            Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event()).where(is_("a")),
            "a skip strategy other than no_skip",
        ),
        (
            Pattern.begin("i").where(of_type("low")).followed_by("b").where(is_("b")),
            "its first step reads complex events",
        ),
        (
            Pattern.begin("a").where(is_("a")).followed_by("i").where(of_type("low")).where(is_("x")),
            "step 'i' mixes of_type",
        ),
    ],
)
def test_each_feature_outside_the_class_is_named(pattern: Pattern, reason: str) -> None:
    plan = Hierarchy().define("low", pair("a", "b")).define("top", pattern).build()
    found = one_pass_levels(plan)
    assert isinstance(found, str) and reason in found


def test_a_snapshot_of_the_other_engine_is_refused_with_a_clear_error() -> None:
    hierarchy = outage_hierarchy()
    levels = HierarchyOperator(hierarchy, key_by="key", timestamp="ts")
    one_pass = OnePassHierarchy(hierarchy, key_by="key", timestamp="ts")
    with pytest.raises(
        SnapshotError, match="taken by the other hierarchy engine: OnePassHierarchy restores only"
    ):
        one_pass.restore(levels.snapshot())
    with pytest.raises(
        SnapshotError, match="taken by the other hierarchy engine: HierarchyOperator restores only"
    ):
        levels.restore(one_pass.snapshot())


def test_a_snapshot_of_another_hierarchy_is_refused() -> None:
    one_pass = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts")
    other = OnePassHierarchy(outage_hierarchy("followed_by_any"), key_by="key", timestamp="ts")
    with pytest.raises(SnapshotError, match="different pattern"):
        one_pass.restore(other.snapshot())


def test_after_a_box_a_raw_step_takes_only_an_event_after_the_previous_one() -> None:
    h = (
        Hierarchy()
        .define("low", Pattern.begin("c").where(is_("c")))
        .define(
            "top",
            Pattern.begin("a")
            .where(is_("a"))
            .followed_by("i")
            .where(of_type("low"))
            .followed_by("b1")
            .where(is_("b"))
            .followed_by("b2")
            .where(is_("b")),
        )
    )
    events = [ev(1, "a"), ev(2, "c"), ev(3, "b", n=1), ev(3, "b", n=2), ev(4, "b", n=3)]
    operator = OnePassHierarchy(h, key_by="key", timestamp="ts")
    outputs = operator.process_elements(events) + operator.flush()
    assert [(o.value.match["b1"], o.value.match["b2"]) for o in outputs if o.kind == "match"] == [
        ([events[2]], [events[4]])
    ]


def test_auto_takes_the_one_pass_engine_for_a_hierarchy_of_its_class() -> None:
    assert type(hierarchy_operator(outage_hierarchy(), engine="auto", timestamp="ts")) is OnePassHierarchy


def test_auto_takes_the_levels_outside_the_class() -> None:
    h = Hierarchy().define("burst", Pattern.begin("a").where(is_("alarm")).times(3))
    assert type(hierarchy_operator(h, engine="auto", timestamp="ts")) is HierarchyOperator


def test_the_default_engine_is_auto() -> None:
    assert type(hierarchy_operator(outage_hierarchy(), timestamp="ts")) is OnePassHierarchy
    h = Hierarchy().define("burst", Pattern.begin("a").where(is_("alarm")).times(3))
    assert type(hierarchy_operator(h, timestamp="ts")) is HierarchyOperator


def test_detect_runs_the_chosen_engine() -> None:
    events = [ev(1, "start"), ev(2, "alarm", host="db"), ev(3, "alarm", host="db"), ev(4, "end")]
    [outage] = matches(run(outage_hierarchy(), events, engine="one_pass"))
    assert (outage.start, outage.end) == (1, 4)


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be one of 'levels', 'one_pass', 'auto', got 'fast'"):
        hierarchy_operator(outage_hierarchy(), engine="fast", timestamp="ts")


def test_complex_events_of_one_timestamp_reach_a_box_in_the_order_they_were_made() -> None:
    h = (
        Hierarchy()
        .define("low", Pattern.begin("a").where(is_("a")))
        .define(
            "top",
            Pattern.begin("s")
            .where(is_("s"))
            .followed_by("i")
            .where(of_type("low"))
            .followed_by("e")
            .where(is_("e")),
        )
    )
    events = [ev(1, "s"), ev(5, "a", n=1), ev(5, "a", n=2), ev(6, "e")]
    operator = OnePassHierarchy(h, key_by="key", timestamp="ts")
    outputs = operator.process_elements(events) + operator.flush()
    assert [o.value.match["i"][0].match for o in outputs if o.kind == "match"] == [{"a": [events[1]]}]


def test_a_condition_that_raises_makes_a_bad_record_of_its_level() -> None:
    operator = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts", on_error="side_output")
    broken = {"ts": 1, "key": "k"}  # no kind: every level's first condition raises
    outputs = operator.process_elements([broken, ev(2, "tick")])
    assert [(o.kind, o.level, o.value.record, o.value.stage, o.timestamp) for o in outputs] == [
        ("bad_record", "incident", broken, "condition", 1),
        ("bad_record", "outage", broken, "condition", 1),
    ]


def test_with_on_error_raise_a_bad_record_raises_after_the_call() -> None:
    operator = OnePassHierarchy(outage_hierarchy(), key_by="key", timestamp="ts")
    with pytest.raises(BadRecordError, match="condition raised KeyError") as raised:
        operator.process_elements([{"ts": 1, "key": "k"}, ev(2, "tick")])
    assert [o.level for o in raised.value.outputs] == ["incident", "outage"]


def test_next_after_a_box_needs_the_levels_next_input_event() -> None:
    h = (
        Hierarchy()
        .define("low", Pattern.begin("a").where(is_("a")))
        .define(
            "top",
            Pattern.begin("s")
            .where(is_("s"))
            .followed_by_any("i")
            .where(of_type("low"))
            .next("e")
            .where(is_("e")),
        )
    )
    events = [ev(1, "s"), ev(2, "a"), ev(3, "x"), ev(4, "e"), ev(5, "a"), ev(6, "e")]
    operator = OnePassHierarchy(h, key_by="key", timestamp="ts")
    outputs = operator.process_elements(events) + operator.flush()
    # the branch that took the low event at 2 dies at the raw event at 3; the one at 5 goes on
    assert [(o.value.start, o.value.end) for o in outputs if o.kind == "match"] == [(1, 6)]
