"""Which hierarchies the one-pass engine runs (docs/semantics.md, 11.9), and each level's steps
in the form it runs them.

The class: every level a sequence of single steps (no quantifier, not optional, no negation, no
group), its first step a raw step, every later step joined by ``next``, ``followed_by`` or
``followed_by_any``; a raw step's condition reads the event alone (no ``of_type`` in it, no
iterative or rich condition); a box step's condition exactly ``of_type(name)`` or
``of_type(name, fn)``; ``no_skip``; at most one window, ``within(T)`` on the whole pattern; the
default interval of a complex event (no ``start=`` or ``end=``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from flowcep.hierarchy.conditions import OfType
from flowcep.hierarchy.definition import HierarchyPlan, Level, steps
from flowcep.pattern import GroupPattern, Pattern, WithinType
from flowcep.pattern.pattern import pattern_rich_conditions
from flowcep.pattern.quantifier import ConsumingStrategy, QuantifierProperty

_JOINS = (ConsumingStrategy.STRICT, ConsumingStrategy.SKIP_TILL_NEXT, ConsumingStrategy.SKIP_TILL_ANY)


def _accept_all(event: Any) -> bool:
    return True


@attrs.frozen(slots=True)
class Step:
    """One step of a level in the class: its ``name``, ``test`` (a function of the event alone),
    the complex event type it reads (``box``; None for a raw step), whether runs waiting at it
    branch on every event it accepts (``any``: ``followed_by_any``) and whether the level's next
    input event must be the one (``strict``: ``next``); else they move on (``followed_by``)."""

    name: str
    test: Callable[[Any], Any]
    box: str | None
    any: bool
    strict: bool = False


@attrs.frozen(slots=True)
class LevelSteps:
    """A level of the class: its steps in order and its window (None: none)."""

    level: Level
    steps: tuple[Step, ...]
    window: int | None


def one_pass_levels(plan: HierarchyPlan) -> tuple[LevelSteps, ...] | str:
    """Each level's steps, in the plan's order, when the whole hierarchy is in the class; else
    why not (the first level and feature outside it)."""
    levels = []
    for level in plan.levels:
        found = _level_steps(level)
        if isinstance(found, str):
            return f"complex event type {level.name!r}: {found}"
        levels.append(found)
    return tuple(levels)


def _level_steps(level: Level) -> LevelSteps | str:
    if level.start is not None or level.end is not None:
        return "its interval is set by start= or end="
    pattern = level.pattern
    if pattern.get_after_match_skip_strategy().is_skip_strategy():
        return "a skip strategy other than no_skip"
    if pattern_rich_conditions(pattern):
        return "a rich condition"
    node: Pattern | None = pattern
    while node is not None:
        if isinstance(node, GroupPattern):
            return "a group pattern"
        windows = node.window_times
        if windows and (node is not pattern or set(windows) != {WithinType.FIRST_AND_LAST}):
            return "a window on a step, or between consecutive events"
        node = node.previous
    chain = list(steps(pattern))
    found: list[Step] = []
    for at, step in enumerate(chain):
        quantifier = step.quantifier
        if quantifier.properties != frozenset({QuantifierProperty.SINGLE}):
            return f"step {step.name!r} is not a single step"
        strategy = quantifier.consuming_strategy
        if at and strategy not in _JOINS:
            return f"step {step.name!r} is not joined by next, followed_by or followed_by_any"
        condition = step.condition
        if isinstance(condition, OfType):
            if at == 0:
                return "its first step reads complex events"
            box: str | None = condition.type_name
            test, iterative = condition.compile()
        elif condition is None:
            box, test, iterative = None, _accept_all, False
        else:
            if next(_types(condition), None) is not None:
                return f"step {step.name!r} mixes of_type with other conditions"
            box = None
            test, iterative = condition.compile()
        if iterative:
            return f"step {step.name!r} has an iterative condition"
        found.append(
            Step(
                step.name,
                test,
                box,
                strategy is ConsumingStrategy.SKIP_TILL_ANY,
                at > 0 and strategy is ConsumingStrategy.STRICT,
            )
        )
    return LevelSteps(level, tuple(found), level.window)


def _types(condition: Any) -> Any:
    if isinstance(condition, OfType):
        yield condition.type_name
    nested = getattr(condition, "get_nested_conditions", None)
    if nested is not None:
        for inner in nested():
            yield from _types(inner)
