"""The PyFlink function's partial-match limit, its counters in Flink's metric group and the
lifecycle of rich conditions: driven without a JVM (``FakeFlink``) and in real jobs."""

from __future__ import annotations

import os
from typing import Any

import cep_scenarios as sc
from flink_support import FakeFlink  # noqa: I001 - skips without PyFlink

from flowcep import Pattern, RichIterativeCondition
from flowcep.connectors.flink import CEP, METRICS, _CepFunction, _Spec, _worker_tag
from flowcep.runtime import DroppedPartialMatch, PartialMatchLimit
from flowcep.runtime.options import OperatorOptions


def function(pattern: Pattern, **options: Any) -> _CepFunction:
    spec = _Spec("process", sc.Describe(), None, CEP.TIMED_OUT)
    return _CepFunction(
        pattern,
        spec,
        options=OperatorOptions(out_of_orderness=None, **options),
        late_data_tag=_worker_tag(CEP.LATE_DATA),
    )


def ab(within: int) -> Pattern:
    return Pattern.begin("a").where(sc.kind_is("a")).followed_by("b").where(sc.kind_is("b")).within(within)


def test_a_key_past_its_limit_drops_to_the_side_output_and_counts_it() -> None:
    flink = FakeFlink(function(ab(100), partial_match_limit=PartialMatchLimit(per_key=2)))
    for t in (1, 2, 3):
        flink.element("k", ("k", "a", t), t)
    flink.element("k", ("k", "b", 4), 4)
    flink.watermark(4)
    [dropped] = flink.side("dropped-partial-matches")
    assert type(dropped) is DroppedPartialMatch
    assert (dropped.key, dropped.start_timestamp, dropped.dropped_at) == ("k", 1, 3)
    assert [m[3] for m in flink.main()] == [{"a": [2], "b": [4]}, {"a": [3], "b": [4]}]
    assert flink.counters["numDroppedPartialMatches"] == 1


def test_the_function_registers_its_counters_in_flinks_metric_group() -> None:
    flink = FakeFlink(function(ab(10), on_error="side_output"))
    assert set(flink.counters) == set(METRICS)
    flink.element("k", ("k", "a", 1), 1)
    flink.element("k", ("k", "b", 2), 2)
    flink.element("k", ("k", "a", 5), 5)
    flink.watermark(100)
    flink.element("k", ("k", "a", 50), 50)  # behind the watermark
    assert flink.counters == {
        "numMatches": 1,
        "numTimeouts": 1,
        "numLateRecords": 1,
        "numBadRecords": 0,
        "numDroppedPartialMatches": 0,
    }


def test_without_a_metric_group_the_function_counts_nothing_and_runs() -> None:
    # PyFlink gives no metric group with python.metric.enabled false
    flink = FakeFlink(function(ab(10), partial_match_limit=PartialMatchLimit(per_key=1)), metrics=False)
    for t in (1, 2):
        flink.element("k", ("k", "a", t), t)
    flink.element("k", ("k", "b", 3), 3)
    flink.watermark(100)
    assert [m[3] for m in flink.main()] == [{"a": [2], "b": [3]}]
    assert [d.start_timestamp for d in flink.side("dropped-partial-matches")] == [1]
    assert flink.counters == {}


def test_a_flink_job_drops_what_the_embedded_runtime_drops() -> None:
    from flink_support import collect, event_source, make_env
    from pyflink.common import Types, WatermarkStrategy

    from flowcep.connectors.flink import CEP as FlinkCEP
    from flowcep.runtime import CEP as EmbeddedCEP

    events = [(key, "a", t) for t in range(1, 40) for key in ("x", "y")] + [("x", "b", 40), ("y", "b", 41)]
    env = make_env(parallelism=2)
    source = event_source(env, events, WatermarkStrategy.for_monotonous_timestamps())
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    result = FlinkCEP.pattern(
        keyed, ab(1_000), max_partial_matches_per_key=5, on_partial_match_limit="drop_oldest"
    ).process(sc.Describe(), output_type=Types.PICKLED_BYTE_ARRAY())
    got = collect(result, dropped=result.get_side_output(FlinkCEP.DROPPED_PARTIAL_MATCHES))
    want = EmbeddedCEP.pattern(
        [e + (0, 0.0) for e in events],
        ab(1_000),
        key_by=lambda e: e[0],
        timestamp=lambda e: e[2],
        out_of_orderness=None,
        max_partial_matches_per_key=5,
    ).process(sc.Describe())
    want_main = list(want)
    want_dropped = list(want.get_side_output(EmbeddedCEP.DROPPED_PARTIAL_MATCHES))
    assert len(want_main) == 10 and len(want_dropped) == 68
    assert sorted(map(repr, got["main"])) == sorted(map(repr, want_main))
    assert sorted((d.key, d.start_timestamp) for d in got["dropped"]) == sorted(
        (d.key, d.start_timestamp) for d in want_dropped
    )


