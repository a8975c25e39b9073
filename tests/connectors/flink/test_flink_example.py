"""examples/flink_port.py, run as a user runs it, finds what its embedded twin finds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from flink_support import HERE  # noqa: I001 - skips without PyFlink

ROOT = Path(HERE).parents[2]


def test_the_pyflink_port_finds_what_the_embedded_port_finds() -> None:
    spec = importlib.util.spec_from_file_location(
        "flink_port_local", ROOT / "examples" / "flink_port_local.py"
    )
    assert spec is not None and spec.loader is not None
    local = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(local)
    want = sorted(local.main())
    assert want  # the bundled data has alerts

    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "flink_port.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    lines = [
        line for line in run.stdout.splitlines() if line.startswith(("ALERT", "LATE")) or "alerts," in line
    ]
    assert lines == [f"ALERT {a}" for a in want] + [f"{len(want)} alerts, 0 late logins"]
