"""Rule records (``load_rule``: JSON rule records with a JSON pattern) and rule directories
(``RuleDirectory``) feeding a ``MultiPatternOperator`` (docs/multi-pattern.md, section 4)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from flowcep import CEP, MultiPatternOperator, Pattern, PatternUpdate
from flowcep.runtime import RuleRecordError, load_rule
from flowcep.runtime.ruledir import RuleDirectory


def node(name: str, expression: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": "ATOMIC",
        "quantifier": {
            "consumingStrategy": "SKIP_TILL_NEXT",
            "properties": ["SINGLE"],
            "times": None,
            "untilCondition": None,
        },
        "condition": {"type": "SQL", "expression": expression},
    }


def probe_then_big(threshold: int) -> dict[str, Any]:
    """A JSON pattern: amount under 5, then amount over ``threshold``, within 10 ms."""
    return {
        "name": "probe-then-big",
        "type": "COMPOSITE",
        "version": 1,
        "nodes": [node("probe", "amount < 5"), node("big", f"amount > {threshold}")],
        "edges": [{"source": "probe", "target": "big", "type": "SKIP_TILL_NEXT"}],
        "window": {"type": "FIRST_AND_LAST", "time": {"unit": "MILLISECONDS", "size": 10}},
        "afterMatchStrategy": {"type": "SKIP_PAST_LAST_EVENT", "patternName": None},
    }


def record(rule_id: str, version: int, threshold: int | None) -> dict[str, Any]:
    return {
        "id": rule_id,
        "version": version,
        "pattern": None if threshold is None else probe_then_big(threshold),
    }


def pay(ts: int, amount: float, card: str = "c1") -> dict[str, Any]:
    return {"card": card, "amount": amount, "ts": ts}


def brief(outputs: Any) -> list[tuple[Any, ...]]:
    return [
        (o.kind, o.pattern, o.version, o.key, [e["amount"] for step in o.value.values() for e in step])
        for o in outputs
        if o.kind == "match"
    ]


# ---------------------------------------------------------------- load_rule


def test_a_rule_record_puts_its_json_pattern_under_its_id_and_version() -> None:
    update = load_rule(json.dumps(record("big", 3, 500)))
    assert (update.name, update.version) == ("big", 3)
    assert update.pattern is not None
    assert update.pattern.to_json() == Pattern.from_json(probe_then_big(500)).to_json()
    assert load_rule(record("big", 4, None)) == PatternUpdate.remove("big")
    assert load_rule({**record("big", 5, 500), "keepPartialMatches": True}).keep_partial_matches is True


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", r"rule record '\{not json' is not JSON"),
        ([1, 2], r"rule record \[1, 2\] is not a JSON object"),
        ({"version": 1, "pattern": None}, r"'id' must be a non-empty string, got None"),
        ({"id": "big", "pattern": probe_then_big(1)}, r"rule 'big': 'version' must be an int, got None"),
        ({"id": "big", "version": 1}, r"rule 'big': no 'pattern'"),
        (
            {"id": "big", "version": 1, "pattern": probe_then_big(1), "keepPartialMatches": "yes"},
            r"'keepPartialMatches' must be true or false, got 'yes'",
        ),
        (
            {
                "id": "big",
                "version": 2,
                "pattern": {
                    **probe_then_big(1),
                    "edges": [{"source": "probe", "target": "x", "type": "SKIP_TILL_NEXT"}],
                },
            },
            r"rule 'big' version 2: \$\.edges\[0\]\.target: no node named 'x'",
        ),
    ],
)
def test_a_rule_record_that_cannot_be_read_names_the_rule_and_the_problem(bad: Any, message: str) -> None:
    with pytest.raises(RuleRecordError, match=message):
        load_rule(bad if isinstance(bad, str) else json.dumps(bad))


# ---------------------------------------------------------------- the operator with JSON rules


def test_json_rules_in_the_stream_are_loaded_by_the_default_loader() -> None:
    items = [
        record("big", 1, 500),
        pay(1, 1.0),
        pay(2, 600.0),
        pay(3, 50.0),  # (its watermark, 2, lets version 1 match 600.00)
        record("big", 2, 100),  # replaces version 1 at the watermark
        pay(4, 2.0),
        pay(5, 200.0),
        pay(6, 9.0),
    ]
    stream = CEP.patterns(items, key_by="card", timestamp="ts", is_control=lambda i: "id" in i)
    assert brief(stream) == [("match", "big", 1, "c1", [1.0, 600.0]), ("match", "big", 2, "c1", [2.0, 200.0])]


def test_a_snapshot_of_json_patterns_restores_into_an_operator_that_hosts_nothing() -> None:
    op = MultiPatternOperator([load_rule(record("big", 7, 500))], key_by="card", timestamp="ts")
    op.process_elements([pay(1, 1.0), pay(2, 3.0)])
    restored = MultiPatternOperator(key_by="card", timestamp="ts")
    restored.restore(op.snapshot())  # the patterns come back from their stored JSON documents
    assert {n: v for n, (v, _) in restored.patterns.items()} == {"big": 7}
    assert brief(restored.process_elements([pay(3, 900.0), pay(4, 50.0)])) == [
        ("match", "big", 7, "c1", [1.0, 900.0])
    ]


# ---------------------------------------------------------------- rule directories


def write(directory: Path, name: str, doc: dict[str, Any]) -> None:
    path = directory / name
    path.write_text(json.dumps(doc))
    # a new modification time even within the file system's clock resolution
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_a_rule_directory_parses_only_the_files_that_changed(tmp_path: Path) -> None:
    loaded: list[str] = []

    def counting(text: str) -> PatternUpdate:
        update = load_rule(text)
        loaded.append(update.name)
        return update

    write(tmp_path, "a.json", record("a", 1, 100))
    write(tmp_path, "b.json", record("b", 1, 200))
    (tmp_path / "notes.txt").write_text("not a rule")
    rules = RuleDirectory(tmp_path, counting)
    assert {n: v for n, (v, _) in rules.current().items()} == {"a": 1, "b": 1}
    assert {n: v for n, (v, _) in rules.current().items()} == {"a": 1, "b": 1}
    write(tmp_path, "b.json", record("b", 2, 300))
    (tmp_path / "a.json").unlink()
    write(tmp_path, "c.json", record("c", 1, None))  # a removal record holds no rule
    write(tmp_path, "d.json", {**record("d", 1, 100), "keepPartialMatches": True})
    assert {n: v for n, (v, _) in rules.current().items()} == {"b": 2, "d": 1}
    assert [(u.name, u.keep_partial_matches) for u in rules.updates()] == [("b", False), ("d", True)]
    assert loaded == ["a", "b", "b", "c", "d"]


def test_a_rule_file_that_breaks_keeps_its_rule_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, "a.json", record("a", 1, 100))
    rules = RuleDirectory(tmp_path)
    rules.current()
    (tmp_path / "a.json").write_text('{"id": "a", "version": 2, "pattern": {"nodes": []}}')
    write(tmp_path, "a.json", json.loads((tmp_path / "a.json").read_text()))
    with caplog.at_level(logging.WARNING, logger="flowcep.runtime.ruledir"):
        assert {n: v for n, (v, _) in rules.current().items()} == {"a": 1}
    assert "a.json not loaded" in caplog.text and "keeping rule 'a' version 1" in caplog.text


def test_two_files_with_one_rule_id_are_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.json", record("same", 1, 100))
    write(tmp_path, "b.json", record("same", 2, 100))
    with pytest.raises(RuleRecordError, match="rule 'same' is in two files: a.json and b.json"):
        RuleDirectory(tmp_path).current()
