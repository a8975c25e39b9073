"""``Pattern[T]`` under mypy: a typo in a condition is an error, a correct pattern is clean."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

PRELUDE = """
    from dataclasses import dataclass
    from datetime import timedelta

    from flowcep import Pattern


    @dataclass
    class Stock:
        symbol: str
        price: float
"""

SNIPPETS = {
    "typo.py": """
        pattern = Pattern[Stock].begin("rise").where(lambda e: e.pricee > 10)
    """,
    "typo_later_step.py": """
        pattern = (
            Pattern[Stock].begin("rise").where(lambda e: e.price > 10)
            .followed_by("fall").where(lambda e: e.prise < 5).within(timedelta(seconds=10))
        )
    """,
    "correct.py": """
        pattern = (
            Pattern[Stock].begin("rise").where(lambda e: e.price > 10).one_or_more().greedy()
            .followed_by("fall").where(lambda e, ctx: e.price < ctx.get_events_for_pattern("rise")[0].price)
            .or_(lambda e: e.symbol == "ACME")
            .within(timedelta(seconds=10))
        )
    """,
    "untyped.py": """
        pattern = Pattern.begin("rise").where(lambda e: e.anything > 10).followed_by("fall")
    """,
}


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy --strict over each snippet: its error lines, by file."""
    if platform.python_implementation() == "PyPy":
        pytest.importorskip(
            "mypy", reason="mypy is a CPython dev tool here (the dev extra); PyPy's venv has none"
        )
    tmp = tmp_path_factory.mktemp("typing")
    for name, body in SNIPPETS.items():
        (tmp / name).write_text(textwrap.dedent(PRELUDE) + textwrap.dedent(body))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *SNIPPETS],
        cwd=tmp,
        capture_output=True,
        text=True,
        env=dict(os.environ, MYPYPATH=str(SRC)),
        timeout=300,
    )
    errors: dict[str, list[str]] = {name: [] for name in SNIPPETS}
    for line in result.stdout.splitlines():
        name = line.split(":")[0]
        if name in errors and ": error:" in line:
            errors[name].append(line.split(": error: ")[1])
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return errors


def test_a_misspelt_attribute_of_the_event_type_is_an_error(mypy_output: dict[str, list[str]]) -> None:
    assert mypy_output["typo.py"] == ['"Stock" has no attribute "pricee"; maybe "price"?  [attr-defined]']


def test_later_steps_keep_the_event_type(mypy_output: dict[str, list[str]]) -> None:
    assert mypy_output["typo_later_step.py"] == [
        '"Stock" has no attribute "prise"; maybe "price"?  [attr-defined]'
    ]


def test_a_correct_typed_pattern_is_clean(mypy_output: dict[str, list[str]]) -> None:
    assert mypy_output["correct.py"] == []


def test_a_pattern_without_an_event_type_is_unchecked(mypy_output: dict[str, list[str]]) -> None:
    assert mypy_output["untyped.py"] == []


def test_the_typed_form_builds_the_same_pattern_at_run_time() -> None:
    from flowcep import Pattern
    from flowcep.nfa import NFACompiler

    typed = Pattern[int].begin("a").where(lambda e: e > 1).followed_by("b").within(10)
    assert type(typed) is Pattern
    assert (typed.name, typed.get_previous().name, typed.get_window_size()) == ("b", "a", 10)  # type: ignore[union-attr]
    assert NFACompiler.compile(typed).window_time == 10
