"""`flowcep run`: output records, options, and errors with their exit statuses."""

import gc
import gzip
import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_INPUT, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE

from .conftest import AB_PATTERN, REPO

EVENTS_CSV = """
    timestamp,user,kind
    1000,u1,a
    2000,u2,a
    3000,u1,x
    4000,u1,b
    30000,u2,b
"""


@pytest.fixture
def ab(write):
    return write("ab.py", AB_PATTERN)


@pytest.fixture
def ab_and(write):
    """ab_and(source) -> a pattern file: AB_PATTERN followed by ``source`` (select, timeout...)."""
    return lambda source: write("p.py", AB_PATTERN + source)


def test_matches_and_timeouts_as_json_lines(cli, write, ab):
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", ab, data, "--key", "user")
    assert r.status == EXIT_OK, r.err
    recs = r.records
    assert recs[0] == {
        "kind": "match",
        "key": "u1",
        "timestamp": recs[0]["timestamp"],
        "match": {
            "a": [{"timestamp": 1000, "user": "u1", "kind": "a"}],
            "b": [{"timestamp": 4000, "user": "u1", "kind": "b"}],
        },
    }
    # u2's a (t=2000) waits for b, which comes after the 10 s window: a timeout at 2000 + 10000
    assert {
        "kind": "timeout",
        "key": "u2",
        "timestamp": 12000,
        "match": {"a": [{"timestamp": 2000, "user": "u2", "kind": "a"}]},
    } in recs
    assert [x["kind"] for x in recs].count("match") == 1
    assert "flowcep: 5 events in" in r.err and "1 match, 1 timeout, 0 late" in r.err


def test_without_key_there_is_one_stream(cli, write, ab):
    data = write("in.csv", EVENTS_CSV)
    recs = cli("run", ab, data).records
    # one stream: u1's a@1000 and u2's a@2000 both pair with b@4000; the later b@30000 is outside the window
    matches = [x for x in recs if x["kind"] == "match"]
    assert [
        (m["key"], m["match"]["a"][0]["timestamp"], m["match"]["b"][0]["timestamp"]) for m in matches
    ] == [
        (None, 1000, 4000),
        (None, 2000, 4000),
    ]


def test_select_and_timeout_functions(cli, write, ab_and):
    p = ab_and(
        """
    def select(match):
        return {"user": match["a"][0].user, "gap": match["b"][0].timestamp - match["a"][0].timestamp}

    def timeout(partial):
        return "no b for " + partial["a"][0].user
    """,
    )
    data = write("in.csv", EVENTS_CSV)
    recs = cli("run", p, data, "--key", "user").records
    assert {
        "kind": "match",
        "key": "u1",
        "timestamp": recs[0]["timestamp"],
        "value": {"user": "u1", "gap": 3000},
    } == recs[0]
    assert any(x["kind"] == "timeout" and x["value"] == "no b for u2" for x in recs)


def test_iso_timestamps_and_timestamp_column(cli, write, ab):
    data = write(
        "in.jsonl",
        """
        {"at": "2026-03-02T09:30:00Z", "kind": "a"}
        {"at": "2026-03-02T09:30:05.500Z", "kind": "b"}
        """,
    )
    r = cli("run", ab, data, "--timestamp", "at")
    assert r.status == EXIT_OK, r.err
    (m,) = r.records
    assert m["kind"] == "match" and m["match"]["b"][0]["at"] == "2026-03-02T09:30:05.500Z"


def test_late_events_and_out_of_orderness(cli, write, ab):
    data = write(
        "in.csv",
        """
        timestamp,kind
        1000,a
        5000,x
        3000,b
        9000,x
        """,
    )
    # in order only: b@3000 arrives after x@5000 and is late
    r = cli("run", ab, data)
    assert [x["kind"] for x in r.records] == ["late", "timeout"]
    assert r.records[0] == {
        "kind": "late",
        "key": None,
        "timestamp": 3000,
        "event": {"timestamp": 3000, "kind": "b"},
    }
    assert "1 late" in r.err
    # with 2.5 s of allowed lateness it is in time and matches
    r = cli("run", ab, data, "--out-of-orderness", "2.5s")
    assert [x["kind"] for x in r.records] == ["match"]


