"""Shared helpers of the hierarchy tests: raw events as dicts, a run that collects outputs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flowcep import Pattern
from flowcep.hierarchy import ComplexEvent, Hierarchy, LevelOutput, detect


def ev(ts: int, kind: str, key: str = "k", **fields: Any) -> dict[str, Any]:
    return {"ts": ts, "kind": kind, "key": key, **fields}


def is_(kind: str) -> Any:
    return lambda e: e["kind"] == kind


def run(hierarchy: Hierarchy, events: Iterable[Any], **options: Any) -> list[LevelOutput]:
    options.setdefault("timestamp", "ts")
    options.setdefault("key_by", "key")
    return list(detect(hierarchy, events, **options))


def matches(outputs: list[LevelOutput], level: str | None = None) -> list[ComplexEvent]:
    return [o.value for o in outputs if o.kind == "match" and (level is None or o.level == level)]


def spans(outputs: list[LevelOutput], level: str | None = None) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in matches(outputs, level)]


def pair(first: str, second: str, window: int | None = None) -> Pattern:
    """``first`` followed by ``second``, raw events by kind."""
    return Pattern.begin("a").where(is_(first)).followed_by("b").where(is_(second)).within(window)
