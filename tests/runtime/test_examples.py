"""The runtime examples run as scripts and print what their docstrings promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stderr == ""
    return result.stdout.splitlines()


def test_quickstart_finds_the_brute_force_login() -> None:
    assert run_example("quickstart.py") == ["alice: 3 failures from t=1000 then success at t=9000"]


def test_timeouts_and_late_data_reports_matches_timeouts_and_late_events() -> None:
    assert run_example("timeouts_and_late_data.py") == [
        "-- pull API (CEP.pattern)",
        "o1 paid after 5 min",
        "o3 paid after 8 min",
        "o2 unpaid, timed out at minute 16",
        "o4 unpaid, timed out at minute 45",
        "o5 unpaid, timed out at minute 46",
        "late: o2 paid at minute 20",
        "-- push API (CepOperator)",
        "match    key=o1 at minute 5",
        "match    key=o3 at minute 12",
        "timeout  key=o2 at minute 16",
        "late     key=o2 at minute 20",
        "timeout  key=o4 at minute 45",
        "timeout  key=o5 at minute 46",
    ]