def test_output_file_stdin_and_gzip(cli, write, ab, tmp_path, monkeypatch):
    out = tmp_path / "out.jsonl"
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", ab, data, "--key", "user", "--output", out)
    assert r.status == EXIT_OK and r.out == ""
    from_file = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(from_file) == 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.read_bytes())))
    assert cli("run", ab, "-", "--key", "user").records == from_file
    gz = tmp_path / "in.csv.gz"
    gz.write_bytes(gzip.compress(data.read_bytes()))
    assert cli("run", ab, gz, "--key", "user").records == from_file


def test_quiet_has_no_summary(cli, write, ab):
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", ab, data, "--quiet")
    assert r.status == EXIT_OK and r.err == ""


def test_progress_line(cli, write, ab):
    lines = ["timestamp,kind"] + [f"{i},x" for i in range(5000)]
    data = write("big.csv", "\n".join(lines) + "\n")
    r = cli("run", ab, data, "--progress")
    assert r.status == EXIT_OK
    assert "\r[" in r.err and "events" in r.err and "%" in r.err
    assert "flowcep: 5,000 events" in r.err


# ----------------------------------------------------------------------------- errors


def test_missing_timestamp_column(cli, write, ab):
    data = write("in.csv", "time,kind\n1,a\n")
    r = cli("run", ab, data)
    assert r.status == EXIT_INPUT
    assert "missing column 'timestamp'" in r.err and "line 2" in r.err and "--timestamp COL" in r.err
    assert "columns: time, kind" in r.err


def test_missing_key_column_in_a_later_line(cli, write, ab):
    data = write(
        "in.jsonl",
        """
        {"timestamp": 1, "user": "u1", "kind": "a"}
        {"timestamp": 2, "kind": "a"}
        """,
    )
    r = cli("run", ab, data, "--key", "user")
    assert r.status == EXIT_INPUT
    assert "missing column 'user' (--key) at" in r.err and "in.jsonl: line 2" in r.err


def test_unparsable_timestamp_names_the_line(cli, write, ab):
    data = write("in.csv", "timestamp,kind\n1000,a\n2000,a\nlunchtime,b\n")
    r = cli("run", ab, data)
    assert r.status == EXIT_INPUT
    assert "unparsable timestamp at" in r.err and "in.csv: line 4" in r.err and "'lunchtime'" in r.err


def test_missing_input_file(cli, ab, tmp_path):
    r = cli("run", ab, tmp_path / "nope.csv")
    assert r.status == EXIT_INPUT and "input file not found" in r.err


def test_bad_json_names_the_line(cli, write, ab):
    data = write("in.jsonl", '{"timestamp": 1, "kind": "a"}\n{"timestamp": 2,\n')
    r = cli("run", ab, data)
    assert r.status == EXIT_INPUT and "line 2: not valid JSON" in r.err


def test_unknown_extension_needs_format(cli, write, ab):
    data = write("in.txt", "timestamp,kind\n1,a\n")
    r = cli("run", ab, data)
    assert r.status == EXIT_INPUT and "--format" in r.err
    assert cli("run", ab, data, "--format", "csv").status == EXIT_OK


def test_bad_duration(cli, write, ab):
    data = write("in.csv", "timestamp,kind\n1,a\n")
    r = cli("run", ab, data, "--out-of-orderness", "soon")
    assert r.status == EXIT_USAGE and "--out-of-orderness" in r.err and "5s" in r.err


def test_usage_errors(cli):
    assert cli().status == EXIT_USAGE
    r = cli("run")
    assert r.status == EXIT_USAGE and "required" in r.err
    r = cli("frobnicate")
    assert r.status == EXIT_USAGE
    r = cli("--version")
    assert r.status == EXIT_OK and "flowcep 0.1.0" in r.out


