"""``Hierarchy``: named complex event types, each a ``Pattern`` over raw events and/or lower
complex events, checked and ordered by ``build()`` into a ``HierarchyPlan``."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from flowcep.hierarchy.conditions import IsRaw, Nested, OfType
from flowcep.pattern import Condition, GroupPattern, Pattern, RichAndCondition
from flowcep.pattern.quantifier import ConsumingStrategy, QuantifierProperty

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

    def bound_pattern(self, interval: Callable[[Any], tuple[int, int]], *, implied: bool = False) -> Pattern:
        """The pattern the level's operator runs: a copy in which, when the level reads complex
        events, the steps from the first that may read a complex event on also check
        precedence and the nested window (``Nested``), and a raw step of a level that reads both
        sees raw events only (``IsRaw``).

        A check that the level's input order already makes hold is left out (``implied=True``
        keeps it, to test that it is implied): a raw step right after a complex step always
        starts after that step's event ends, as at one timestamp raw events come first (11.3);
        and when the level starts with a raw step, the operator's own window, counted from that
        event, is the nested window. A condition without the check stays simple, and the NFA
        then decides once per state for all runs, not once per run."""
        if not self.uses:
            return self.pattern
        pattern = copy.deepcopy(self.pattern)
        chain = list(steps(pattern))
        names = tuple(dict.fromkeys(step.name for step in chain))
        # in a group, a step may follow others than the one before it (a looping group): all checks
        implied = implied or _has_group(pattern)
        window_implied = not implied and not _complex_only(chain[0].condition) and not _optional(chain[0])
        window = None if window_implied else self.window
        first = _until_mandatory(chain) if not implied else names
        raw = IsRaw()
        checked = False
        for at, step in enumerate(chain):
            condition = step.condition
            complex_only = _complex_only(condition)
            if self.reads_raw and not complex_only:
                condition = raw if condition is None else RichAndCondition(raw, condition)
            # raw steps before the first complex one are a plain Flink sequence of raw events
            # (their partial match starts when its first event arrives): only from there on is
            # the check needed, and it makes a step's condition iterative, which costs
            checked = checked or complex_only or _types_in_any(condition)
            before = chain[at - 1] if at else None
            follows_complex = before is not None and _complex_only(before.condition) and _single(before)
            needed = complex_only or window is not None or not (follows_complex and _single(step))
            if checked and (implied or needed):
                earlier = [] if _single(step) else [step]
                earlier += reversed(chain[:at])
                last = tuple(reversed(names)) if implied else _until_mandatory(earlier)
                check = Nested(last, first, window, interval, not implied)
                condition = check if condition is None else RichAndCondition(condition, check)
            step.condition = condition
        return pattern

    def raw_filter(self) -> Callable[[Any], bool] | None:
        """Which raw events can change this level's state, or None: all may.

        Only for a level whose raw events pass through nothing that reacts to an event no
        condition accepts: every step a single step (no quantifier, not optional, no negation),
        no strict contiguity, no skip strategy, no group. There, an event that no raw step's
        condition accepts is ignored by every run, and left out, it changes nothing. The filter
        is each raw step's simple conjuncts, or'ed; a step without one lets every event in."""
        pattern = self.pattern
        if pattern.get_after_match_skip_strategy().is_skip_strategy() or _has_group(pattern):
            return None
        tests: list[Callable[[Any], Any]] = []
        node: Pattern | None = pattern
        while node is not None:
            if not _single(node):
                return None
            strategy = node.quantifier.consuming_strategy
            if node.previous is not None and strategy not in _RELAXED:
                return None
            if not _complex_only(node.condition):
                simple = list(_simple_conjuncts(node.condition))
                if not simple:
                    return None
                tests.append(simple[0] if len(simple) == 1 else _all_of(tuple(simple)))
            node = node.previous
        return _any_of(tuple(reversed(tests)))


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


_RELAXED = (ConsumingStrategy.SKIP_TILL_NEXT, ConsumingStrategy.SKIP_TILL_ANY)


def _single(step: Pattern) -> bool:
    """One event, always: no quantifier, not optional, not a negation."""
    quantifier = step.quantifier
    negation = quantifier.consuming_strategy in (ConsumingStrategy.NOT_FOLLOW, ConsumingStrategy.NOT_NEXT)
    return not negation and quantifier.properties == frozenset({QuantifierProperty.SINGLE})


def _has_group(pattern: Pattern) -> bool:
    node: Pattern | None = pattern
    while node is not None:
        if isinstance(node, GroupPattern):
            return True
        node = node.previous
    return False


def _until_mandatory(chain: list[Pattern]) -> tuple[str, ...]:
    """The names of ``chain``'s steps up to the first that always has an event (a single step)."""
    names: dict[str, None] = {}
    for step in chain:
        names[step.name] = None
        if _single(step):
            break
    return tuple(names)


def _optional(step: Pattern) -> bool:
    return step.quantifier.has_property(QuantifierProperty.OPTIONAL)


def _simple_conjuncts(condition: Condition | None) -> Iterator[Callable[[Any], Any]]:
    """The compiled conjuncts of ``condition`` that read the event alone."""
    if condition is None:
        return
    if isinstance(condition, RichAndCondition):
        yield from _simple_conjuncts(condition.left)
        yield from _simple_conjuncts(condition.right)
        return
    fn, iterative = condition.compile()
    if not iterative:
        yield fn


def _all_of(tests: tuple[Callable[[Any], Any], ...]) -> Callable[[Any], bool]:
    def all_of(event: Any) -> bool:
        for test in tests:
            if not test(event):
                return False
        return True

    return all_of


def _any_of(tests: tuple[Callable[[Any], Any], ...]) -> Callable[[Any], bool]:
    """True when one test holds; also when one raises: the event then goes to the level, whose
    operator reports the error as a bad record of the level, as without the filter."""
    if len(tests) == 1:
        [only] = tests

        def one(event: Any) -> bool:
            try:
                return bool(only(event))
            except Exception:
                return True

        return one

    def any_of(event: Any) -> bool:
        try:
            for test in tests:
                if test(event):
                    return True
        except Exception:
            return True
        return False

    return any_of


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
