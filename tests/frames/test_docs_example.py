"""The Parquet example of docs/dataframes.md runs as written (on fewer rows)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from tests.frames.test_detect import library

DOC = Path(__file__).resolve().parents[2] / "docs" / "dataframes.md"


def test_the_parquet_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library("pyarrow")
    library("numpy")
    [code] = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert "n = 1_000_000\n" in code
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace("n = 1_000_000\n", "n = 50_000\n"), str(DOC), "exec"), {})
    first = printed.getvalue().splitlines()[0]
    assert re.fullmatch(r"50,000 payments in [\d.]+ s \([\d,]+ rows/s\): \d+ matches, \d+ timeouts", first)
    assert os.path.exists(tmp_path / "payments.parquet")
