"""`flowcep run --max-partial-matches-per-key / --max-partial-matches / --on-limit`."""

from __future__ import annotations

from flowcep.cli_support.errors import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE

from .conftest import AB_PATTERN

STARTS_CSV = """
    timestamp,user,kind
    1000,u1,a
    1001,u1,a
    1002,u1,a
    1003,u1,b
"""


def test_a_limit_per_key_writes_the_dropped_partial_matches(cli, write):
    pattern = write("ab.py", AB_PATTERN)
    data = write("in.csv", STARTS_CSV)
    r = cli("run", pattern, data, "--key", "user", "--max-partial-matches-per-key", "2", "--quiet")
    assert r.status == EXIT_OK, r.err
    assert r.records[0] == {
        "kind": "dropped",
        "key": "u1",
        "timestamp": 1002,
        "match": {"a": [{"timestamp": 1000, "user": "u1", "kind": "a"}]},
        "start_timestamp": 1000,
        "limit": "key",
    }
    assert [(rec["kind"], rec["match"]["a"][0]["timestamp"]) for rec in r.records[1:]] == [
        ("match", 1001),
        ("match", 1002),
    ]


def test_drop_newest_keeps_the_first_partial_matches(cli, write):
    pattern = write("ab.py", AB_PATTERN)
    data = write("in.csv", STARTS_CSV)
    r = cli("run", pattern, data, "--max-partial-matches", "1", "--on-limit", "drop_newest")
    assert r.status == EXIT_OK, r.err
    assert [(rec["kind"], rec["match"]["a"][0]["timestamp"]) for rec in r.records] == [
        ("dropped", 1001),
        ("dropped", 1002),
        ("match", 1000),
    ]
    assert "2 partial matches dropped" in r.err


def test_fail_stops_the_run_naming_the_limit(cli, write):
    pattern = write("ab.py", AB_PATTERN)
    data = write("in.csv", STARTS_CSV)
    r = cli("run", pattern, data, "--max-partial-matches-per-key", "2", "--on-limit", "fail")
    assert r.status == EXIT_RUNTIME
    assert "key None holds 3 partial matches, more than 2" in r.err


def test_on_limit_without_a_limit_is_a_usage_error(cli, write):
    pattern = write("ab.py", AB_PATTERN)
    data = write("in.csv", STARTS_CSV)
    r = cli("run", pattern, data, "--on-limit", "fail")
    assert r.status == EXIT_USAGE
    assert "--on-limit needs --max-partial-matches-per-key or --max-partial-matches" in r.err
