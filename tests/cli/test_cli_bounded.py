"""``flowcep run --evaluator`` and ``flowcep explain --evaluator``: the bounded-data evaluators."""

from __future__ import annotations

import pytest

ABC_ANY = """
    from flowcep import Pattern

    pattern = (
        Pattern.begin("a").where(lambda e: e.kind == "a")
        .followed_by_any("b").where(lambda e: e.kind == "b").where(lambda e, ctx: e.price < ctx.get_events_for_pattern("a")[0].price)
        .followed_by_any("c").where(lambda e: e.kind == "c")
        .within(10)
    )
"""

EVENTS = """\
user,kind,price,timestamp
u1,a,5,1
u2,a,5,2
u1,b,4,3
u1,b,6,4
u2,b,1,5
u1,c,0,6
u1,a,9,7
u2,c,0,8
u1,c,0,9
u1,a,1,2
"""


def matches(run) -> list[str]:
    return sorted(str(r) for r in run.records if r["kind"] == "match")


@pytest.mark.parametrize("evaluator", ["optiseq", "tree", "auto"])
def test_run_gives_the_nfa_matches_and_late_events(cli, write, evaluator):
    p = write("p.py", ABC_ANY)
    data = write("events.csv", EVENTS)
    nfa = cli("run", p, data, "--key", "user", "-q")
    bounded = cli("run", p, data, "--key", "user", "-q", "--evaluator", evaluator)
    assert bounded.status == nfa.status == 0
    assert len(matches(nfa)) == 3
    assert matches(bounded) == matches(nfa)
    assert [r for r in bounded.records if r["kind"] == "late"] == [
        r for r in nfa.records if r["kind"] == "late"
    ]


def test_run_refuses_a_pattern_the_evaluator_does_not_serve(cli, write):
    p = write("p.py", ABC_ANY.replace("followed_by_any", "followed_by"))
    data = write("events.csv", EVENTS)
    run = cli("run", p, data, "--evaluator", "tree")
    assert run.status != 0
    assert "--evaluator tree: not supported by the bounded evaluators: followed_by before step 'b'" in run.err


def test_the_spark_engine_refuses_a_bounded_evaluator_where_its_output_has_timeouts(cli, write):
    # --engine spark writes timeouts; this pattern has a window: only the NFA gives them
    p = write("p.py", ABC_ANY)
    data = write("events.csv", EVENTS)
    run = cli("run", p, data, "--engine", "spark", "--evaluator", "tree")
    assert run.status != 0
    assert "--evaluator tree: evaluator='tree' does not serve timed-out partial matches" in run.err


def test_explain_prints_the_plan_over_an_input(cli, write):
    p = write("p.py", ABC_ANY)
    data = write("events.csv", EVENTS)
    run = cli("explain", p, "--evaluator", "auto", "--input", data, "--key", "user")
    assert run.status == 0
    text = run.out[run.out.index("bounded plan over 7 events:") :]
    assert "optiseq: list sizes a=3, b=2, c=2" in text  # user u1, late a@2 included
    assert "optiseq: start list b, forward first, order b -> c -> a" in text
    assert "tree: predicate [b: " in text and "] at a ; b" in text
    assert "estimated cost: nfa " in text


def test_explain_without_input_says_whether_the_pattern_is_served(cli, write):
    p = write("p.py", ABC_ANY.replace('.followed_by_any("c")', '.next("c")'))
    run = cli("explain", p, "--evaluator", "tree")
    assert (
        "bounded evaluators: not served by optiseq and tree: next before step 'c' (only followed_by_any)"
        in run.out
    )
