"""Building a hierarchy: names, dependencies, cycles and levels that cannot feed others."""

from __future__ import annotations

import pytest

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.hierarchy import Hierarchy, HierarchyError, HierarchyOperator, of_type
from tests.hierarchy.support import is_, pair


def reads(*types: str) -> Pattern:
    pattern = Pattern.begin("s0").where(of_type(types[0]))
    for i, name in enumerate(types[1:], 1):
        pattern = pattern.followed_by(f"s{i}").where(of_type(name))
    return pattern


def test_a_type_read_but_never_defined_is_rejected() -> None:
    h = Hierarchy().define("outage", reads("incident"))
    with pytest.raises(HierarchyError, match="'outage' reads 'incident', which is not defined"):
        h.build()


def test_a_cycle_is_rejected_and_named() -> None:
    h = Hierarchy().define("a", reads("b")).define("b", reads("c")).define("c", reads("a"))
    with pytest.raises(HierarchyError, match="cycle: a -> b -> c -> a"):
        h.build()


def test_a_type_that_reads_itself_is_a_cycle() -> None:
    h = Hierarchy().define("a", reads("a"))
    with pytest.raises(HierarchyError, match="cycle: a -> a"):
        h.build()


def test_a_name_is_defined_once() -> None:
    h = Hierarchy().define("incident", pair("alarm", "alarm"))
    with pytest.raises(HierarchyError, match="'incident' is defined twice"):
        h.define("incident", pair("alarm", "alarm"))


def test_levels_come_bottom_up_with_their_depth_and_readers() -> None:
    plan = (
        Hierarchy()
        .define("outage", reads("incident", "incident"))
        .define("alert", reads("outage"))
        .define("incident", pair("alarm", "alarm"))
        .define("report", reads("incident"))
        .build()
    )
    assert [(level.name, level.depth) for level in plan.levels] == [
        ("incident", 1),
        ("outage", 2),
        ("alert", 3),
        ("report", 2),
    ]
    assert plan.consumers["incident"] == ("outage", "report")
    assert plan.top == ("alert", "report")


def test_a_step_without_of_type_makes_the_level_read_raw_events() -> None:
    mixed = Pattern.begin("deploy").where(is_("deploy")).followed_by("i").where(of_type("incident"))
    plan = Hierarchy().define("incident", pair("alarm", "alarm")).define("bad_deploy", mixed).build()
    level = plan.level("bad_deploy")
    assert level.uses == ("incident",)
    assert level.reads_raw
    assert not plan.level("incident").uses


def test_of_type_inside_a_conjunction_still_reads_complex_events_only() -> None:
    pattern = Pattern.begin("i").where(of_type("incident")).where(lambda c: c.start > 0)
    plan = Hierarchy().define("incident", pair("alarm", "alarm")).define("big", pattern).build()
    assert plan.level("big").uses == ("incident",)
    assert not plan.level("big").reads_raw


def test_a_level_that_may_hold_matches_back_without_a_window_cannot_feed_another() -> None:
    held = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
        .where(is_("alarm"))
        .followed_by("b")
        .where(is_("alarm"))
    )
    h = Hierarchy().define("incident", held).define("outage", reads("incident"))
    with pytest.raises(
        HierarchyError, match="'incident' is read by a higher level but may hold its matches back"
    ):
        h.build()


def test_emit_must_name_defined_types() -> None:
    h = Hierarchy().define("incident", pair("alarm", "alarm"))
    with pytest.raises(HierarchyError, match=r"emit names unknown complex event types \['outage'\]"):
        HierarchyOperator(h, timestamp="ts", emit=["outage"])


def test_the_hierarchy_needs_a_timestamp_extractor() -> None:
    h = Hierarchy().define("incident", pair("alarm", "alarm"))
    with pytest.raises(TypeError, match="timestamp extractor"):
        HierarchyOperator(h, timestamp=None)  # type: ignore[arg-type]


def test_an_empty_hierarchy_is_rejected() -> None:
    with pytest.raises(HierarchyError, match="defines no complex event type"):
        Hierarchy().build()
