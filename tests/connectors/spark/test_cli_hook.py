"""run_cli: the hook behind ``flowcep run --engine spark``."""

from __future__ import annotations

import json

from flowcep.cli_support.spark_engine import run_cli

from .conftest import reference
from .data import abc_pattern, events


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r.asDict()) + "\n" for r in rows), encoding="utf-8")


def test_run_cli_yields_the_cli_records_in_time_order(spark, tmp_path):
    rows = events(400, users=5, seed=21)
    path = tmp_path / "events.jsonl"
    _write_jsonl(path, rows)
    records = list(run_cli(abc_pattern(), str(path), "jsonl", "user", "ms", 0, None))
    assert {r["kind"] for r in records} == {"match", "timeout"}
    got = {}
    for r in records:
        k = (
            r["kind"],
            r["key"],
            tuple((step, tuple(e["id"] for e in evs)) for step, evs in r["match"].items()),
        )
        got[k] = got.get(k, 0) + 1
    assert got == dict(reference(rows, abc_pattern(), key="user"))
    stamps = [r["timestamp"] for r in records]
    assert stamps == sorted(stamps)
    assert spark.sparkContext._jsc is not None  # the caller's session is left running


def test_run_cli_applies_select_to_matches_and_reports_bad_rows(spark, tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(
        "id,user,type,amount,ms\n1,u,a,1.0,1000\n2,u,b,1.0,1010\n3,u,c,5.0,1020\n4,,a,1.0,1030\n5,u,a,1.0,soon\n",
        encoding="utf-8",
    )
    records = list(
        run_cli(abc_pattern(), str(path), "csv", "user", "ms", "5 seconds", lambda m: [e.id for e in m["b"]])
    )
    by_kind = {}
    for r in records:
        by_kind.setdefault(r["kind"], []).append(r)
    assert [r["value"] for r in by_kind["match"]] == [[2]]
    assert by_kind["match"][0]["timestamp"] == 1020 and by_kind["match"][0]["key"] == "u"
    invalid = sorted((r["event"]["id"], r["error"]) for r in by_kind["invalid"])
    assert invalid == [
        (4, "the key column(s) user are null"),
        (5, "the timestamp 'soon' in column ms cannot be parsed"),
    ]


def test_run_cli_shapes_timeouts_with_the_pattern_files_timeout_function(spark, tmp_path):
    rows = events(400, users=5, seed=21)
    path = tmp_path / "events.jsonl"
    _write_jsonl(path, rows)

    def timeout(partial):
        return {step: [e.id for e in evs] for step, evs in partial.items()}

    records = list(run_cli(abc_pattern(), str(path), "jsonl", "user", "ms", 0, None, timeout))
    timeouts = [r for r in records if r["kind"] == "timeout"]
    assert timeouts and all("match" not in r for r in timeouts)
    got = {}
    for r in timeouts:
        k = ("timeout", r["key"], tuple((step, tuple(ids)) for step, ids in r["value"].items()))
        got[k] = got.get(k, 0) + 1
    expected = {k: n for k, n in reference(rows, abc_pattern(), key="user").items() if k[0] == "timeout"}
    assert got == expected
