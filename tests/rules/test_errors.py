"""Bad rule documents fail with a RuleError naming the JSON path and the problem."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flowcep import Pattern
from flowcep.rules import ConditionRegistry, RuleError, load_rules

SINGLE = {
    "consumingStrategy": "SKIP_TILL_NEXT",
    "properties": ["SINGLE"],
    "times": None,
    "untilCondition": None,
}


def node(name: str, expression: str = "price > 1", **quantifier: Any) -> dict[str, Any]:
    return {
        "name": name,
        "type": "ATOMIC",
        "quantifier": {**SINGLE, **quantifier},
        "condition": {"type": "SQL", "expression": expression},
    }


def good() -> dict[str, Any]:
    return {
        "name": "rule",
        "type": "COMPOSITE",
        "nodes": [node("a"), node("b"), node("c", properties=["TIMES"], times={"from": 2, "to": 3})],
        "edges": [
            {"source": "a", "target": "b", "type": "SKIP_TILL_NEXT"},
            {"source": "b", "target": "c", "type": "STRICT"},
        ],
        "window": None,
        "afterMatchStrategy": {"type": "NO_SKIP", "patternName": None},
        "version": 1,
    }


def changed(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(good())
    change(doc)
    return doc


def test_the_good_document_loads() -> None:
    assert Pattern.from_json(good()).name == "c"


CASES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("from below 0", lambda d: d["nodes"][2]["quantifier"]["times"].update({"from": -1}),
     "$.nodes[2].quantifier.times.from: must be at least 0, got -1"),
    ("from not an integer", lambda d: d["nodes"][2]["quantifier"]["times"].update({"from": "2"}),
     "$.nodes[2].quantifier.times.from: expected an integer, got the string '2'"),
    ("to below from", lambda d: d["nodes"][2]["quantifier"]["times"].update({"to": 1}),
     "$.nodes[2].quantifier.times.to: must be at least from (2) and 1, got 1"),
    ("TIMES without times", lambda d: d["nodes"][2]["quantifier"].update({"times": None}),
     "$.nodes[2].quantifier.times: a TIMES quantifier needs times"),
    ("two kinds", lambda d: d["nodes"][0]["quantifier"].update({"properties": ["SINGLE", "LOOPING"]}),
     "$.nodes[0].quantifier.properties: needs exactly one of SINGLE, LOOPING, TIMES, got ['SINGLE', 'LOOPING']"),
    ("unknown property", lambda d: d["nodes"][0]["quantifier"].update({"properties": ["SINGEL"]}),
     "$.nodes[0].quantifier.properties[0]: unknown property the string 'SINGEL'"),
    ("greedy single (Flink's check)", lambda d: d["nodes"][1]["quantifier"].update({"properties": ["SINGLE", "GREEDY"]}),
     "$.nodes[1].quantifier: Option not applicable to singleton quantifier"),
    ("missing quantifier", lambda d: d["nodes"][1].pop("quantifier"),
     "$.nodes[1].quantifier: is required"),
    ("bad consuming strategy", lambda d: d["nodes"][1]["quantifier"].update({"consumingStrategy": "NEXT"}),
     "$.nodes[1].quantifier.consumingStrategy: unknown value 'NEXT' (one of STRICT, SKIP_TILL_NEXT, SKIP_TILL_ANY)"),
    ("node without a name", lambda d: d["nodes"][1].pop("name"),
     "$.nodes[1].name: is required"),
    ("duplicate name", lambda d: d["nodes"][1].update({"name": "a"}),
     "$.nodes[1].name: node name 'a' is used twice in this graph"),
    ("edge to nowhere", lambda d: d["edges"][1].update({"target": "x"}),
     "$.edges[1].target: no node named 'x' in this graph"),
    ("unknown edge type", lambda d: d["edges"][0].update({"type": "FOLLOW"}),
     "$.edges[0].type: unknown value 'FOLLOW'"),
    ("a fork", lambda d: d["edges"].append({"source": "a", "target": "c", "type": "STRICT"}),
     "$.edges[2].source: node 'a' already has an edge out: a pattern is a chain"),
    ("two starts", lambda d: d["edges"].pop(),
     "$.edges: the chain needs exactly one node no edge points to, found 'a', 'c'"),
    ("a cycle", lambda d: d["edges"].append({"source": "c", "target": "a", "type": "STRICT"}),
     "$.edges: the chain needs exactly one node no edge points to, found none (the edges form a cycle)"),
    ("a node on a loop of its own", lambda d: d["edges"].__setitem__(1, {"source": "c", "target": "c", "type": "STRICT"}),
     "$.edges: nodes ['c'] are not on the chain from 'a'"),
    ("bad expression", lambda d: d["nodes"][1]["condition"].update({"expression": "price >"}),
     "$.nodes[1].condition.expression: 'price >': cannot parse"),
    ("unknown step in an expression", lambda d: d["nodes"][1]["condition"].update({"expression": "price > z.price"}),
     "$.nodes[1].condition.expression: 'price > z.price': z.price: unknown pattern variable 'z' (the pattern has a, b, c)"),
    ("aviator regex", lambda d: d["nodes"][0].update({"condition": {"type": "AVIATOR", "expression": "name =~ /a.*/"}}),
     "$.nodes[0].condition.expression: 'name =~ /a.*/': regular expression matching (=~) is not supported"),
    ("groovy", lambda d: d["nodes"][0].update({"condition": {"type": "GROOVY", "expression": "price > 1"}}),
     "$.nodes[0].condition.type: GROOVY conditions run JVM code and cannot run here"),
    ("unregistered class", lambda d: d["nodes"][0].update({"condition": {"type": "CLASS", "className": "x.Y"}}),
     "$.nodes[0].condition.className: no condition is registered as 'x.Y' (registered: none)"),
    ("NOT of two", lambda d: d["nodes"][0].update({"condition": {
        "type": "CLASS", "className": "org.apache.flink.cep.pattern.conditions.RichNotCondition",
        "nestedConditions": [{"type": "SQL", "expression": "TRUE"}, {"type": "SQL", "expression": "TRUE"}]}}),
     "$.nodes[0].condition.nestedConditions: NOT takes one condition, got 2"),
    ("bad nested", lambda d: d["nodes"][0].update({"condition": {
        "type": "CLASS", "className": "org.apache.flink.cep.pattern.conditions.RichAndCondition",
        "nestedConditions": [{"type": "SQL", "expression": "TRUE"}, {"type": "SQL"}]}}),
     "$.nodes[0].condition.nestedConditions[1].expression: is required"),
    ("window unit", lambda d: d.update({"window": {"type": "FIRST_AND_LAST", "time": {"unit": "WEEKS", "size": 1}}}),
     "$.window.time.unit: unknown value 'WEEKS'"),
    ("skip to nowhere", lambda d: d.update({"afterMatchStrategy": {"type": "SKIP_TO_LAST", "patternName": None}}),
     "$.afterMatchStrategy.patternName: must not be null"),
    ("version 2", lambda d: d.update({"version": 2}),
     "$.version: format version 2 is not supported"),
    ("until on a single step (Flink's check)", lambda d: d["nodes"][0]["quantifier"].update(
        {"untilCondition": {"type": "SQL", "expression": "TRUE"}}),
     "$.nodes[0].quantifier.untilCondition: The until condition is only applicable to looping states."),
    ("no rule name", lambda d: d.pop("name"),
     "$.name: is required"),
    ("nodes not a list", lambda d: d.update({"nodes": {}}),
     "$.nodes: expected an array, got an object"),
]  # fmt: skip


@pytest.mark.parametrize("change, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_document_names_the_path_and_the_problem(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    with pytest.raises(RuleError) as info:
        Pattern.from_json(changed(change))
    assert str(info.value).startswith(message)


def test_text_that_is_not_json_is_refused_at_the_root() -> None:
    with pytest.raises(RuleError, match=r"^\$: not JSON: "):
        Pattern.from_json("{nodes: [")


def test_a_factory_refusing_its_arguments_names_the_args() -> None:
    registry = ConditionRegistry()
    registry.register_factory("x.Above", lambda limit: float(limit))
    document = changed(
        lambda d: d["nodes"][0].update(
            {"condition": {"type": "CLASS", "className": "x.Above", "args": ["lots"]}}
        )
    )
    with pytest.raises(
        RuleError, match=r"^\$\.nodes\[0\]\.condition\.args: condition 'x\.Above': ValueError"
    ):
        Pattern.from_json(document, registry)


def test_load_rules_names_the_file_and_the_document(tmp_path: Path) -> None:
    bad = changed(lambda d: d["nodes"][2]["quantifier"]["times"].update({"from": -1}))
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([good(), bad]))
    with pytest.raises(RuleError) as info:
        load_rules(path)
    assert str(info.value) == f"{path}: $[1].nodes[2].quantifier.times.from: must be at least 0, got -1"
