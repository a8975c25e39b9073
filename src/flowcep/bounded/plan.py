"""A pattern as the bounded evaluators see it: steps, negations, window, predicates.

``compile_bounded(pattern)`` validates the pattern with the NFA compiler (so an illegal pattern
raises Flink's ``MalformedPatternException``), then either returns a ``BoundedPattern`` or raises
``UnsupportedPattern`` naming the first feature outside the class both evaluators serve:

- steps joined by ``followed_by_any`` (the first step is ``begin``), no groups;
- a step is single, or ``one_or_more()`` / ``times_or_more(n)`` / ``times(a, b)`` with
  ``allow_combinations()`` (no ``optional``, ``greedy``, ``consecutive``, ``until``, no
  per-quantifier window);
- ``not_followed_by`` between two single steps (one or more in a row), not at the end;
- simple and iterative conditions;
- ``within`` (FIRST_AND_LAST) or no window;
- ``AfterMatchSkipStrategy.no_skip()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from flowcep.nfa import NFACompiler
from flowcep.pattern import (
    Condition,
    ConsumingStrategy,
    GroupPattern,
    NoSkipStrategy,
    Pattern,
    QuantifierProperty,
    RichAndCondition,
)

_NOT = (ConsumingStrategy.NOT_FOLLOW, ConsumingStrategy.NOT_NEXT)


class UnsupportedPattern(ValueError):
    """The pattern uses a feature a bounded evaluator does not serve; ``feature`` names it."""

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(f"not supported by the bounded evaluators: {feature}")


@attrs.frozen(slots=True)
class Conjunct:
    """One ANDed part of a step's condition, compiled: ``fn(event)`` or ``fn(event, ctx)``."""

    fn: Callable[..., Any]
    iterative: bool
    text: str


@attrs.frozen(slots=True)
class Step:
    """A pattern step (or a negated step, ``negated=True``).

    ``leading`` are the simple conjuncts before the first iterative one: they depend on the
    event alone, so the buffer filter applies them. ``rest`` are the others, in declaration order.
    """

    name: str
    leading: tuple[Conjunct, ...]
    rest: tuple[Conjunct, ...]
    min_times: int = 1
    max_times: int | None = 1  # None: unbounded
    negated: bool = False

    @property
    def looping(self) -> bool:
        return self.max_times != 1


@attrs.frozen(slots=True)
class BoundedPattern:
    """The compiled input of both evaluators.

    ``negations[i]`` are the negated steps between ``steps[i]`` and ``steps[i + 1]``.
    ``window`` is in milliseconds; 0 means no window (a match's span must be below it).
    """

    steps: tuple[Step, ...]
    negations: tuple[tuple[Step, ...], ...]
    window: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)


def conjuncts(condition: Condition | None) -> list[Condition]:
    """The ANDed parts of a condition in declaration (evaluation) order."""
    if condition is None:
        return []
    if isinstance(condition, RichAndCondition):
        return conjuncts(condition.left) + conjuncts(condition.right)
    return [condition]


def _step(node: Pattern, negated: bool) -> Step:
    parts = []
    for cond in conjuncts(node.condition):
        fn, iterative = cond.compile()
        parts.append(Conjunct(fn, iterative, repr(cond)))
    split = next((i for i, c in enumerate(parts) if c.iterative), len(parts))
    if negated:
        return Step(node.name, tuple(parts[:split]), tuple(parts[split:]), negated=True)
    q = node.quantifier
    if q.has_property(QuantifierProperty.OPTIONAL):
        raise UnsupportedPattern(f"optional() on step {node.name!r}")
    if q.has_property(QuantifierProperty.SINGLE):
        return Step(node.name, tuple(parts[:split]), tuple(parts[split:]))
    if q.has_property(QuantifierProperty.GREEDY):
        raise UnsupportedPattern(f"greedy() on step {node.name!r}")
    if node.until_condition is not None:
        raise UnsupportedPattern(f"until() on step {node.name!r}")
    if q.inner_consuming_strategy is not ConsumingStrategy.SKIP_TILL_ANY:
        which = "consecutive()" if q.inner_consuming_strategy is ConsumingStrategy.STRICT else "no"
        raise UnsupportedPattern(
            f"a looping step without allow_combinations() ({which} inner contiguity) on step {node.name!r}"
        )
    times = node.times_
    assert times is not None
    if times.window_size is not None and times.window_size > 0:
        raise UnsupportedPattern(f"a per-quantifier window on step {node.name!r}")
    looping = q.has_property(QuantifierProperty.LOOPING)
    return Step(
        node.name,
        tuple(parts[:split]),
        tuple(parts[split:]),
        min_times=times.from_,
        max_times=None if looping else times.to,
    )


def compile_bounded(pattern: Pattern) -> BoundedPattern:
    """Validate ``pattern`` as Flink does, then analyse it (see the module docstring)."""
    _, window_time, window_times = NFACompiler.compile_states(pattern)
    if not isinstance(pattern.skip_strategy, NoSkipStrategy):
        raise UnsupportedPattern(f"the after-match skip strategy {pattern.skip_strategy!r} (only no_skip)")
    if window_times:
        raise UnsupportedPattern("a PREVIOUS_AND_CURRENT or per-quantifier window")
    nodes: list[Pattern] = []
    node: Pattern | None = pattern
    while node is not None:
        nodes.append(node)
        node = node.previous
    nodes.reverse()
    steps: list[Step] = []
    negations: list[list[Step]] = []
    for i, node in enumerate(nodes):
        if isinstance(node, GroupPattern):
            raise UnsupportedPattern("group patterns")
        strategy = node.quantifier.consuming_strategy
        if strategy is ConsumingStrategy.NOT_NEXT:
            raise UnsupportedPattern(f"not_next on step {node.name!r}")
        if strategy is ConsumingStrategy.NOT_FOLLOW:
            if i == len(nodes) - 1:
                raise UnsupportedPattern(f"not_followed_by as the last step ({node.name!r})")
            if steps[-1].looping:
                raise UnsupportedPattern(f"not_followed_by after the looping step {steps[-1].name!r}")
            negations[-1].append(_step(node, negated=True))
            continue
        if i > 0 and strategy is not ConsumingStrategy.SKIP_TILL_ANY:
            what = "next" if strategy is ConsumingStrategy.STRICT else "followed_by"
            raise UnsupportedPattern(f"{what} before step {node.name!r} (only followed_by_any)")
        step = _step(node, negated=False)
        if steps and negations[-1] and step.looping:
            raise UnsupportedPattern(f"not_followed_by before the looping step {node.name!r}")
        steps.append(step)
        negations.append([])
    negations.pop()
    return BoundedPattern(tuple(steps), tuple(tuple(n) for n in negations), max(window_time, 0))


def support(pattern: Pattern) -> str | None:
    """None if both evaluators serve ``pattern``, else the unsupported feature."""
    try:
        compile_bounded(pattern)
    except UnsupportedPattern as exc:
        return exc.feature
    return None
