"""The README's code and claims stay true: the quickstart runs, the demo prints what it shows,
and every camelCase alias in the name table exists."""

from __future__ import annotations

import contextlib
import io
import re

from flowcep.cli_support.demo import run_demo

from .conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_quickstart_runs_and_prints_what_the_readme_says():
    code = _blocks("python")[0]
    expected = re.search(r"# prints: (.*)", code).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert out.getvalue().strip() == expected


def test_demo_output_in_the_readme_is_current():
    shown = next(b for b in _blocks("") if b.startswith("flowcep demo:"))
    out = io.StringIO()
    assert run_demo(out=out) == 0
    actual = out.getvalue().splitlines()
    timing = re.compile(r"\d+ ms\)|\d+\.\d\d s\.")
    for line in shown.splitlines():
        if line.strip() in ("", "...") or timing.search(line):
            continue
        assert line in actual, line


def test_camel_case_aliases_in_the_name_table_exist():
    from flowcep import AfterMatchSkipStrategy, Pattern
    from flowcep.nfa.nfa import ConditionContext
    from flowcep.runtime import (
        PatternProcessFunction,
        PatternStream,
        ResultStream,
        TimedOutPartialMatchHandler,
    )

    owners = [Pattern, AfterMatchSkipStrategy, PatternStream, ResultStream, PatternProcessFunction]
    owners += [TimedOutPartialMatchHandler, ConditionContext, type(AfterMatchSkipStrategy.skip_to_first("x"))]
    table = README.split("## From Java to Python", 1)[1].split("\n## ", 1)[0]
    aliases = set()
    for row in table.splitlines():
        cells = row.split("|")
        if len(cells) > 3:
            aliases.update(re.findall(r"`([a-z]+[A-Z]\w*)", cells[3]))
    assert {
        "followedBy",
        "oneOrMore",
        "skipPastLastEvent",
        "processTimedOutMatch",
        "getSideOutput",
    } <= aliases
    for alias in sorted(aliases):
        assert any(hasattr(o, alias) for o in owners), alias
    # "all four" skip strategies
    for alias in ("noSkip", "skipToNext", "skipToFirst", "skipToLast"):
        assert hasattr(AfterMatchSkipStrategy, alias)


def test_my_doc_links_resolve():
    for page in ("docs/cli.md", "docs/semantics.md", "docs/internals.md", "examples/flink_port_local.py"):
        assert f"]({page})" in README
        assert (REPO / page).exists(), page


def test_cli_doc_explain_example_is_current(cli, monkeypatch):
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    block = re.search(r"\$ flowcep explain examples/card_fraud.py\n(.*?)```", doc, flags=re.S).group(1)
    monkeypatch.chdir(REPO)
    r = cli("explain", "examples/card_fraud.py")
    assert r.status == 0
    assert block in r.out