def test_condition_error_stops_with_the_line_or_keeps_going(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern
        pattern = Pattern.begin("a").where(lambda e: e.amount > 10).followed_by("b").where(lambda e: e.amount > 20)
        """,
    )
    data = write("in.csv", "timestamp,amount\n1,15\n2,oops\n3,25\n")
    r = cli("run", p, data)
    assert r.status == EXIT_RUNTIME
    assert "matching failed at" in r.err and "--keep-going" in r.err
    assert "TypeError" in r.err or "'>' not supported" in r.err
    r = cli("run", p, data, "--keep-going")
    assert r.status == EXIT_OK, r.err
    kinds = [x["kind"] for x in r.records]
    assert "bad_record" in kinds and "match" in kinds
    bad = next(x for x in r.records if x["kind"] == "bad_record")
    assert bad["event"] == {"timestamp": 2, "amount": "oops"} and bad["error"]
    assert "1 bad record" in r.err


def test_select_error(cli, write, ab_and):
    p = ab_and(
        """
    def select(match):
        return match["nope"]
    """,
    )
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", p, data, "--key", "user")
    assert r.status == EXIT_RUNTIME and "select() raised KeyError: 'nope'" in r.err


def test_parquet_needs_pyarrow(cli, write, ab, tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        p = tmp_path / "in.parquet"
        p.write_bytes(b"PAR1")
        r = cli("run", ab, p)
        assert r.status == EXIT_DEPENDENCY and "pip install pyarrow" in r.err
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "in.parquet"
    pq.write_table(pa.table({"timestamp": [1000, 4000], "kind": ["a", "b"]}), p)
    r = cli("run", ab, p)
    assert r.status == EXIT_OK and [x["kind"] for x in r.records] == ["match"]


def test_spark_engine_without_pyspark_says_what_to_install(cli, write, ab, monkeypatch):
    # Hide pyspark (installed or not) and make the connector fail to import it.
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.delitem(sys.modules, "flowcep.cli_support.spark_engine", raising=False)
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", ab, data, "--engine", "spark")
    assert r.status == EXIT_DEPENDENCY, r.err
    assert "pip install flowcep[spark]" in r.err


def test_spark_engine_rejects_stdin(cli, ab):
    r = cli("run", ab, "-", "--engine", "spark", "--format", "csv")
    assert r.status == EXIT_USAGE and "standard input" in r.err


def test_spark_engine_output_goes_through(cli, write, ab, monkeypatch):
    """The CLI's side of --engine spark: arguments in, dicts out (the connector is faked)."""
    import types

    calls = []

    def run_cli(
        pattern,
        input_path,
        fmt,
        key,
        timestamp,
        out_of_orderness,
        select,
        timeout,
        emit,
        evaluator,
        partial_match_limit,
    ):
        calls.append(
            (
                input_path,
                fmt,
                key,
                timestamp,
                out_of_orderness,
                select,
                timeout,
                emit,
                evaluator,
                partial_match_limit,
            )
        )
        yield {"kind": "match", "key": "u1", "timestamp": 4000, "match": {"a": [], "b": []}}
        yield {"kind": "late", "key": "u1", "timestamp": 1, "event": {}}

    fake = types.ModuleType("flowcep.cli_support.spark_engine")
    fake.run_cli = run_cli
    monkeypatch.setitem(sys.modules, "flowcep.cli_support.spark_engine", fake)
    data = write("in.csv", EVENTS_CSV)
    r = cli("run", ab, data, "--engine", "spark", "--key", "user", "--out-of-orderness", "1s")
    assert r.status == EXIT_OK, r.err
    # emit: not a hierarchy; the evaluator: the default; partial_match_limit: none given
    assert calls == [(str(data), "csv", "user", "timestamp", 1000, None, None, None, "nfa", None)]
    assert [x["kind"] for x in r.records] == ["match", "late"]
    assert "1 match" in r.err and "1 late" in r.err


def test_spark_engine_end_to_end_equals_local(cli):
    """A real `--engine spark` run (local Spark) gives the same results as the local engine."""
    import shutil

    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install flowcep[spark])")
    if shutil.which("java") is None and not __import__("os").environ.get("JAVA_HOME"):
        pytest.skip("no JDK: the spark engine needs Java 17 (java on PATH or JAVA_HOME)")
    from .conftest import EXAMPLES

    argv = [
        EXAMPLES / "card_fraud.py",
        EXAMPLES / "data" / "card_transactions.csv",
        "--key",
        "card",
        "--timestamp",
        "time",
    ]
    local = cli("run", *argv)
    spark = cli("run", *argv, "--engine", "spark")
    assert spark.status == EXIT_OK, spark.err

    def fields(value):
        # Spark's CSV schema inference reads `time` as a timestamp: compare the other fields
        return {k: v for k, v in (value or {}).items() if "time" not in k}

    def summary(records):
        return sorted(
            (r["kind"], r["key"], r["timestamp"], json.dumps(fields(r.get("value")))) for r in records
        )

    assert summary(spark.records) == summary(local.records)
    assert "flowcep (spark)" in spark.err and "3 matches, 2 timeouts, 0 late" in spark.err


