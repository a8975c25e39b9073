from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, REPO


def test_demo_shows_what_the_examples_find(cli):
    r = cli("demo")
    assert r.status == 0, r.err
    out = r.out
    for line in (
        "1. Stock trends",
        "ACME  09:46-09:50  5 rising ticks 102.88 -> 105.98, then volume 2178 -> 754 at 09:51",
        "6 trends",
        "ALERT web-02  cpu alarm (97.4%) at 10:12:04",
        "no alert: web-02 cpu alarm at 11:20:02 saw only 2 failed requests",
        "late event (behind the watermark): web-03 request at 11:00:03",
        "FRAUD card-1003  probe 1.00 (DE) at 14:02:31, then 1899.00 at Electro Mundo (BR)",
        "ALERT alice logged in after 4 failed attempts",
        "escalation us  11:50:00-11:56:45  us-4 + us-2",
        "5 incidents, 2 outages, 1 escalations",
        "1,744 events in",
    ):
        assert line in out, line


def test_demo_from_another_directory_finds_the_examples(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("demo").status == 0


def test_demo_with_a_wrong_examples_dir(cli, tmp_path):
    r = cli("demo", "--examples", tmp_path)
    assert r.status == 1 and "cannot find the examples" in r.err


def _console_script() -> Path | None:
    script = Path(sys.executable).parent / "flowcep"
    if script.exists():
        return script
    found = shutil.which("flowcep")
    return Path(found) if found else None


def test_console_script_end_to_end(tmp_path):
    """The installed `flowcep` script, as a real process: stdout is JSON, stderr the summary."""
    script = _console_script()
    if script is None:
        pytest.skip("the flowcep console script is not installed (pip install -e .)")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run(
        [
            str(script),
            "run",
            str(EXAMPLES / "card_fraud.py"),
            "-",
            "--key",
            "card",
            "--timestamp",
            "time",
            "--format",
            "csv",
        ],
        input=(EXAMPLES / "data" / "card_transactions.csv").read_bytes(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert sum('"kind": "match"' in line for line in lines) == 3
    assert "89 events" in proc.stderr.decode() and "3 matches, 2 timeouts, 0 late" in proc.stderr.decode()
    # and an error: a clear message and a non-zero status, no traceback
    proc = subprocess.run(
        [str(script), "run", str(tmp_path / "nope.py"), "x.csv"], capture_output=True, env=env, timeout=120
    )
    err = proc.stderr.decode()
    assert proc.returncode == 4 and "input file not found" in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_demo_to_a_full_stdout_is_one_error_line():
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "flowcep.cli", "demo", "--examples", str(EXAMPLES)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr.decode() == "flowcep: error: cannot write standard output: No space left on device\n"
