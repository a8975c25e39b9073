"""The JSON rule format: Ververica's example documents load and match, conditions of every kind,
the writer's output, and the schema (docs/rules.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from flowcep import CEP, AfterMatchSkipStrategy, Pattern, WithinType
from flowcep.pattern import ConsumingStrategy, QuantifierProperty, Times
from flowcep.rules import ConditionRegistry, RuleError, expression_condition, load_rules, schema

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VALIDATE = fastjsonschema.compile(schema())


def fixture(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return document


def matches(pattern: Pattern, events: list[dict[str, Any]]) -> list[dict[str, list[int]]]:
    """Each match as {step: [event ts...]}; events are dicts with a "ts"."""
    stream = CEP.pattern(events, pattern, timestamp=lambda e: e["ts"])
    return list(stream.select(lambda m: {k: [e["ts"] for e in v] for k, v in m.items()}))


def test_ververicas_demo_document_loads_in_its_chain_order() -> None:
    registry = ConditionRegistry()
    registry.register("com.example.cep.FinishCondition", lambda e: e["status"] == 9)
    pattern = Pattern.from_json(fixture("ververica_demo.json"), registry)
    assert pattern.name == "finish"
    assert pattern.previous is not None and pattern.previous.name == "browse"
    assert pattern.previous.quantifier.has_property(QuantifierProperty.LOOPING)
    assert pattern.quantifier.consuming_strategy is ConsumingStrategy.SKIP_TILL_NEXT
    assert pattern.skip_strategy == AfterMatchSkipStrategy.skip_past_last_event()
    events = [{"ts": 1, "status": 2}, {"ts": 2, "status": 5}, {"ts": 3, "status": 2}, {"ts": 4, "status": 9}]
    assert matches(pattern, events) == [{"browse": [1, 3], "finish": [4]}]


def test_ververicas_times_window_and_args_document_loads() -> None:
    registry = ConditionRegistry()
    registry.register_factory(
        "com.example.cep.ThresholdCondition", lambda field, limit: lambda e: e[field] > float(limit)
    )
    pattern = Pattern.from_json(fixture("ververica_times_window.json"), registry)
    failure = pattern.previous
    assert failure is not None
    assert failure.times_ == Times(3, 3, 12 * 60_000)
    assert pattern.window_times == {WithinType.PREVIOUS_AND_CURRENT: 5 * 60_000}
    assert pattern.skip_strategy == AfterMatchSkipStrategy.skip_to_first("failure")
    minute = 60_000
    events = [
        {"ts": 0 * minute, "level": "ERROR", "cpu": 10},
        {"ts": 1 * minute, "level": "INFO", "cpu": 10},
        {"ts": 2 * minute, "level": "FATAL", "cpu": 10},
        {"ts": 3 * minute, "level": "ERROR", "cpu": 10},
        {"ts": 4 * minute, "level": "INFO", "cpu": 95},
    ]
    assert matches(pattern, events) == [
        {"failure": [0, 2 * minute, 3 * minute], "alert": [4 * minute]},
    ]


def test_a_composite_node_is_a_group_with_its_own_quantifier() -> None:
    pattern = Pattern.from_json(fixture("ververica_composite.json"))
    assert type(pattern).__name__ == "GroupPattern"
    assert pattern.quantifier.has_property(QuantifierProperty.LOOPING)
    assert pattern.times_ == Times(2, 2, None)
    events = [
        {"ts": 1, "action": "login", "country": "FR", "amount": 0},
        {"ts": 2, "action": "transfer", "country": "FR", "amount": 50},
        {"ts": 3, "action": "transfer", "country": "FR", "amount": 500},
        {"ts": 4, "action": "transfer", "country": "FR", "amount": 700},
    ]
    assert matches(pattern, events) == [{"login": [1], "transfer": [3, 4]}]


def test_a_login_from_the_excluded_country_does_not_start_a_match() -> None:
    pattern = Pattern.from_json(fixture("ververica_composite.json"))
    events = [
        {"ts": 1, "action": "login", "country": "NL", "amount": 0},
        {"ts": 2, "action": "transfer", "country": "NL", "amount": 500},
        {"ts": 3, "action": "transfer", "country": "NL", "amount": 700},
    ]
    assert matches(pattern, events) == []


@pytest.mark.parametrize(
    "name", ["ververica_demo.json", "ververica_times_window.json", "ververica_composite.json"]
)
def test_the_example_documents_follow_the_schema(name: str) -> None:
    VALIDATE(fixture(name))


SCHEMA_REFUSES = {
    "node without a quantifier": lambda d: d["nodes"][0].pop("quantifier"),
    "unknown edge type": lambda d: d["edges"][0].update({"type": "FOLLOWED_BY"}),
    "expression condition without its expression": lambda d: d["nodes"][1]["condition"].pop("expression"),
    "negative times": lambda d: d["nodes"][1]["quantifier"].update({"times": {"from": -1, "to": 2}}),
    "window in weeks": lambda d: d.update(
        {"window": {"type": "FIRST_AND_LAST", "time": {"unit": "WEEKS", "size": 1}}}
    ),
}


@pytest.mark.parametrize("change", sorted(SCHEMA_REFUSES))
def test_the_schema_refuses_a_bad_document(change: str) -> None:
    document = fixture("ververica_demo.json")
    SCHEMA_REFUSES[change](document)
    with pytest.raises(fastjsonschema.JsonSchemaException):
        VALIDATE(document)


@pytest.mark.parametrize(
    "name", ["ververica_demo.json", "ververica_times_window.json", "ververica_composite.json"]
)
def test_an_example_document_written_back_reads_as_the_same_pattern(name: str) -> None:
    registry = ConditionRegistry()
    registry.register("com.example.cep.FinishCondition", lambda e: True)
    registry.register_factory("com.example.cep.ThresholdCondition", lambda field, limit: lambda e: True)
    pattern = Pattern.from_json(fixture(name), registry)
    written = pattern.to_dict(registry, name=fixture(name)["name"])
    VALIDATE(written)
    assert Pattern.from_json(written, registry).to_dict(registry, name=written["name"]) == written


def test_the_writer_keeps_the_text_and_type_of_each_expression() -> None:
    document = fixture("ververica_composite.json")
    written = Pattern.from_json(document).to_dict(name="cashout")
    assert written["nodes"][0]["condition"] == document["nodes"][0]["condition"]
    assert written["nodes"][1]["nodes"][0]["condition"] == {
        "type": "SQL",
        "expression": "action = 'transfer' AND amount >= 100",
    }


def test_a_condition_can_read_an_earlier_step() -> None:
    steps = ["probe", "big"]
    pattern = (
        Pattern.begin("probe")
        .where(expression_condition("amount < 5", "probe", steps))
        .followed_by("big")
        .where(expression_condition("amount > 100 * probe.amount AND country <> probe.country", "big", steps))
    )
    again = Pattern.from_json(pattern.to_json())
    events = [
        {"ts": 1, "amount": 1.0, "country": "ES"},
        {"ts": 2, "amount": 50.0, "country": "RU"},
        {"ts": 3, "amount": 900.0, "country": "ES"},
        {"ts": 4, "amount": 150.0, "country": "RU"},
    ]
    assert matches(again, events) == [{"probe": [1], "big": [4]}]


def test_string_functions_and_in_work_in_a_condition() -> None:
    document = {
        "name": "a",
        "nodes": [
            {
                "name": "a",
                "type": "ATOMIC",
                "quantifier": {"consumingStrategy": "SKIP_TILL_NEXT", "properties": ["SINGLE"]},
                "condition": {
                    "type": "SQL",
                    "expression": "UPPER(city) IN ('PARIS', 'ROME') AND LOWER(city) LIKE 'p%'",
                },
            }
        ],
    }
    events = [{"ts": 1, "city": "Paris"}, {"ts": 2, "city": "Rome"}, {"ts": 3, "city": "paris"}]
    assert matches(Pattern.from_json(document), events) == [{"a": [1]}, {"a": [3]}]


def test_expression_conditions_read_attributes_of_objects_too() -> None:
    class Tick:
        def __init__(self, ts: int, price: float) -> None:
            self.ts, self.price = ts, price

    pattern = Pattern.from_json(
        {
            "name": "a",
            "nodes": [
                {
                    "name": "a",
                    "type": "ATOMIC",
                    "quantifier": {"consumingStrategy": "SKIP_TILL_NEXT", "properties": ["SINGLE"]},
                    "condition": {"type": "AVIATOR", "expression": "price >= 10"},
                }
            ],
        }
    )
    ticks = [Tick(1, 5.0), Tick(2, 12.0)]
    found = CEP.pattern(ticks, pattern, timestamp=lambda e: e.ts).select(lambda m: [e.ts for e in m["a"]])
    assert list(found) == [[2]]


def test_a_subtype_condition_names_a_registered_class() -> None:
    class Payment:
        pass

    registry = ConditionRegistry()
    registry.register_type("shop.Payment", Payment)
    pattern = Pattern.begin("pay").subtype(Payment)
    written = pattern.to_dict(registry)
    assert written["nodes"][0]["condition"] == {
        "type": "CLASS",
        "className": "org.apache.flink.cep.pattern.conditions.SubtypeCondition",
        "subClassName": "shop.Payment",
    }
    assert Pattern.from_json(written, registry).condition == pattern.condition


def test_a_registered_condition_is_written_by_its_name() -> None:
    registry = ConditionRegistry()
    big = registry.register("shop.Big", lambda e: e["amount"] > 100)
    pattern = Pattern.begin("a").where(big).or_(registry.condition("shop.Big"))
    written = pattern.to_dict(registry)
    assert written["nodes"][0]["condition"] == {
        "type": "CLASS",
        "className": "org.apache.flink.cep.pattern.conditions.RichOrCondition",
        "nestedConditions": [
            {"type": "CLASS", "className": "shop.Big"},
            {"type": "CLASS", "className": "shop.Big"},
        ],
    }


def test_a_python_callable_cannot_be_written() -> None:
    pattern = Pattern.begin("a").where(lambda e: e["x"] > 1)
    with pytest.raises(RuleError, match=r"step 'a': its condition .* is Python code"):
        pattern.to_json()


def test_windows_of_middle_steps_and_both_window_types_are_kept() -> None:
    pattern = (
        Pattern.begin("a")
        .within(7)
        .followed_by("b")
        .within(2000, WithinType.PREVIOUS_AND_CURRENT)
        .within(60_000)
    )
    written = pattern.to_dict()
    assert written["nodes"][0]["window"] == {
        "type": "FIRST_AND_LAST",
        "time": {"unit": "MILLISECONDS", "size": 7},
    }
    assert written["window"] == [
        {"type": "FIRST_AND_LAST", "time": {"unit": "MINUTES", "size": 1}},
        {"type": "PREVIOUS_AND_CURRENT", "time": {"unit": "SECONDS", "size": 2}},
    ]
    again = Pattern.from_json(written)
    assert again.window_times == pattern.window_times
    assert again.previous is not None and again.previous.window_times == {WithinType.FIRST_AND_LAST: 7}


def test_load_rules_reads_an_array_of_documents_by_name(tmp_path: Path) -> None:
    registry = ConditionRegistry()
    registry.register("com.example.cep.FinishCondition", lambda e: True)
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([fixture("ververica_demo.json"), fixture("ververica_composite.json")]))
    rules = load_rules(path, registry)
    assert sorted(rules) == ["cashout", "finish"]
    assert rules["finish"].name == "finish"


def test_the_example_in_docs_rules_md_loads_and_matches() -> None:
    import re

    docs = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    document = json.loads(re.findall(r"```json\n(.*?)```", docs, flags=re.S)[0])
    VALIDATE(document)
    minute = 60_000
    events = [
        {"ts": 0, "amount": 1.0, "country": "ES"},
        {"ts": 1 * minute, "amount": 900.0, "country": "ES"},
        {"ts": 2 * minute, "amount": 800.0, "country": "RU"},
    ]
    assert matches(Pattern.from_json(document), events) == [{"probe": [0], "big": [2 * minute]}]
