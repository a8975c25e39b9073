"""Shared helpers for the command-line tests."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from flowcep.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """write(name, text) -> path of a file in tmp_path with dedented text."""

    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return p

    return _write


class Run:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status = status
        self.out = out
        self.err = err

    @property
    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """cli("run", "p.py", "in.csv") -> Run(status, stdout, stderr), calling main(argv) in-process."""

    def _cli(*argv: str | Path) -> Run:
        capsys.readouterr()
        status = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Run(status, captured.out, captured.err)

    return _cli


AB_PATTERN = """
    from datetime import timedelta
    from flowcep import Pattern

    pattern = (
        Pattern.begin("a").where(lambda e: e.kind == "a")
        .followed_by("b").where(lambda e: e.kind == "b")
        .within(timedelta(seconds=10))
    )
"""
