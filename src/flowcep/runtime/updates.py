"""Changes to the pattern set of a ``MultiPatternOperator``, and rule records that make them.

A ``PatternUpdate`` puts a named, versioned pattern (adds it, or replaces another version) or
removes one. Rule sources (a directory, a broadcast or control stream) hold records; a *loader*
turns one record into a ``PatternUpdate``. The default loader, ``load_rule``, reads a JSON rule
record (docs/multi-pattern.md):

    {"id": "big-after-probe", "version": 3, "pattern": { ...a JSON pattern document... }}

``"pattern": null`` removes the rule; ``"keepPartialMatches": true`` asks a replace to keep the
old version's partial matches. The pattern document goes to ``Pattern.from_json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Union

import attrs

from flowcep.pattern import Pattern

__all__ = ["Loader", "PatternUpdate", "RuleRecordError", "check_name", "check_version", "load_rule"]


class RuleRecordError(ValueError):
    """A rule record that cannot be read: the message names the record and the problem."""


def check_name(name: Any) -> str:
    """``name`` if it is a non-empty string, else a ``ValueError`` saying what it got."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a pattern's name is a non-empty string, got {name!r}")
    return name


def check_version(version: Any) -> int:
    """``version`` if it is an int (not a bool), else a ``ValueError`` saying what it got."""
    if type(version) is not int:
        raise ValueError(f"a pattern's version is an int, got {version!r}")
    return version


def _check_update(update: PatternUpdate, _: Any, pattern: Any) -> None:
    check_name(update.name)
    if pattern is not None:
        if not isinstance(pattern, Pattern):
            raise TypeError(f"pattern {update.name!r}: expected a Pattern or None, got {pattern!r}")
        check_version(update.version)


@attrs.frozen(slots=True)
class PatternUpdate:
    """Put ``pattern`` under ``name`` at ``version`` (add it, or replace another version; the
    same version again changes nothing), or, with ``pattern`` None, remove ``name``.
    ``keep_partial_matches``: a replace keeps the old version's partial matches
    (``MultiPatternOperator.replace``)."""

    name: str
    version: int | None = None
    pattern: Pattern | None = attrs.field(default=None, validator=_check_update)
    keep_partial_matches: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    @classmethod
    def put(
        cls, name: str, version: int, pattern: Pattern, *, keep_partial_matches: bool = False
    ) -> PatternUpdate:
        return cls(name, version, pattern, keep_partial_matches)

    @classmethod
    def remove(cls, name: str) -> PatternUpdate:
        return cls(name, None, None)

    @property
    def removes(self) -> bool:
        return self.pattern is None


#: A rule source's loader: one record (a dict, or JSON text) to a ``PatternUpdate``.
Loader = Callable[[Any], PatternUpdate]
Record = Union[str, bytes, Mapping[str, Any]]


def load_rule(record: Record, registry: Any = None) -> PatternUpdate:
    """A JSON rule record (a dict, or its text) as a ``PatternUpdate``; ``registry`` names the
    callables of CLASS conditions (``Pattern.from_json``'s). ``RuleRecordError`` names the problem."""
    doc = _document(record)
    name = doc.get("id")
    if not isinstance(name, str) or not name:
        raise RuleRecordError(f"rule record {_short(doc)}: 'id' must be a non-empty string, got {name!r}")
    if "pattern" not in doc:
        raise RuleRecordError(f"rule {name!r}: no 'pattern' (a JSON pattern, or null to remove the rule)")
    spec = doc["pattern"]
    if spec is None:
        return PatternUpdate.remove(name)
    version = doc.get("version")
    if type(version) is not int:
        raise RuleRecordError(f"rule {name!r}: 'version' must be an int, got {version!r}")
    keep = doc.get("keepPartialMatches", False)
    if type(keep) is not bool:
        raise RuleRecordError(f"rule {name!r}: 'keepPartialMatches' must be true or false, got {keep!r}")
    try:
        pattern = Pattern.from_json(spec, registry=registry)
    except ValueError as exc:
        raise RuleRecordError(f"rule {name!r} version {version}: {exc}") from exc
    return PatternUpdate.put(name, version, pattern, keep_partial_matches=keep)


def _document(record: Record) -> Mapping[str, Any]:
    if isinstance(record, (str, bytes, bytearray)):
        try:
            doc = json.loads(record)
        except ValueError as exc:
            raise RuleRecordError(f"rule record {_short(record)} is not JSON: {exc}") from None
    else:
        doc = record
    if not isinstance(doc, Mapping):
        raise RuleRecordError(f"rule record {_short(doc)} is not a JSON object")
    return doc


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
