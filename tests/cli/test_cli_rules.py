"""`flowcep run rule.json` and `flowcep explain rule.json`: JSON rules on the command line."""

from __future__ import annotations

import json

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_OK, EXIT_PATTERN

RULE = {
    "name": "ab",
    "type": "COMPOSITE",
    "nodes": [
        {
            "name": "b",
            "type": "ATOMIC",
            "quantifier": {"consumingStrategy": "SKIP_TILL_NEXT", "properties": ["SINGLE"]},
            "condition": {"type": "SQL", "expression": "kind = 'b' AND amount > a.amount"},
        },
        {
            "name": "a",
            "type": "ATOMIC",
            "quantifier": {"consumingStrategy": "SKIP_TILL_NEXT", "properties": ["SINGLE"]},
            "condition": {"type": "AVIATOR", "expression": "kind == 'a'"},
        },
    ],
    "edges": [{"source": "a", "target": "b", "type": "SKIP_TILL_NEXT"}],
    "window": {"type": "FIRST_AND_LAST", "time": {"unit": "SECONDS", "size": 10}},
    "afterMatchStrategy": {"type": "SKIP_PAST_LAST_EVENT", "patternName": None},
    "version": 1,
}

EVENTS_CSV = """
    timestamp,user,kind,amount
    1000,u1,a,5
    2000,u1,b,3
    3000,u1,b,8
    4000,u2,a,1
    5000,u2,b,2
"""


def test_run_matches_a_json_rule(cli, write):
    rule = write("rule.json", json.dumps(RULE))
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", rule, data, "--key", "user")
    assert r.status == EXIT_OK, r.err
    found = [
        (x["key"], [e["timestamp"] for step in ("a", "b") for e in x["match"][step]])
        for x in r.records
        if x["kind"] == "match"
    ]
    assert found == [("u1", [1000, 3000]), ("u2", [4000, 5000])]


def test_explain_describes_a_json_rule(cli, write):
    rule = write("rule.json", json.dumps(RULE))
    r = cli("explain", rule)
    assert r.status == EXIT_OK, r.err
    assert "steps:          a, followed_by b\n" in r.out
    assert "skip strategy:  skip_past_last_event()\n" in r.out


def test_a_bad_rule_names_the_json_path(cli, write):
    bad = json.loads(json.dumps(RULE))
    bad["edges"][0]["type"] = "FOLLOWED_BY"
    rule = write("rule.json", json.dumps(bad))
    r = cli("explain", rule)
    assert r.status == EXIT_PATTERN
    assert "bad rule file" in r.err
    assert "$.edges[0].type: unknown value 'FOLLOWED_BY'" in r.err


def test_a_file_of_several_rules_is_refused_by_run(cli, write):
    rule = write("rules.json", json.dumps([RULE, RULE]))
    r = cli("explain", rule)
    assert r.status == EXIT_PATTERN
    assert "it holds 2 rules; this command runs one rule" in r.err


def test_a_rule_without_sqlglot_installed_is_a_missing_dependency(cli, write, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "flowcep.sql.query", None)  # as if sqlglot were not installed
    rule = write("rule.json", json.dumps(RULE))
    r = cli("explain", rule)
    assert r.status == EXIT_DEPENDENCY
    assert "expression conditions are parsed by sqlglot: pip install 'flowcep[sql]'" in r.err
