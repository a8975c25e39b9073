"""The planner: which evaluator ``auto`` picks, and what it says."""

from __future__ import annotations

import pytest
from core.helpers import Event, named

from flowcep import Pattern
from flowcep.bounded import evaluate, plan, timestamps


def abcd(window: int):
    return (
        Pattern.begin("a").where(named("a"))
        .followed_by_any("b").where(named("b"))
        .followed_by_any("c").where(named("c"))
        .followed_by_any("d").where(named("d"))
        .within(window)
    )  # fmt: skip


def stream(n: int, rare: str) -> list[Event]:
    """a, b, c, d in turn, one event per ms, the ``rare`` one only every 100th round."""
    out = []
    for i in range(n):
        name = "abcd"[i % 4]
        if name == rare and i % 400 >= 4:
            name = "x"
        out.append(Event(name=name, ts=i, id=i))
    return out


def test_a_rare_last_step_starts_the_expansion_and_auto_leaves_the_nfa():
    evs = stream(4000, "d")
    chosen = plan(abcd(40), evs, timestamps(evs, "ts"))
    assert chosen.evaluator in ("optiseq", "tree")
    assert chosen.reason == "lowest estimate, below 0.6 x the NFA's"
    assert chosen.costs[chosen.evaluator] < 0.6 * chosen.costs["nfa"]
    text = chosen.explain()
    assert "optiseq: start list d, backward first, order d -> c -> b -> a" in text


def test_the_start_list_is_the_shortest_and_the_direction_follows_the_shorter_side():
    evs = [Event(name=n, ts=i, id=i) for i, n in enumerate("aaaabbcdddd")]
    chosen = plan(abcd(100), evs, timestamps(evs, "ts"), "optiseq")
    assert chosen.optiseq is not None
    # sizes a=4 b=2 c=1 d=4: start at c; before it 3 on average, after it 4: backward first
    assert chosen.optiseq.sizes == (4, 2, 1, 4)
    assert chosen.optiseq.order == (2, 1, 0, 3)


def test_auto_runs_a_key_with_few_events_on_the_nfa_without_planning():
    evs = stream(31, "x")
    chosen = plan(abcd(40), evs, timestamps(evs, "ts"))
    assert chosen.evaluator == "nfa"
    assert chosen.reason == "31 events, fewer than 32: planning would cost more than it saves"
    assert chosen.costs == {}


@pytest.mark.parametrize("evaluator", ["auto", "optiseq", "tree"])
def test_a_step_no_event_passes_means_no_match_and_no_plan(evaluator):
    evs = [Event(name=n, ts=i, id=i) for i, n in enumerate("abc" * 20)]
    chosen = plan(abcd(100), evs, timestamps(evs, "ts"), evaluator)
    assert chosen.evaluator == ("optiseq" if evaluator == "auto" else evaluator)
    assert chosen.reason == "no event passes the conditions of step 'd': no match"
    assert chosen.optiseq is None and chosen.tree is None
    assert evaluate(abcd(100), evs, timestamp="ts", evaluator=evaluator) == []
