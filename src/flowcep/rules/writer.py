"""``Pattern`` objects to JSON rule documents (the shape ``reader`` reads; docs/rules.md).

Only declarative conditions can be written: expression conditions that kept their text
(``expression_condition``, or read from a rule), registered ones (``ConditionRegistry``), the
AND/OR/NOT combinators of those, and subtypes of registered classes. A Python callable cannot
be, and says so naming its step.
"""

from __future__ import annotations

from typing import Any

from flowcep.expr import ExpressionCondition
from flowcep.pattern import (
    AfterMatchSkipStrategy,
    Condition,
    GroupPattern,
    Pattern,
    QuantifierProperty,
    RichAndCondition,
    RichNotCondition,
    RichOrCondition,
    SkipToElementStrategy,
    SubtypeCondition,
    WithinType,
)
from flowcep.rules import names
from flowcep.rules.errors import RuleError
from flowcep.rules.registry import ConditionRegistry, NamedCondition

_SINGLE_QUANTIFIER = {
    "consumingStrategy": "SKIP_TILL_NEXT",
    "properties": ["SINGLE"],
    "times": None,
    "untilCondition": None,
}
_SKIP_TYPES = {
    "NoSkipStrategy": "NO_SKIP",
    "SkipToNextStrategy": "SKIP_TO_NEXT",
    "SkipPastLastStrategy": "SKIP_PAST_LAST_EVENT",
    "SkipToFirstStrategy": "SKIP_TO_FIRST",
    "SkipToLastStrategy": "SKIP_TO_LAST",
}


def steps_of(pattern: Pattern[Any]) -> list[Pattern[Any]]:
    """The steps of the sequence that ends with ``pattern``, first to last."""
    out: list[Pattern[Any]] = []
    node: Pattern[Any] | None = pattern
    while node is not None:
        out.append(node)
        node = node.previous
    return out[::-1]


def step_name(step: Pattern[Any]) -> str:
    """A step's node name: its own, or for a group its sub-pattern's last step's (as Ververica's)."""
    return step_name(step.raw_pattern) if isinstance(step, GroupPattern) else step.name


def duration(ms: int) -> dict[str, Any]:
    """``{"unit", "size"}`` in the largest unit that holds ``ms`` exactly."""
    for unit, size in names.UNIT_MS.items():
        if ms % size == 0:
            return {"unit": unit, "size": ms // size}
    raise AssertionError("milliseconds divide every duration")


class _Writer:
    def __init__(self, registry: ConditionRegistry | None) -> None:
        self.registry = registry

    def graph(self, last: Pattern[Any], name: str, quantifier: dict[str, Any]) -> dict[str, Any]:
        steps = steps_of(last)
        nodes: list[dict[str, Any]] = []
        edges: list[dict[str, Any]] = []
        for i, step in enumerate(steps):
            node = self.node(step)
            if i < len(steps) - 1 and step.window_times:
                node["groupWindow" if isinstance(step, GroupPattern) else "window"] = self.window(step)
            nodes.append(node)
            if i:
                edges.append(
                    {
                        "source": step_name(steps[i - 1]),
                        "target": step_name(step),
                        "type": step.quantifier.consuming_strategy.value,
                    }
                )
        return {
            "name": name,
            "type": "COMPOSITE",
            "quantifier": quantifier,
            "condition": None,
            "nodes": nodes,
            "edges": edges,
            "window": self.window(last) if last.window_times else None,
            "afterMatchStrategy": self.skip(steps[0].skip_strategy),
            "version": names.FORMAT_VERSION,
        }

    def node(self, step: Pattern[Any]) -> dict[str, Any]:
        if isinstance(step, GroupPattern):
            return self.graph(step.raw_pattern, step_name(step), self.quantifier(step))
        return {
            "name": step.name,
            "type": "ATOMIC",
            "quantifier": self.quantifier(step),
            "condition": self.condition(step.condition, step),
        }

    def quantifier(self, step: Pattern[Any]) -> dict[str, Any]:
        q = step.quantifier
        times = step.times_
        return {
            "consumingStrategy": q.inner_consuming_strategy.value,
            "properties": [p.value for p in QuantifierProperty if q.has_property(p)],
            "times": None
            if times is None
            else {
                "from": times.from_,
                "to": times.to,
                "windowTime": None if times.window_size is None else duration(times.window_size),
            },
            "untilCondition": self.condition(step.until_condition, step),
        }

    @staticmethod
    def window(step: Pattern[Any]) -> Any:
        windows = [
            {"type": kind.value, "time": duration(step.window_times[kind])}
            for kind in WithinType
            if kind in step.window_times
        ]
        return windows[0] if len(windows) == 1 else windows

    @staticmethod
    def skip(strategy: AfterMatchSkipStrategy) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": _SKIP_TYPES[type(strategy).__name__],
            "patternName": strategy.pattern_name,
        }
        if isinstance(strategy, SkipToElementStrategy) and strategy.should_throw_exception():
            out["throwExceptionOnMiss"] = True
        return out

    def condition(self, cond: Condition | None, step: Pattern[Any]) -> dict[str, Any] | None:
        if cond is None:
            return None
        if isinstance(cond, ExpressionCondition):
            if cond.text is None:
                raise RuleError(
                    f"step {step.name!r}", "an expression condition built from a tree has no text to write"
                )
            if cond.variable != step.name:
                raise RuleError(
                    f"step {step.name!r}",
                    f"its expression condition {cond.text!r} was made for step {cond.variable!r}",
                )
            return {"type": cond.dialect, "expression": cond.text}
        if isinstance(cond, NamedCondition):
            out: dict[str, Any] = {"type": "CLASS", "className": cond.name}
            if cond.args is not None:
                out["args"] = list(cond.args)
            return out
        if isinstance(cond, (RichAndCondition, RichOrCondition)):
            # two parts, nested as built: where(a).where(b).where(c) is AND(AND(a, b), c)
            return {
                "type": "CLASS",
                "className": names.AND_CLASS if isinstance(cond, RichAndCondition) else names.OR_CLASS,
                "nestedConditions": [self.condition(cond.left, step), self.condition(cond.right, step)],
            }
        if isinstance(cond, RichNotCondition):
            return {
                "type": "CLASS",
                "className": names.NOT_CLASS,
                "nestedConditions": [self.condition(cond.condition, step)],
            }
        if isinstance(cond, SubtypeCondition):
            return {
                "type": "CLASS",
                "className": names.SUBTYPE_CLASS,
                "subClassName": self.subtype(cond, step),
            }
        raise RuleError(
            f"step {step.name!r}",
            f"its condition {cond!r} is Python code; a JSON rule holds expressions (flowcep.rules."
            "expression_condition) or registered conditions (flowcep.rules.ConditionRegistry)",
        )

    def subtype(self, cond: SubtypeCondition, step: Pattern[Any]) -> str:
        cls = cond.subtype
        if isinstance(cls, type) and self.registry is not None:
            name = self.registry.type_name(cls)
            if name is not None:
                return name
        raise RuleError(
            f"step {step.name!r}", f"subtype {cls!r} is not registered (ConditionRegistry.register_type)"
        )


def write_document(
    pattern: Pattern[Any], registry: ConditionRegistry | None = None, name: str | None = None
) -> dict[str, Any]:
    """The rule document of ``pattern``; ``name`` is the rule's (default: the last step's node name)."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"expected a Pattern, got {pattern!r}")
    return _Writer(registry).graph(
        pattern, name if name is not None else step_name(pattern), dict(_SINGLE_QUANTIFIER)
    )
