"""Generated functions: one compiled code object per source text where a JIT keys its work by
code object, each function still reading its own values."""

from __future__ import annotations

import pytest

from flowcep import Pattern
from flowcep.nfa import NFACompiler, codegen

SOURCE = "def decide(event):\n    return answer + event\n"


@pytest.fixture(params=[True, False], ids=["shared", "per-function"])
def share(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(codegen, "SHARE_CODE", request.param)
    monkeypatch.setattr(codegen, "_CODES", {})
    return bool(request.param)


def test_each_function_reads_its_own_values(share: bool) -> None:
    one = codegen.generated(SOURCE, "decide", {"answer": 1})
    ten = codegen.generated(SOURCE, "decide", {"answer": 10})
    assert (one(5), ten(5)) == (6, 15)


def test_equal_source_shares_the_code_object_only_when_sharing(share: bool) -> None:
    one = codegen.generated(SOURCE, "decide", {"answer": 1})
    ten = codegen.generated(SOURCE, "decide", {"answer": 10})
    assert (one.__code__ is ten.__code__) is share


def test_two_nfas_of_one_pattern_share_their_decision_tables_code(share: bool) -> None:
    def pattern() -> Pattern:
        return Pattern.begin("a").where(lambda e: e == "a").followed_by("b").where(lambda e: e == "b")

    first, second = NFACompiler.compile(pattern()), NFACompiler.compile(pattern())
    codes = [
        (nfa._slots["b"].table.__code__, nfa._slots["b"].table)
        for nfa in (first, second)  # noqa: SLF001
    ]
    assert (codes[0][0] is codes[1][0]) is share
    assert codes[0][1] is not codes[1][1]  # each NFA's table calls its own pattern's conditions


def test_the_shared_code_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codegen, "SHARE_CODE", True)
    monkeypatch.setattr(codegen, "_CODES", {})
    monkeypatch.setattr(codegen, "MAX_CODES", 3)
    functions = [codegen.generated(f"def f():\n    return {k}\n", "f", {}) for k in range(10)]
    assert [f() for f in functions] == list(range(10))
    assert 1 <= len(codegen._CODES) <= 3  # noqa: SLF001


def test_a_generated_function_calls_builtins_and_the_functions_it_defines(share: bool) -> None:
    source = "def helper(x):\n    return len(x) * scale\n\ndef decide(event):\n    return helper(event) + min(event)\n"
    decide = codegen.generated(source, "decide", {"scale": 10})
    assert decide([3, 4]) == 23


def test_a_traceback_through_a_decision_table_shows_its_generated_line(share: bool) -> None:
    """A condition that raises inside a generated decision table: the traceback names the
    generated function's file and shows its source line, as for code from a file."""
    import traceback

    from flowcep.nfa.nfa import NFA
    from flowcep.pattern.exceptions import ConditionError
    from flowcep.sharedbuffer.sharedbuffer import SharedBuffer

    def no_price(event: str) -> bool:
        raise ValueError("no price")

    nfa: NFA = NFACompiler.compile(Pattern.begin("a").where(no_price).followed_by("b"))
    assert nfa._slots["a"].table is not None  # noqa: SLF001  (the decision is generated code)
    with pytest.raises(ConditionError) as raised:
        nfa.process(SharedBuffer(), nfa.create_initial_state(), "an event", 1)
    text = "".join(traceback.format_exception(raised.type, raised.value, raised.tb))
    assert "<flowcep generated decide " in text
    assert "    if f0(event):\n" in text  # the generated line that called the condition


def test_a_generated_function_that_raises_shows_its_source_line(share: bool) -> None:
    import traceback

    divide = codegen.generated("def divide(event):\n    return 1 // event\n", "divide", {})
    with pytest.raises(ZeroDivisionError) as raised:
        divide(0)
    frame = traceback.extract_tb(raised.tb)[-1]
    assert (frame.filename.startswith("<flowcep generated divide "), frame.line) == (
        True,
        "return 1 // event",
    )
