"""Hand-written oracle cases with Flink's answers recorded: run WITHOUT Java.

``samples/basic.json``: cases on which flowcep must agree with the recorded Flink results.
``samples/divergences.json``: reduced cases found by the differential oracle; kept as
regression tests (expected to fail until flowcep is fixed, then they XPASS: move them to
basic.json).

Re-record Flink's answers (needs a JDK 17): ``python tests/oracle/test_oracle_samples.py --record``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import flowcep_runner  # noqa: E402
from differential import both_emitted, canonical  # noqa: E402

SAMPLES = HERE / "samples"


def _load(name: str) -> list[dict[str, Any]]:
    path = SAMPLES / name
    return json.loads(path.read_text()) if path.is_file() else []


BASIC = _load("basic.json")
DIVERGENCES = _load("divergences.json")


@pytest.mark.parametrize("sample", BASIC, ids=[s["case"]["id"] for s in BASIC])
def test_sample_agrees_with_recorded_flink(sample: dict[str, Any]) -> None:
    mine = flowcep_runner.run_case(sample["case"])
    emitted = both_emitted(sample["flink"], mine)
    assert canonical(mine, emitted) == canonical(sample["flink"], emitted), sample.get("note", "")


@pytest.mark.parametrize("sample", BASIC, ids=[s["case"]["id"] for s in BASIC])
def test_sample_agrees_with_recorded_flink_with_the_operators_own_watermarks(sample: dict[str, Any]) -> None:
    mine = flowcep_runner.run_case(sample["case"], own_watermarks=True)
    emitted = both_emitted(sample["flink"], mine)
    assert canonical(mine, emitted) == canonical(sample["flink"], emitted), sample.get("note", "")


# Reduced cases of intentional deviations (docs/semantics.md 10): what each side does is asserted.
DEVIATIONS = {
    "div-a-s1-28": "Flink throws a NullPointerException, flowcep runs the pattern (10.1)",
    "s6174-658-reduced": "Flink's compiler overflows its stack, flowcep names the PROCEED cycle (10.5)",
    "s1123-403-reduced": "Flink follows a transition without a target state, flowcep runs the pattern (10.6)",
}


@pytest.mark.parametrize("sample", DIVERGENCES, ids=[s["case"]["id"] for s in DIVERGENCES])
def test_divergence_agrees_with_recorded_flink(sample: dict[str, Any]) -> None:
    mine = flowcep_runner.run_case(sample["case"])
    if sample["case"]["id"] == "s6174-658-reduced":
        assert (sample["flink"]["error"]["type"], sample["flink"]["error"]["stage"]) == (
            "StackOverflowError",
            "compile",
        )
        assert mine["error"]["type"] == "MalformedPatternException"
        assert "cycle of PROCEED edges" in mine["error"]["message"]
        return
    if sample["case"]["id"] in DEVIATIONS:
        assert sample["flink"]["error"]["type"] == "NullPointerException"
        assert mine["error"] is None
        return
    emitted = both_emitted(sample["flink"], mine)
    assert canonical(mine, emitted) == canonical(sample["flink"], emitted), sample.get("note", "")


def record() -> None:
    from flink_oracle import get_oracle

    oracle = get_oracle()
    for name in ("basic.json", "divergences.json"):
        samples = _load(name)
        if not samples:
            continue
        results = oracle.run_cases([s["case"] for s in samples])
        for s, r in zip(samples, results, strict=True):
            s["flink"] = r
        (SAMPLES / name).write_text(
            "[\n" + ",\n".join(json.dumps(s, separators=(", ", ": ")) for s in samples) + "\n]\n"
        )
        print(f"recorded {len(samples)} Flink results into {SAMPLES / name}")


if __name__ == "__main__":
    if "--record" in sys.argv:
        record()
    else:
        print(__doc__)
