"""``Hierarchy``: named complex event types, each a ``Pattern`` over raw events and/or lower
complex events, checked and ordered by ``build()`` into a ``HierarchyPlan``."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from flowcep.hierarchy.conditions import IsRaw, Nested, OfType
from flowcep.pattern import Condition, GroupPattern, Pattern, RichAndCondition
from flowcep.pattern.quantifier import ConsumingStrategy

Match = Mapping[str, list[Any]]
Compose = Callable[[Match], Mapping[str, Any]]
TimeOf = Callable[[Match], int]


class HierarchyError(ValueError):
    """A hierarchy that cannot run: an unknown type, a cycle, a level without what it needs."""


@attrs.frozen(slots=True)
class Level:
    """One complex event type: its pattern and how a match becomes a ``ComplexEvent``.

    ``uses``: the complex event types its steps read (from ``of_type``); ``reads_raw``: whether
    raw events reach it (some step's condition is not an ``of_type``). ``depth``: 1 above raw
    events, one more than its highest input level.
    """

    name: str
    pattern: Pattern
    compose: Compose | None
    start: TimeOf | None
    end: TimeOf | None
    uses: tuple[str, ...]
    reads_raw: bool
    depth: int = 0

    @property
    def window(self) -> int | None:
        return self.pattern.get_window_size()

    def release_lag(self) -> int:
        """How far behind its last event a match of this level may come out: 0, or its window
        when a skip strategy may hold matches back or the pattern ends in ``not_followed_by``
        (released when the window closes). Levels above run that far behind in event time, so
        that none of its complex events reaches them late."""
        if not (
            self.pattern.get_after_match_skip_strategy().is_skip_strategy() or _ends_in_not(self.pattern)
        ):
            return 0
        window = self.window
        if window is None:
            raise HierarchyError(
                f"complex event type {self.name!r} is read by a higher level but may hold its matches "
                "back without bound (a skip strategy other than no_skip, or a trailing not_followed_by, "
                "without a window): give its pattern within(...)"
            )
        return window

    def bound_pattern(self, interval: Callable[[Any], tuple[int, int]]) -> Pattern:
        """The pattern the level's operator runs: a copy in which, when the level reads complex
        events, every step from the first that may read a complex event on also checks
        precedence and the nested window (``Nested``), and a raw step of a level that reads both
        sees raw events only (``IsRaw``)."""
        if not self.uses:
            return self.pattern
        pattern = copy.deepcopy(self.pattern)
        names = tuple(dict.fromkeys(step.name for step in steps(pattern)))
        check = Nested(names, self.window, interval)
        raw = IsRaw()
        checked = False
        for step in steps(pattern):
            condition = step.condition
            complex_only = _complex_only(condition)
            if self.reads_raw and not complex_only:
                condition = raw if condition is None else RichAndCondition(raw, condition)
            # raw steps before the first complex one are a plain Flink sequence of raw events
            # (their partial match starts when its first event arrives): only from there on is
            # the check needed, and it makes a step's condition iterative, which costs
            checked = checked or complex_only or _types_in_any(condition)
            if checked:
                condition = check if condition is None else RichAndCondition(condition, check)
            step.condition = condition
        return pattern


@attrs.frozen(slots=True)
class HierarchyPlan:
    """A checked hierarchy: its levels in an order where each comes after those it reads
    (``levels``), which levels read each (``consumers``), and the top levels (read by none)."""

    levels: tuple[Level, ...]
    consumers: Mapping[str, tuple[str, ...]]
    top: tuple[str, ...]

    def level(self, name: str) -> Level:
        for level in self.levels:
            if level.name == name:
                return level
        raise KeyError(
            f"no complex event type {name!r}; the hierarchy defines {[lv.name for lv in self.levels]}"
        )

    def build(self) -> HierarchyPlan:
        return self


class Hierarchy:
    """Named complex event types, defined bottom up or in any order:

    ``Hierarchy().define("incident", p1, compose=...).define("outage", p2)``, where ``p2``'s steps
    read incidents with ``.where(of_type("incident", lambda c: ...))``. ``build()`` checks names
    and cycles and returns the ``HierarchyPlan`` the runtime runs.
    """

    def __init__(self) -> None:
        self._defined: dict[str, Level] = {}

    def define(
        self,
        name: str,
        pattern: Pattern,
        *,
        compose: Compose | None = None,
        start: TimeOf | None = None,
        end: TimeOf | None = None,
    ) -> Hierarchy:
        """Add the complex event type ``name``, detected by ``pattern``.

        ``compose(match)`` returns the complex event's attributes (default: none); ``start(match)``
        and ``end(match)`` its interval (default: the earliest start and the latest end of its
        constituents; a raw event's interval is its timestamp)."""
        if not isinstance(name, str) or not name:
            raise HierarchyError(f"a complex event type needs a non-empty name, got {name!r}")
        if name in self._defined:
            raise HierarchyError(f"complex event type {name!r} is defined twice")
        if not isinstance(pattern, Pattern):
            raise HierarchyError(f"complex event type {name!r} needs a Pattern, got {pattern!r}")
        for role, fn in (("compose", compose), ("start", start), ("end", end)):
            if fn is not None and not callable(fn):
                raise HierarchyError(
                    f"complex event type {name!r}: {role} must be a function of the match, got {fn!r}"
                )
        uses: dict[str, None] = {}
        reads_raw = False
        for step in steps(pattern):
            reads_raw |= not _complex_only(step.condition)
            for condition in (step.condition, step.until_condition):
                for type_name in _types_in(condition):
                    uses[type_name] = None
        self._defined[name] = Level(name, pattern, compose, start, end, tuple(uses), reads_raw)
        return self

    def build(self) -> HierarchyPlan:
        """Check the hierarchy: every type it reads is defined, and no type reads itself through
        others; ``HierarchyError`` names the first problem."""
        defined = self._defined
        if not defined:
            raise HierarchyError("the hierarchy defines no complex event type")
        for level in defined.values():
            for used in level.uses:
                if used not in defined:
                    raise HierarchyError(
                        f"complex event type {level.name!r} reads {used!r}, which is not defined "
                        f"(defined: {sorted(defined)})"
                    )
        order: list[str] = []
        depth: dict[str, int] = {}
        visiting: list[str] = []

        def visit(name: str) -> None:
            if name in depth:
                return
            if name in visiting:
                cycle = visiting[visiting.index(name) :] + [name]
                raise HierarchyError(f"the hierarchy has a cycle: {' -> '.join(cycle)}")
            visiting.append(name)
            level = defined[name]
            for used in level.uses:
                visit(used)
            visiting.pop()
            depth[name] = 1 + max((depth[used] for used in level.uses), default=0)
            order.append(name)

        for name in defined:
            visit(name)
        consumers: dict[str, list[str]] = {name: [] for name in order}
        for name in order:
            for used in defined[name].uses:
                consumers[used].append(name)
        levels = tuple(attrs.evolve(defined[name], depth=depth[name]) for name in order)
        for level in levels:
            if consumers[level.name]:
                level.release_lag()  # raises for a level that may hold matches back without bound
        return HierarchyPlan(
            levels,
            {name: tuple(readers) for name, readers in consumers.items()},
            tuple(name for name in order if not consumers[name]),
        )


def steps(pattern: Pattern) -> Iterator[Pattern]:
    """The pattern's steps in order, group patterns opened (a group is not a step)."""
    chain: list[Pattern] = []
    node: Pattern | None = pattern
    while node is not None:
        chain.append(node)
        node = node.previous
    for node in reversed(chain):
        if isinstance(node, GroupPattern):
            yield from steps(node.raw_pattern)
        else:
            yield node


def _ends_in_not(pattern: Pattern) -> bool:
    return pattern.quantifier.consuming_strategy is ConsumingStrategy.NOT_FOLLOW


def _complex_only(condition: Condition | None) -> bool:
    """A step reads complex events only when an ``of_type`` is one of its condition's conjuncts."""
    if condition is None:
        return False
    if isinstance(condition, OfType):
        return True
    if isinstance(condition, RichAndCondition):
        return _complex_only(condition.left) or _complex_only(condition.right)
    return False


def _types_in_any(condition: Any) -> bool:
    return next(_types_in(condition), None) is not None


def _types_in(condition: Any) -> Iterator[str]:
    if condition is None:
        return
    if isinstance(condition, OfType):
        yield condition.type_name
    nested = getattr(condition, "get_nested_conditions", None)
    if nested is not None:
        for inner in nested():
            yield from _types_in(inner)