@pytest.mark.skipif(not hasattr(gc, "get_threshold"), reason="PyPy's collector has no thresholds")
def test_run_raises_the_collectors_thresholds_while_matching_and_restores_them(cli, write, ab_and):
    # many keys with long-lived state spend up to half their time in Python's collector at its
    # default thresholds (docs/runtime.md section 8); the command, an application, raises them
    p = ab_and(
        """
    import gc

    def select(match):
        return list(gc.get_threshold())
    """,
    )
    data = write("in.csv", EVENTS_CSV)
    before = gc.get_threshold()
    recs = cli("run", p, data, "--key", "user").records
    assert [r["value"] for r in recs if r["kind"] == "match"] == [[50_000, 50, 100]]
    assert gc.get_threshold() == before


# ----------------------------------------------------------------------------- bad records: where, and --keep-going

AMOUNTS = """
    from flowcep import Pattern
    pattern = Pattern.begin("a").where(lambda e: e.amount > 10).followed_by("b").where(lambda e: e.amount > 20)
"""


@pytest.fixture
def amounts(write):
    return write("p.py", AMOUNTS)


def bad_then_match(r):
    """The bad_record line of a run that wrote one, then one match, and ended well."""
    assert r.status == EXIT_OK, r.err
    assert [x["kind"] for x in r.records] == ["bad_record", "match"]
    return r.records[0]


def test_a_condition_error_names_its_records_line_when_out_of_orderness_buffers_it(cli, write, amounts):
    # line 5 is matched only once line 8 moves the watermark (-d 5s) past 4000
    data = write(
        "in.csv", "timestamp,amount\n1000,15\n2000,16\n3000,17\n4000,oops\n5000,25\n9000,1\n12000,2\n"
    )
    r = cli("run", amounts, data, "-d", "5s")
    assert r.status == EXIT_RUNTIME
    assert "matching failed at in.csv: line 5: bad record" in r.err.replace(str(data.parent) + "/", "")


def test_a_condition_error_names_its_records_line_without_out_of_orderness(cli, write, amounts):
    # line 2 is matched when line 3's later timestamp moves the watermark past it
    data = write("in.csv", "timestamp,amount\n1,oops\n2,15\n")
    r = cli("run", amounts, data)
    assert r.status == EXIT_RUNTIME
    assert "matching failed at in.csv: line 2: bad record" in r.err.replace(str(data.parent) + "/", "")


def test_stopping_at_a_condition_error_writes_nothing_matched_after_it(cli, write, amounts):
    # the bad row (4000) and the row completing three matches (5000) are matched in one firing
    data = write(
        "in.csv", "timestamp,amount\n1000,15\n2000,16\n3000,17\n4000,oops\n5000,25\n9000,1\n12000,2\n"
    )
    r = cli("run", amounts, data, "-d", "5s")
    assert r.status == EXIT_RUNTIME
    assert r.out == ""


def test_keep_going_writes_a_condition_error_with_its_records_line(cli, write, amounts):
    data = write(
        "in.csv", "timestamp,amount\n1000,15\n2000,16\n3000,17\n4000,oops\n5000,25\n9000,1\n12000,2\n"
    )
    r = cli("run", amounts, data, "-d", "5s", "--keep-going")
    assert r.status == EXIT_OK, r.err
    assert r.records[0] == {
        "kind": "bad_record",
        "key": None,
        "timestamp": 4000,
        "line": 5,
        "event": {"timestamp": 4000, "amount": "oops"},
        "error": "condition raised TypeError: '>' not supported between instances of 'str' and 'int' "
        "(at pattern step 'b')",
    }
    assert [x["kind"] for x in r.records] == ["bad_record", "match", "match", "match"]


