"""``flowcep run --metrics-port``: a real HTTP scrape of the running command's Prometheus endpoint."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import AB_PATTERN, REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> dict[str, float]:
    """The samples of ``/metrics`` that have no labels, by name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            name, value = line.split(" ")
            samples[name] = float(value)
    return samples


def test_a_running_command_serves_its_counts_and_gauges(write: Callable[[str, str], Path]) -> None:
    pattern = write("p.py", AB_PATTERN)
    port = free_port()
    command = [sys.executable, "-c", "import sys; from flowcep.cli import main; sys.exit(main())"]
    args = ["run", str(pattern), "-", "--format", "jsonl", "--key", "user", "--timestamp", "ts"]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.Popen(
        command + args + ["--metrics-port", str(port), "--quiet"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    events = [
        {"user": "ann", "ts": 1_000, "kind": "a"},
        {"user": "bob", "ts": 2_000, "kind": "a"},
        {"user": "ann", "ts": 3_000, "kind": "b"},  # ann: a match
        {"user": "cid", "ts": 4_000, "kind": "a"},
        {"user": "ann", "ts": 1_500, "kind": "b"},  # behind the watermark (3 s - 1 ms): late
    ]
    try:
        assert proc.stdin is not None
        # then blank lines (skipped), more than the reader's buffer: it waits inside them, with
        # every event read and the input still open
        proc.stdin.write("".join(json.dumps(e) + "\n" for e in events).encode() + b"\n" * 300_000)
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        samples: dict[str, float] = {}
        while samples.get("flowcep_events_total") != 5 and time.monotonic() < deadline:
            try:
                samples = scrape(port)
            except OSError:  # not listening yet
                time.sleep(0.1)
        lag = samples.pop("flowcep_watermark_lag_seconds")
        assert {k: v for k, v in samples.items() if k.startswith("flowcep_")} == {
            "flowcep_events_total": 5.0,
            "flowcep_matches_total": 1.0,
            "flowcep_timeouts_total": 0.0,
            "flowcep_late_events_total": 1.0,
            "flowcep_bad_records_total": 0.0,
            "flowcep_dropped_partial_matches_total": 0.0,
            "flowcep_partial_matches": 1.0,  # bob's a (cid's is still buffered)
            "flowcep_buffered_events": 1.0,  # cid's a, at the watermark's next millisecond
            "flowcep_keys": 2.0,  # what CepOperator.stats()["keys"] says after these events
            "flowcep_held_back_matches": 0.0,
            "flowcep_event_time_lag_seconds": 0.001,  # the latest event at 4,000, the watermark at 3,999
        }
        # the watermark is 3,999 ms after the epoch: the lag is the wall clock's age, in seconds
        assert abs(lag - (time.time() - 3.999)) < 60
    finally:
        out, err = proc.communicate(timeout=60)  # closes the input: the end of the run
    assert proc.returncode == 0, err.decode()
    assert [json.loads(line)["kind"] for line in out.decode().splitlines()] == [
        "match",
        "late",
        "timeout",
        "timeout",
    ]


def test_a_port_in_use_is_a_usage_error(
    write: Callable[[str, str], Path], cli: Callable[..., object]
) -> None:
    pattern = write("p.py", AB_PATTERN)
    events = write("in.jsonl", '{"user": "ann", "ts": 1, "kind": "a"}\n')
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = cli("run", pattern, events, "--key", "user", "--timestamp", "ts", "--metrics-port", port)
    assert (run.status, run.out) == (2, "")  # type: ignore[attr-defined]
    assert f"--metrics-port {port}: cannot serve metrics there" in run.err  # type: ignore[attr-defined]


def test_metrics_need_the_nfa_evaluator(
    write: Callable[[str, str], Path], cli: Callable[..., object]
) -> None:
    pattern = write("p.py", AB_PATTERN)
    events = write("in.jsonl", '{"user": "ann", "ts": 1, "kind": "a"}\n')
    run = cli("run", pattern, events, "--evaluator", "optiseq", "--metrics-port", free_port())
    assert (run.status, run.out) == (2, "")  # type: ignore[attr-defined]
    assert "--metrics-port works with one pattern and the nfa evaluator only" in run.err  # type: ignore[attr-defined]
