"""``load_rules``: a file of rule documents, by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowcep.pattern import Pattern
from flowcep.rules.errors import RuleError
from flowcep.rules.reader import read_document
from flowcep.rules.registry import ConditionRegistry


def load_rules(
    path: str | Path, registry: ConditionRegistry | None = None, access: str = "any"
) -> dict[str, Pattern[Any]]:
    """The patterns of a JSON file holding one rule document or an array of them, by rule name.

    Errors name the file and the JSON path: ``rules.json: $[1].nodes[0].name: is required``.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RuleError(f"{path}: $", f"not JSON: {exc}") from None
    documents = data if isinstance(data, list) else [data]
    prefix = "$" if not isinstance(data, list) else None
    rules: dict[str, Pattern[Any]] = {}
    for i, doc in enumerate(documents):
        root = prefix or f"$[{i}]"
        try:
            pattern = read_document(doc, registry, access)
        except RuleError as exc:
            raise RuleError(f"{path}: {root}{exc.path[1:]}", exc.problem) from None
        name = doc.get("name") if isinstance(doc, dict) else None
        if not isinstance(name, str) or not name:
            raise RuleError(f"{path}: {root}.name", "a rule in a file needs a name")
        if name in rules:
            raise RuleError(f"{path}: {root}.name", f"rule name {name!r} is used twice")
        rules[name] = pattern
    return rules