def test_keep_going_writes_invalid_json_as_a_bad_record_and_carries_on(cli, write, amounts):
    data = write(
        "in.jsonl", '{"timestamp": 1, "amount": 15}\n{"timestamp": 2,\n{"timestamp": 3, "amount": 25}\n'
    )
    bad = bad_then_match(cli("run", amounts, data, "--keep-going"))
    error = bad.pop("error")
    assert bad == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 2,
        "event": '{"timestamp": 2,',
    }
    # json's own words after "not valid JSON" (CPython's: Expecting property name enclosed in
    # double quotes), and the column
    assert error.startswith("not valid JSON (") and error.endswith(", column 1)")


def test_keep_going_writes_a_json_line_that_is_no_object_as_a_bad_record(cli, write, amounts):
    data = write("in.jsonl", '{"timestamp": 1, "amount": 15}\n[2, 16]\n{"timestamp": 3, "amount": 25}\n')
    assert bad_then_match(cli("run", amounts, data, "--keep-going")) == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 2,
        "event": [2, 16],
        "error": "expected a JSON object per line, got list",
    }


def test_keep_going_writes_a_csv_row_of_the_wrong_width_as_a_bad_record(cli, write, amounts):
    data = write("in.csv", "timestamp,amount\n1,15\n2,16,7\n3,25\n")
    assert bad_then_match(cli("run", amounts, data, "--keep-going")) == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 3,
        "event": ["2", "16", "7"],
        "error": "3 cells, but the header has 2 columns",
    }


def test_keep_going_writes_an_unparsable_timestamp_as_a_bad_record(cli, write, amounts):
    data = write("in.csv", "timestamp,amount\n1,15\nlunchtime,16\n3,25\n")
    assert bad_then_match(cli("run", amounts, data, "--keep-going")) == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 3,
        "event": {"timestamp": "lunchtime", "amount": 16},
        "error": "unparsable timestamp: column 'timestamp': "
        "'lunchtime' is neither milliseconds since the epoch nor an ISO-8601 date-time",
    }


def test_keep_going_writes_a_record_without_the_key_column_as_a_bad_record(cli, write, amounts):
    data = write(
        "in.jsonl",
        """
        {"timestamp": 1, "user": "u1", "amount": 15}
        {"timestamp": 2, "amount": 16}
        {"timestamp": 3, "user": "u1", "amount": 25}
        """,
    )
    assert bad_then_match(cli("run", amounts, data, "--key", "user", "--keep-going")) == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 2,
        "event": {"timestamp": 2, "amount": 16},
        "error": "missing column 'user' (--key) (columns: timestamp, amount)",
    }


def test_keep_going_writes_a_line_that_is_not_utf8_as_a_bad_record(cli, tmp_path, amounts):
    data = tmp_path / "in.jsonl"
    data.write_bytes(b'{"timestamp": 1, "amount": 15}\n\xff\xfe\n{"timestamp": 3, "amount": 25}\n')
    assert bad_then_match(cli("run", amounts, data, "--keep-going")) == {
        "kind": "bad_record",
        "key": None,
        "timestamp": None,
        "line": 2,
        "event": "\ufffd\ufffd",
        "error": "not UTF-8 text (invalid start byte)",
    }


def test_a_bad_line_stops_the_run_before_anything_for_it_and_suggests_keep_going(cli, write, amounts):
    # 15 then 25 would match at line 3; the bad line 2 stops the run first
    data = write(
        "in.jsonl", '{"timestamp": 1, "amount": 15}\n{"timestamp": 2,\n{"timestamp": 3, "amount": 25}\n'
    )
    r = cli("run", amounts, data)
    assert r.status == EXIT_INPUT
    assert r.out == ""
    assert "in.jsonl: line 2: not valid JSON" in r.err and "pass --keep-going" in r.err


@pytest.mark.parametrize("arrow_from_bytes", [0, 1 << 60], ids=["pyarrow-when-installed", "csv-module"])
def test_a_bad_csv_row_stops_the_run_after_writing_what_the_rows_before_it_matched(
    cli, write, amounts, monkeypatch, arrow_from_bytes
):
    # the whole file is one piece of the reader's: the match of lines 2 and 3, which line 4
    # releases (its watermark passes 2), is still written first
    from flowcep.cli_support import inputs

    monkeypatch.setattr(inputs, "ARROW_MIN_BYTES", arrow_from_bytes)
    data = write("in.csv", "timestamp,amount\n1,15\n2,25\n3,1\n4\n5,30\n")
    r = cli("run", amounts, data)
    assert r.status == EXIT_INPUT
    assert [(x["kind"], x["timestamp"]) for x in r.records] == [("match", 2)]
    assert "in.csv: line 5: 1 cells, but the header has 2 columns" in r.err


