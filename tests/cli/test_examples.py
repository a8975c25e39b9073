"""Every example runs on its bundled data and finds exactly what the data was built to contain.

The expected results were worked out from examples/generate_data.py and the data files (see the
docstrings there), then confirmed by running the examples.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from .conftest import EXAMPLES


def load(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name), run_name="__flowcep__")


def test_stock_trend():
    ex = load("stock_trend.py")
    trends = ex["main"]()
    got = [(t.symbol, t.start[11:16], t.end[11:16], t.ticks, t.drop_time[11:16]) for t in trends]
    # Only trend ticks have volume > 1000, so only they start runs; each trend is followed at once by
    # a tick under 80% of the last trend tick's volume and under the trend's average price, so the
    # greedy loop stops there, `drop` takes it, and skip_past_last_event drops the overlapping runs.
    assert got == [
        ("ACME", "09:46", "09:50", 5, "09:51"),
        ("BOLT", "10:01", "10:03", 3, "10:04"),
        ("ACME", "10:28", "10:30", 3, "10:31"),
        ("CRUX", "10:28", "10:31", 4, "10:32"),
        ("BOLT", "10:58", "11:03", 6, "11:04"),
        ("CRUX", "11:44", "11:46", 3, "11:47"),
    ]
    first = trends[0]
    assert (first.first_price, first.last_price, first.last_volume, first.drop_volume) == (
        102.88,
        105.98,
        2178,
        754,
    )
    assert ex["report"](trends)[-1] == "6 trends"


def test_server_alerts():
    ex = load("server_alerts.py")
    result = ex["main"]()
    fmt = __import__("flowcep.cli_support.timeparse", fromlist=["format_timestamp"]).format_timestamp

    def hms(ms: int) -> str:
        return fmt(ms)[11:19]

    # web-02 10:12 and web-04 11:41: alarm, three failures, no clearing before alarm + 5 min.
    assert [
        (a.host, hms(a.alarm_time), a.metric, [hms(t) for t in a.failure_times]) for a in result.alerts
    ] == [
        ("web-02", "10:12:04", "cpu", ["10:12:39", "10:12:54", "10:13:24"]),
        ("web-04", "11:41:21", "memory", ["11:41:46", "11:42:01", "11:42:26"]),
    ]
    # web-02 11:20: the third failure comes 5:40 after the alarm, so the run times out with two.
    # web-03 10:30 (cleared after its three failures) and web-01 10:47 (cleared between its first
    # and second failure: the stop edge sits on the repetitions of `failures`, as in Flink) end
    # without output; web-04 11:05 has failures but no alarm.
    assert [(u.host, hms(u.alarm_time), u.failures) for u in result.unconfirmed] == [
        ("web-02", "11:20:02", 2)
    ]
    # one request of web-03 arrives 3 minutes late, beyond the 30 s out-of-orderness
    assert [(e.host, e.event, hms(e.time)) for e in result.late] == [("web-03", "request", "11:00:03")]


def test_fraud_rules_edited_while_the_stream_runs():
    ex = load("fraud_rules.py")
    assert ex["main"]() == [
        "probe-then-big v1  card-1001  11:31:13-11:35:33  1.00 (ES) -> 1320.00 (RU)",
        "probe-then-big v1  card-1003  14:02:31-14:10:00  1.00 (DE) -> 1899.00 (BR)",
        "   -- 15:30:00 rule set edited: probe-then-big v2, probe-then-big-home added, big-spree removed",
        "probe-then-big-home v1  card-1002  16:20:19-16:25:19  2.50 (ES) -> 820.00 (ES)",
        "probe-then-big v2  card-1007  19:03:50-19:06:30  1.50 (IT) -> 640.00 (GB)",
        "4 alerts",
    ]
    # without the edit, big-spree v1 would have reported card-1007's 640.00 and 980.00
    unedited = ex["RuleDirectory"](ex["RULES"]).current()
    payments = ex["read_events"](ex["DATA"])
    stream = ex["CEP"].patterns(
        payments, unedited, key_by="card", timestamp=lambda p: ex["parse_timestamp"](p.time)
    )
    assert [(o.pattern, o.key) for o in stream if o.kind == "match" and o.pattern == "big-spree"] == [
        ("big-spree", "card-1007")
    ]


def test_card_fraud():
    ex = load("card_fraud.py")
    frauds = ex["main"]()
    assert [(f.card, f.probe_time[11:19], f.time[11:19], f.amount, f.country) for f in frauds] == [
        # two probes, one report: skip_past_last_event prunes the second probe's run
        ("card-1001", "11:31:13", "11:35:33", 1320.0, "RU"),
        ("card-1003", "14:02:31", "14:10:00", 1899.0, "BR"),
        # followed_by takes the first large purchase abroad; the run is then complete
        ("card-1007", "19:03:50", "19:06:30", 640.0, "GB"),
    ]
    # card-1002 (probe and large purchase in the same country), card-1005 (25 minutes apart) and
    # card-1004 (large purchase at home, no probe) are not reported.


def test_flink_port():
    ex = load("flink_port_local.py")
    assert ex["main"]() == [
        "alice logged in after 4 failed attempts",
        "erin logged in after 3 failed attempts",
    ]
    # bob never gets in, carol's success comes after the 2-minute window, dave fails only twice,
    # and erin's first two failures are broken off by a success (consecutive()).


def test_flink_port_uses_the_camel_case_names():
    text = (EXAMPLES / "flink_port_local.py").read_text()
    code = text.split('"""', 2)[2]
    for name in ("skipPastLastEvent()", "timesOrMore(3)", ".consecutive()", '.next("success")'):
        assert name in code
    java = text.split('"""', 2)[1]
    assert "Pattern<LoginEvent, ?>" in java and "SimpleCondition.of" in java