class _LoggedB(RichIterativeCondition):
    """``kind == "b"``, the letter set in ``open``; opens and closes appended to ``log`` (a file
    for a real job: the subtasks run in other processes)."""

    def __init__(self, log: Any) -> None:
        self.log = log
        self.letter = None

    def _write(self, line: str) -> None:
        if isinstance(self.log, list):
            self.log.append(line)
        else:
            with open(self.log, "a") as f:
                f.write(line + "\n")

    def open(self, context: Any) -> None:
        self.letter = "b"
        self._write(f"open {context.get_index_of_this_subtask()}")

    def close(self) -> None:
        self._write("close")

    def filter(self, value: Any, ctx: Any) -> bool:
        return value[1] == self.letter


def test_a_rich_condition_is_opened_with_the_function_and_closed_with_it() -> None:
    log: list[str] = []
    pattern = Pattern.begin("a").where(sc.kind_is("a")).followed_by("b").where(_LoggedB(log))
    fake = FakeFlink(function(pattern))
    fake.element("k", ("k", "a", 1), 1)
    fake.element("k", ("k", "b", 2), 2)
    fake.element("j", ("j", "a", 3), 3)
    fake.element("j", ("j", "b", 4), 4)
    fake.watermark(10)
    assert [m[3] for m in fake.main()] == [{"a": [1], "b": [2]}, {"a": [3], "b": [4]}]
    fake.function.close()
    assert log == ["open 0", "close"]  # once for the subtask, not per key


def test_a_flink_job_opens_a_rich_condition_once_per_subtask(tmp_path: Any) -> None:
    from flink_support import collect, event_source, make_env
    from pyflink.common import Types, WatermarkStrategy

    from flowcep.connectors.flink import CEP as FlinkCEP

    log = tmp_path / "lifecycle.log"
    # each b a millisecond after its a: with two subtasks between the source and the operator, an
    # a and a b of one timestamp could arrive in either order, and next() would then miss
    events = [(key, kind, 2 * t + (kind == "b")) for t, key in enumerate("xyzw" * 5, 1) for kind in "ab"]
    env = make_env(parallelism=2)
    source = event_source(env, events, WatermarkStrategy.for_monotonous_timestamps())
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    pattern = Pattern.begin("a").where(sc.kind_is("a")).next("b").where(_LoggedB(str(log)))
    result = FlinkCEP.pattern(keyed, pattern).select(lambda m: m["b"][0][2], output_type=Types.LONG())
    got = collect(result)
    assert sorted(got["main"]) == [2 * t + 1 for t in range(1, 21)]
    assert sorted(log.read_text().split("\n")[:-1]) == ["close", "close", "open 0", "open 1"]


def _reporter_jar(tmp_path: Any) -> str:
    """The test reporter (``reporter/KeepingReporter.java``) compiled against this PyFlink's Flink."""
    import glob
    import shutil
    import subprocess
    import zipfile

    import pyflink
    import pytest

    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("compiling the test metric reporter needs a JDK's javac (DESIGN.md section 1)")
    here = os.path.dirname(os.path.abspath(__file__))
    [dist] = glob.glob(os.path.join(os.path.dirname(pyflink.__file__), "lib", "flink-dist-*.jar"))
    classes = tmp_path / "classes"
    subprocess.run(
        [javac, "-d", str(classes), "-cp", dist, os.path.join(here, "reporter", "KeepingReporter.java")],
        check=True,
    )
    jar = tmp_path / "keeping-reporter.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for path in classes.rglob("*.class"):
            z.write(path, str(path.relative_to(classes)))
        # Flink finds reporter factories with Java's ServiceLoader
        z.writestr(
            "META-INF/services/org.apache.flink.metrics.reporter.MetricReporterFactory",
            "flowcep_test.KeepingReporter\n",
        )
    return str(jar)


def test_a_flink_job_reports_its_counters_to_flinks_metric_reporters(tmp_path: Any) -> None:
    """A real job (``metrics_job.py``), its counters read from Flink's metric registry: matches and
    timeouts counted in timers, late and bad records and a dropped partial match in records."""
    import json
    import subprocess
    import sys

    import flowcep

    jar = _reporter_jar(tmp_path)
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(os.path.abspath(flowcep.__file__)))
    # a job run earlier in this process leaves PYFLINK_GATEWAY_DISABLED set (as in a Python worker),
    # which would keep the job's process from starting its own gateway
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYFLINK_GATEWAY")}
    env["HADOOP_CLASSPATH"] = os.pathsep.join(p for p in (jar, env.get("HADOOP_CLASSPATH")) if p)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    job = subprocess.run(
        [sys.executable, os.path.join(here, "metrics_job.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert job.returncode == 0, job.stderr[-4000:]
    report = json.loads(job.stdout.strip().splitlines()[-1])
    assert report["matches"] == [["k", [1000], [2000]], ["k", [5000], [6000]]]
    assert report["counters"] == {
        "numMatches": 2,
        "numTimeouts": 1,
        "numLateRecords": 2,
        "numBadRecords": 1,
        "numDroppedPartialMatches": 1,
    }
