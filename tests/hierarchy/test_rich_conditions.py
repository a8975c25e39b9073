"""Rich conditions in a hierarchy: each level's ``RichIterativeCondition``s are opened once before
the first event and closed once after the last, through ``detect`` and ``with HierarchyOperator``."""

from __future__ import annotations

from typing import Any, ClassVar

from flowcep import Pattern, RichIterativeCondition
from flowcep.hierarchy import Hierarchy, HierarchyOperator, of_type
from tests.hierarchy.support import ev, is_, run, spans


class Opened(RichIterativeCondition):
    """``kind == wanted``, known only once ``open`` ran (``filter`` fails before). Opens and
    closes go to a class-level log: a level that reads complex events runs a copy of its
    pattern, so an instance's own list would be the copy's."""

    log: ClassVar[list[str]] = []

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind
        self.wanted: str | None = None

    def open(self, context: Any) -> None:
        self.wanted = self.kind
        Opened.log.append(f"open {self.name}")

    def close(self) -> None:
        Opened.log.append(f"close {self.name}")

    def filter(self, value: Any, ctx: Any) -> bool:
        assert self.wanted is not None, f"{self.name} was not opened"
        return bool(value["kind"] == self.wanted)


def test_detect_opens_and_closes_the_rich_conditions_of_every_level() -> None:
    Opened.log = []
    incident = Pattern.begin("a").where(is_("alarm")).followed_by("b").where(Opened("second alarm", "alarm"))
    outage = (
        Pattern.begin("i")
        .where(of_type("incident"))
        .followed_by("j")
        .where(of_type("incident"))
        .followed_by("r")
        .where(Opened("reboot", "reboot"))
    )
    h = Hierarchy().define("incident", incident).define("outage", outage)
    events = [ev(1, "alarm"), ev(2, "alarm"), ev(5, "alarm"), ev(6, "alarm"), ev(9, "reboot")]
    outputs = run(h, events, emit=["incident", "outage"])
    assert spans(outputs, "incident") == [(1, 2), (2, 5), (5, 6)]
    assert spans(outputs, "outage") == [(1, 9)]
    assert sorted(Opened.log[:2]) == ["open reboot", "open second alarm"]
    assert sorted(Opened.log[2:]) == ["close reboot", "close second alarm"]


def test_a_condition_two_levels_share_is_opened_once() -> None:
    Opened.log = []
    shared = Opened("alarm", "alarm")
    h = (
        Hierarchy()
        .define("double", Pattern.begin("a").where(shared).followed_by("b").where(shared))
        .define("alarm_then_reboot", Pattern.begin("a").where(shared).followed_by("r").where(is_("reboot")))
    )
    outputs = run(h, [ev(1, "alarm"), ev(2, "alarm"), ev(3, "reboot")])
    assert spans(outputs, "double") == [(1, 2)]
    assert spans(outputs, "alarm_then_reboot") == [(1, 3), (2, 3)]
    assert Opened.log == ["open alarm", "close alarm"]


def test_with_a_hierarchy_operator_opens_then_closes() -> None:
    Opened.log = []
    h = Hierarchy().define("incident", Pattern.begin("a").where(Opened("alarm", "alarm")))
    with HierarchyOperator(h, key_by="key", timestamp="ts") as op:
        assert Opened.log == ["open alarm"]
        out = op.process_element(ev(1, "alarm")) + op.flush()
    assert [(o.level, o.value.start) for o in out] == [("incident", 1)]
    assert Opened.log == ["open alarm", "close alarm"]
