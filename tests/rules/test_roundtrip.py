"""Round trip: every pattern of the differential generator (tests/oracle/generate.py), with its
conditions written as expressions, goes to JSON and back to an equal pattern with equal matches."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import fastjsonschema
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.pattern import GroupPattern
from flowcep.rules import expression_condition, schema

ORACLE = Path(__file__).resolve().parents[1] / "oracle"
sys.path.insert(0, str(ORACLE))

import flowcep_runner  # noqa: E402
import generate  # noqa: E402

VALIDATE = fastjsonschema.compile(schema())


def expression_text(call: list[Any], step: str) -> str | None:
    """The generator's condition ``call`` of ``step`` as an expression (None: no condition)."""
    kind, args = call[1], call[2:]
    if kind is None:
        return None
    simple = {
        "true": lambda: "TRUE",
        "name_eq": lambda: f"name = '{args[0]}'",
        "name_ne": lambda: f"name <> '{args[0]}'",
        "name_in": lambda: "name IN (" + ", ".join(f"'{x}'" for x in args[0]) + ")",
        "price_gt": lambda: f"price > {args[0]}",
        "price_lt": lambda: f"price < {args[0]}",
    }
    if kind in simple:
        return simple[kind]()
    ref = args[0]
    own = ref == step  # a step's own rows include the row being tested
    last = f"LAST({ref}.price, 1)" if own else f"LAST({ref}.price)"
    if kind == "sum_lt":
        return (
            f"SUM({ref}.price) < {args[1]}" if own else f"COALESCE(SUM({ref}.price), 0) + price < {args[1]}"
        )
    if kind == "gt_last":
        return f"{last} IS NULL OR price > {last}"
    if kind == "lt_last":
        return f"{last} IS NULL OR price < {last}"
    if kind == "count_lt":
        return f"COUNT({ref}.price) {'<=' if own else '<'} {args[1]}"
    if kind == "ts_since_first_lt":
        return f"FIRST({ref}.ts) IS NULL OR ts - FIRST({ref}.ts) < {args[1]}"
    raise AssertionError(f"no expression for {kind}")


def step_names(calls: list[list[Any]]) -> list[str]:
    """The atomic steps of a call list in pattern order (groups depth first)."""
    out: list[str] = []
    for c in calls:
        if c[0] in flowcep_runner.STEP_OPS:
            out += step_names(c[1]) if isinstance(c[1], list) else [c[1]]
    return out


def declarative(case: dict[str, Any]) -> Pattern:
    steps = step_names(case["pattern"])

    def make(call: list[Any], step: str) -> Any:
        text = expression_text(call, step)
        return None if text is None else expression_condition(text, step, steps)

    skip = flowcep_runner.skip_strategy(case.get("skip"))
    return flowcep_runner.build(case["pattern"], skip, conditions=make)


def structure(p: Pattern | None) -> Any:
    """Everything that defines a pattern, to compare two patterns (conditions by their ``==``)."""
    if p is None:
        return None
    return (
        type(p).__name__,
        p.name,
        p.quantifier,
        p.times_,
        dict(p.window_times),
        p.skip_strategy,
        p.condition,
        p.until_condition,
        structure(p.raw_pattern) if isinstance(p, GroupPattern) else None,
        structure(p.previous),
    )


def outcome(result: dict[str, Any]) -> Any:
    return result["error"], result["matches"], result["timeouts"], result["late"]


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_generated_patterns_go_to_json_and_back_unchanged(seed: int) -> None:
    case = generate.gen_case(random.Random(seed), f"rt{seed}")
    try:
        pattern = declarative(case)
        first = flowcep_runner.run_case(case, pattern)
    except Exception:
        assume(False)  # a pattern Flink rejects has nothing to round-trip
    assume(first["error"] is None)
    text = pattern.to_json()
    document = json.loads(text)
    VALIDATE(document)
    again = Pattern.from_json(text)
    assert structure(again) == structure(pattern)
    assert again.to_dict() == document
    assert outcome(flowcep_runner.run_case(case, again)) == outcome(first)


def test_the_translation_keeps_the_generators_meaning_on_simple_conditions() -> None:
    # the same case run with the Python conditions and with the expressions: equal matches
    rng = random.Random(7)
    compared = 0
    for i in range(200):
        case = generate.gen_case(rng, f"t{i}")
        calls = json.dumps(case["pattern"])
        if any(k in calls for k in generate.ITERATIVE_KINDS):
            continue
        try:
            pattern = declarative(case)
        except Exception:
            continue
        declared = flowcep_runner.run_case(case, pattern)
        if declared["error"] is not None:
            continue
        assert outcome(declared) == outcome(flowcep_runner.run_case(case))
        compared += 1
    assert compared > 50
