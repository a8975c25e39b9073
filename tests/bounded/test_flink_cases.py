"""The bounded evaluators against Flink CEP 2.3 on hand-written cases of their class: the
answers recorded in flink_cases.json (no JDK needed), and live when a JDK is available."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from flowcep.bounded import evaluate

from .flink_cases import CASES, ORACLE, RECORDED

sys.path.insert(0, str(ORACLE))

import flowcep_runner  # noqa: E402

FLINK = json.loads(RECORDED.read_text())


def canonical(matches: list[dict[str, list[Any]]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


def run(case: dict[str, Any], evaluator: str) -> list[str]:
    pattern = flowcep_runner.build(case["pattern"])
    events = [flowcep_runner.event_from_json(e, i) for i, e in enumerate(case["events"])]
    found = evaluate(pattern, events, timestamp="ts", evaluator=evaluator)
    return canonical([{k: [e.id for e in v] for k, v in m.items()} for m in found])


@pytest.mark.parametrize("evaluator", ["optiseq", "tree", "auto", "nfa"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_recorded_flink_answer(case: dict[str, Any], evaluator: str) -> None:
    assert run(case, evaluator) == canonical(FLINK[case["id"]]["matches"])


def test_the_recorded_answers_have_matches() -> None:
    assert all(FLINK[c["id"]]["matches"] for c in CASES)


def test_live_flink_agrees() -> None:
    import flink_oracle

    try:
        oracle = flink_oracle.get_oracle(download=False)
    except flink_oracle.OracleUnavailable as exc:
        pytest.skip(str(exc))
    for case, result in zip(CASES, oracle.run_cases(CASES)):
        assert canonical(result["matches"]) == run(case, "optiseq") == run(case, "tree"), case["id"]
