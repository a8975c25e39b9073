"""What each level is given and checks: the raw events its steps may accept, and only the checks
its input order does not already make hold (docs/semantics.md 11.7). Results stay those of
11.2 to 11.4; tests/hierarchy/test_equivalence.py holds the whole to running every level with
every raw event and every check."""

from __future__ import annotations

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.hierarchy import Hierarchy, HierarchyOperator, Level, of_type
from flowcep.hierarchy.engine import interval_of
from flowcep.nfa import NFACompiler
from tests.hierarchy.support import ev, is_, pair, run, spans


def acked(contiguity: str = "followed_by") -> Pattern:
    """An alarm, then an incident, then an ack."""
    start = Pattern.begin("alarm").where(is_("alarm"))
    box = getattr(start, contiguity)("i").where(of_type("incident"))
    return getattr(box, contiguity)("ack").where(is_("ack")).within(20)


def level(pattern: Pattern) -> Level:
    plan = Hierarchy().define("incident", pair("open", "close")).define("acked", pattern).build()
    return plan.level("acked")


def test_a_level_is_given_only_raw_events_one_of_its_raw_steps_may_accept() -> None:
    accepts = level(acked()).raw_filter()
    assert accepts is not None
    assert [accepts(ev(1, kind)) for kind in ("alarm", "ack", "open", "close", "noise")] == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_every_raw_event_reaches_a_level_with_strict_contiguity() -> None:
    # under next, an event no step accepts breaks a partial match
    assert level(acked("next")).raw_filter() is None


def test_every_raw_event_reaches_a_level_with_a_quantifier_a_negation_or_a_skip_strategy() -> None:
    looping = Pattern.begin("i").where(of_type("incident")).followed_by("ack").where(is_("ack")).one_or_more()
    optional = Pattern.begin("i").where(of_type("incident")).followed_by("ack").where(is_("ack")).optional()
    negated = Pattern.begin("i").where(of_type("incident")).not_followed_by("ack").where(is_("ack")).within(9)
    skipping = (
        Pattern.begin("i", AfterMatchSkipStrategy.skip_past_last_event())
        .where(of_type("incident"))
        .followed_by("ack")
        .where(is_("ack"))
    )
    for pattern in (looping, optional, negated, skipping):
        assert level(pattern).raw_filter() is None


def test_every_raw_event_reaches_a_level_with_a_raw_step_that_reads_the_partial_match() -> None:
    reads = Pattern.begin("i").where(of_type("incident")).followed_by("ack").where(lambda e, ctx: True)
    assert level(reads).raw_filter() is None


def test_the_raw_events_no_step_accepts_never_reach_the_level() -> None:
    h = Hierarchy().define("incident", pair("open", "close")).define("acked", acked())
    operator = HierarchyOperator(h, key_by="key", timestamp="ts")
    events = [ev(1, "alarm"), ev(2, "noise"), ev(3, "open"), ev(4, "noise"), ev(5, "close"), ev(6, "ack")]
    out = operator.process_elements(events) + operator.flush()
    assert [(o.value.start, o.value.end) for o in out if o.kind == "match"] == [(1, 6)]
    stats = operator.stats()["levels"]
    assert (stats["incident"]["events_in"], stats["acked"]["events_in"]) == (6, 3)  # alarm, ack, incident


def test_a_raw_step_right_after_a_complex_step_decides_for_all_runs_at_once() -> None:
    # the level starts with a raw step: its window is the operator's; an ack after the incident's
    # end is after every event of the partial match, as raw events come first at one timestamp
    bound = level(acked()).bound_pattern(interval_of(lambda e: e["ts"]))
    box, ack = bound.previous, bound
    assert box is not None and box.condition.compile()[1] is True  # the incident must start after the alarm
    assert ack.condition.compile()[1] is False


def test_a_raw_event_at_the_end_of_the_complex_event_before_it_does_not_follow_it() -> None:
    h = Hierarchy().define("incident", pair("open", "close")).define("acked", acked())
    events = [ev(1, "alarm"), ev(2, "open"), ev(5, "close"), ev(5, "ack"), ev(7, "ack")]
    assert spans(run(h, events)) == [(1, 7)]


def test_a_box_steps_check_is_a_guard_the_nfa_shares_among_the_runs_it_does_not_reach() -> None:
    # raw events fail of_type before the check: the box's runs share one decision for them
    bound = level(acked()).bound_pattern(interval_of(lambda e: e["ts"]))
    slots = NFACompiler.compile(bound)._slots
    assert slots["i"].guarded


def test_a_restored_run_checks_precedence_from_its_partial_match() -> None:
    # the alarm at 3 does not end before the incident [2, 5] starts; the runs waiting for the
    # incident come back from a snapshot without the chain of their partial matches
    h = Hierarchy().define("incident", pair("open", "close")).define("acked", acked())
    events = [ev(1, "alarm"), ev(2, "open"), ev(3, "alarm"), ev(5, "close"), ev(7, "ack")]
    first = HierarchyOperator(h, key_by="key", timestamp="ts")
    out = first.process_elements(events[:3])
    second = HierarchyOperator(h, key_by="key", timestamp="ts")
    second.restore(first.snapshot())
    out += second.process_elements(events[3:]) + second.flush()
    assert spans(out) == [(1, 7)]


def escalated() -> Pattern:
    """An incident, then a page, within 10: the level starts with a complex step, so the page's
    check counts the nested window from the incident's start."""
    return Pattern.begin("i").where(of_type("incident")).followed_by("page").where(is_("page")).within(10)


def test_a_step_after_a_complex_first_step_ends_within_the_window_from_its_start() -> None:
    h = Hierarchy().define("incident", pair("open", "close")).define("escalated", escalated())
    assert spans(run(h, [ev(2, "open"), ev(5, "close"), ev(11, "page")])) == [(2, 11)]


def test_a_step_after_a_complex_first_step_that_ends_a_window_after_its_start_is_refused() -> None:
    h = Hierarchy().define("incident", pair("open", "close")).define("escalated", escalated())
    assert spans(run(h, [ev(2, "open"), ev(5, "close"), ev(12, "page")])) == []
