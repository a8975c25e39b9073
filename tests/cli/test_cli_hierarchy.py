"""Pattern files that define an event hierarchy (``hierarchy = Hierarchy()...``): run and explain."""

from __future__ import annotations

from flowcep.cli_support.errors import EXIT_PATTERN

from .conftest import EXAMPLES

OUTAGES = EXAMPLES / "server_outages.py"
DATA = EXAMPLES / "data" / "outage_events.jsonl"
FLAGS = ("--key", "dc", "--timestamp", "time")


def test_run_writes_every_level_with_its_name(cli):
    r = cli("run", OUTAGES, DATA, *FLAGS)
    assert r.status == 0, r.err
    matches = [(x["level"], x["key"], x["match"]["attributes"]) for x in r.records if x["kind"] == "match"]
    assert matches == [
        ("incident", "eu", {"host": "eu-2"}),
        ("incident", "eu", {"host": "eu-3"}),
        ("outage", "eu", {"hosts": ["eu-2", "eu-3"]}),
        ("incident", "us", {"host": "us-1"}),
        ("incident", "us", {"host": "us-4"}),
        ("incident", "us", {"host": "us-2"}),
        ("outage", "us", {"hosts": ["us-4", "us-2"]}),
        ("escalation", "us", {"hosts": ["us-4", "us-2"]}),
    ]
    assert "53 events" in r.err and "8 matches, 50 timeouts, 0 late" in r.err


def test_run_writes_complex_events_with_their_interval_and_constituents(cli):
    records = cli("run", OUTAGES, DATA, *FLAGS).records
    outage = next(x["match"] for x in records if x.get("level") == "outage")
    assert (outage["type"], outage["start"], outage["end"]) == ("outage", 1772440800500, 1772441145500)
    first = outage["match"]["first"][0]
    assert (first["type"], first["attributes"], len(first["match"]["more"])) == (
        "incident",
        {"host": "eu-2"},
        2,
    )
    assert first["match"]["first"][0] == {"time": 1772440800500, "dc": "eu", "host": "eu-2", "event": "alarm"}


def test_explain_lists_the_levels_then_each_pattern(cli):
    r = cli("explain", OUTAGES)
    assert r.status == 0, r.err
    assert r.out.splitlines()[:4] == [
        f"hierarchy {OUTAGES}",
        "  level 1  incident     reads raw events; read by outage",
        "  level 2  outage       reads incident; read by escalation",
        "  level 3  escalation   reads raw events, outage; top level",
    ]
    assert "pattern escalation" in r.out and "steps:          outage, not_followed_by ack" in r.out


def test_explain_draws_the_hierarchy(cli):
    r = cli("explain", OUTAGES, "--dot", "-")
    assert r.status == 0, r.err
    for edge in (
        'raw -> "incident";',
        '"incident" -> "outage";',
        '"outage" -> "escalation";',
        'raw -> "escalation";',
    ):
        assert edge in r.out, edge


def test_a_hierarchy_with_a_cycle_is_a_bad_pattern_file(cli, write):
    p = write(
        "h.py",
        """
        from flowcep import Pattern
        from flowcep.hierarchy import Hierarchy, of_type
        hierarchy = Hierarchy().define("a", Pattern.begin("x").where(of_type("b"))).define(
            "b", Pattern.begin("y").where(of_type("a"))
        )
        """,
    )
    r = cli("explain", p)
    assert r.status == EXIT_PATTERN
    assert (
        r.err.startswith("flowcep: error: bad hierarchy in")
        and "the hierarchy has a cycle: a -> b -> a" in r.err
    )
