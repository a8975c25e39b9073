"""Shared helpers of the runtime tests: a small event type, patterns, and output shorthands."""

from __future__ import annotations

from typing import Any

import attrs

from flowcep.pattern import Pattern
from flowcep.runtime import CepOperator, Output


@attrs.frozen
class Ev:
    """A test event: ``Ev("a", 3)`` is an ``a`` at t=3 for key ``k``."""

    name: str
    ts: int
    key: str = "k"
    value: int = 0

    def __repr__(self) -> str:
        extra = f"/{self.key}" if self.key != "k" else ""
        return f"{self.name}@{self.ts}{extra}"


def is_(name: str) -> Any:
    return lambda e: e.name == name


def abc_within(window: int = 10) -> Pattern:
    """a -> b -> c (followedBy) within ``window`` ms."""
    return (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .followed_by("c")
        .where(is_("c"))
        .within(window)
    )


def ab_within(window: int = 10) -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("b").where(is_("b")).within(window)


def a_not_followed_by_b(window: int = 10) -> Pattern:
    return Pattern.begin("a").where(is_("a")).not_followed_by("b").where(is_("b")).within(window)


def operator(pattern: Pattern, **kwargs: Any) -> CepOperator:
    kwargs.setdefault("timestamp", lambda e: e.ts)
    kwargs.setdefault("key_by", lambda e: e.key)
    return CepOperator(pattern, **kwargs)


def run(op: CepOperator, events: list[Any], flush: bool = True) -> list[Output]:
    out: list[Output] = []
    for e in events:
        out.extend(op.process_element(e))
    if flush:
        out.extend(op.flush())
    return out


def brief(outputs: list[Output]) -> list[tuple[Any, ...]]:
    """Outputs as short tuples: ("match", key, "a1 b2 c4", ts) with events as name+ts."""
    result = []
    for o in outputs:
        if o.kind in ("match", "timeout"):
            text = " ".join(f"{e.name}{e.ts}" for events in o.value.values() for e in events)
            result.append((o.kind, o.key, text, o.timestamp))
        elif o.kind == "late":
            result.append(("late", o.key, f"{o.value.name}{o.value.ts}", o.timestamp))
        elif o.kind == "dropped":
            text = " ".join(f"{e.name}{e.ts}" for events in o.value.match.values() for e in events)
            result.append(("dropped", o.key, text, o.timestamp))
        else:
            result.append((o.kind, o.key, o.value.stage, o.timestamp))
    return result


def events(spec: str, key: str = "k") -> list[Ev]:
    """``events("a1 b2 c4")`` -> [Ev("a", 1), Ev("b", 2), Ev("c", 4)]."""
    return [Ev(tok[0], int(tok[1:]), key) for tok in spec.split()]