@pytest.mark.parametrize("arrow_from_bytes", [0, 1 << 60], ids=["pyarrow-when-installed", "csv-module"])
def test_keep_going_writes_bad_csv_rows_in_their_places(cli, write, amounts, monkeypatch, arrow_from_bytes):
    from flowcep.cli_support import inputs

    monkeypatch.setattr(inputs, "ARROW_MIN_BYTES", arrow_from_bytes)
    data = write("in.csv", "timestamp,amount\n1,15\n2,25\n3,1\n4\n\n6,x,y\n7,2\n")
    r = cli("run", amounts, data, "--keep-going")
    assert r.status == EXIT_OK, r.err
    assert [(x["kind"], x["timestamp"], x.get("line")) for x in r.records] == [
        ("match", 2, None),
        ("bad_record", None, 5),
        ("bad_record", None, 7),
    ]


# ----------------------------------------------------------------------------- output that cannot be written

DEV_FULL = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(DEV_FULL), reason="no /dev/full here")


def _run_process(*argv: object, stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [sys.executable, "-m", "flowcep.cli", *map(str, argv)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
    )


@needs_dev_full
def test_an_output_file_that_cannot_be_written_is_one_error_line(write, ab):
    data = write("in.csv", EVENTS_CSV)
    proc = _run_process("run", ab, data, "--key", "user", "-q", "-o", DEV_FULL)
    assert proc.returncode == EXIT_RUNTIME
    assert proc.stderr.decode() == "flowcep: error: cannot write /dev/full: No space left on device\n"


@needs_dev_full
def test_a_standard_output_that_cannot_be_written_is_one_error_line(write, ab):
    data = write("in.csv", EVENTS_CSV)
    with open(DEV_FULL, "w") as full:
        proc = _run_process("run", ab, data, "--key", "user", "-q", stdout=full)
    assert proc.returncode == EXIT_RUNTIME
    assert proc.stderr.decode() == "flowcep: error: cannot write standard output: No space left on device\n"


def test_matches_held_back_for_ever_are_a_warning_line(cli, write):
    p = write(
        "p.py",
        """
        from flowcep import Pattern, AfterMatchSkipStrategy
        pattern = (
            Pattern.begin("b", AfterMatchSkipStrategy.skip_to_first("b")).where(lambda e: e.kind == "b")
            .one_or_more().next("c").where(lambda e: e.kind == "c")
        )
        """,
    )
    data = write("in.csv", "timestamp,kind\n1,b\n2,b\n3,b\n4,c\n")
    r = cli("run", p, data)
    assert r.status == EXIT_OK, r.err
    assert [len(x["match"]["b"]) for x in r.records] == [3]  # b2 b3 c and b3 c wait behind b1 b2 b3...
    assert "flowcep: warning: 2 completed matches of 1 key never came out" in r.err


RICH_B_PATTERN = """
    from datetime import timedelta
    from flowcep import Pattern, RichIterativeCondition

    class KindB(RichIterativeCondition):
        # the kind to match is only known once the condition is opened
        def open(self, context):
            self.kind = "b"
            with open(LOG, "a") as f:
                f.write("open\\n")

        def close(self):
            with open(LOG, "a") as f:
                f.write("close\\n")

        def filter(self, value, ctx):
            return value.kind == self.kind

    pattern = (
        Pattern.begin("a").where(lambda e: e.kind == "a")
        .followed_by("b").where(KindB())
        .within(timedelta(seconds=10))
    )
"""


def test_a_rich_condition_is_opened_before_the_run_and_closed_after_it(cli, write, tmp_path):
    log = tmp_path / "lifecycle.log"
    pattern = write("rich.py", f"LOG = {str(log)!r}\n" + RICH_B_PATTERN.replace("\n    ", "\n"))
    r = cli("run", pattern, write("in.csv", EVENTS_CSV), "--key", "user")
    assert r.status == EXIT_OK, r.err
    assert [(x["kind"], x["key"]) for x in r.records if x["kind"] == "match"] == [("match", "u1")]
    assert log.read_text().splitlines() == ["open", "close"]
