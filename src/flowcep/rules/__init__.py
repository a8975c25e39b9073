"""Patterns as data: the JSON rule format of Ververica's dynamic CEP (docs/rules.md).

``Pattern.to_json()`` / ``Pattern.from_json(text, registry)`` read and write it; this package
holds the reader, the writer, the JSON Schema (``schema()``), the registry of named conditions
and ``load_rules`` for files. ``Pattern.to_json``/``from_json`` import it on first use.
"""

from __future__ import annotations

import json
from typing import Any

from flowcep.rules.errors import RuleError
from flowcep.rules.expressions import ExpressionSyntaxError, aviator_to_sql, expression_condition
from flowcep.rules.files import load_rules
from flowcep.rules.reader import read_document
from flowcep.rules.registry import ConditionRegistry, NamedCondition
from flowcep.rules.writer import write_document

SCHEMA_FILE = "pattern.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a rule document, shipped beside this module."""
    from importlib import resources

    text = resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


class _Codec:
    """What ``Pattern.to_dict`` / ``Pattern.from_json`` call (``flowcep.pattern.serialization``)."""

    __slots__ = ()

    @staticmethod
    def to_dict(pattern: Any, registry: Any = None, name: str | None = None) -> dict[str, Any]:
        return write_document(pattern, registry, name)

    @staticmethod
    def from_document(document: Any, registry: Any = None, access: str = "any") -> Any:
        return read_document(document, registry, access)


CODEC = _Codec()

__all__ = [
    "CODEC",
    "ConditionRegistry",
    "ExpressionSyntaxError",
    "NamedCondition",
    "RuleError",
    "aviator_to_sql",
    "expression_condition",
    "load_rules",
    "read_document",
    "schema",
    "write_document",
]