def test_server_outages():
    ex = load("server_outages.py")
    got = [(f.level, f.dc, f.what) for f in sorted(ex["main"](), key=lambda f: (f.start, f.level))]
    # five planted bursts of three alarms make the incidents; the two pairs of bursts of other
    # hosts 5 and 6 minutes apart the outages; only the us one is never acknowledged
    assert got == [
        ("incident", "eu", "eu-2"),
        ("outage", "eu", "eu-2 + eu-3"),
        ("incident", "eu", "eu-3"),
        ("incident", "us", "us-1"),
        ("escalation", "us", "us-4 + us-2"),
        ("incident", "us", "us-4"),
        ("outage", "us", "us-4 + us-2"),
        ("incident", "us", "us-2"),
    ]


def test_server_outages_data_is_what_its_generator_writes():
    ex = load("server_outages.py")
    lines = [json.dumps(e, separators=(",", ":")) for e in ex["generate"]()]
    assert (EXAMPLES / "data" / "outage_events.jsonl").read_text().splitlines() == lines


@pytest.mark.parametrize(
    ("example", "data", "flags", "matches", "timeouts", "late"),
    [
        ("stock_trend.py", "stocks.csv", ["--key", "symbol", "--timestamp", "time"], 6, 0, 0),
        (
            "server_alerts.py",
            "server_events.jsonl",
            ["--key", "host", "--timestamp", "time", "-d", "30s"],
            2,
            1,
            1,
        ),
        ("card_fraud.py", "card_transactions.csv", ["--key", "card", "--timestamp", "time"], 3, 2, 0),
        ("flink_port_local.py", "logins.csv", ["--key", "user", "--timestamp", "time", "-d", "5s"], 2, 9, 0),
    ],
)
def test_examples_are_pattern_files_for_flowcep_run(cli, example, data, flags, matches, timeouts, late):
    r = cli("run", EXAMPLES / example, EXAMPLES / "data" / data, *flags)
    assert r.status == 0, r.err
    kinds = [x["kind"] for x in r.records]
    assert (kinds.count("match"), kinds.count("timeout"), kinds.count("late")) == (matches, timeouts, late)


def test_generator_is_deterministic_and_reproduces_the_committed_data(tmp_path: Path):
    gen = runpy.run_path(str(EXAMPLES / "generate_data.py"), run_name="__flowcep__")
    gen["generate"](tmp_path)
    for name in ("stocks.csv", "server_events.jsonl", "card_transactions.csv", "logins.csv"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / "data" / name).read_bytes(), name


def test_generated_data_scales(tmp_path: Path):
    gen = runpy.run_path(str(EXAMPLES / "generate_data.py"), run_name="__flowcep__")
    counts = gen["generate"](tmp_path, scale=3)
    assert counts["stocks.csv"] == 3 * 540
    # every day has the same planted situations
    assert len(load("stock_trend.py")["main"](tmp_path / "stocks.csv")) == 18
    assert len(load("card_fraud.py")["main"](tmp_path / "card_transactions.csv")) == 9
    assert len(load("flink_port_local.py")["main"](tmp_path / "logins.csv")) == 6
    assert len(load("server_alerts.py")["main"](tmp_path / "server_events.jsonl").alerts) == 6
