"""The fluent pattern builder (Flink's ``Pattern`` and ``GroupPattern``).

Nodes form a linked list built backwards through ``previous``; the last node is the handle given
to the compiler. ``next``/``followed_by``/... create new nodes, while ``where`` and the quantifier
methods change the current node and return it, exactly as in Flink.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, overload

from flowcep.pattern.aftermatch import AfterMatchSkipStrategy
from flowcep.pattern.conditions import (
    BooleanConditions,
    Condition,
    RichAndCondition,
    RichIterativeCondition,
    RichOrCondition,
    SubtypeCondition,
    as_condition,
    rich_conditions,
)
from flowcep.pattern.durations import Duration, window_millis
from flowcep.pattern.durations import to_millis as to_millis  # (its old import path)
from flowcep.pattern.exceptions import (
    IllegalArgumentException,
    MalformedPatternException,
    NullPointerException,
    UnsupportedOperationException,
)
from flowcep.pattern.quantifier import ConsumingStrategy, Quantifier, QuantifierProperty, Times
from flowcep.pattern.serialization import codec

if TYPE_CHECKING:
    # a default of Any: ``Pattern.begin("a")`` and a bare ``Pattern`` annotation mean Pattern[Any]
    from typing_extensions import TypeVar

    E = TypeVar("E", default=Any)
else:
    from typing import TypeVar

    E = TypeVar("E")  # (TypeVar takes a default from Python 3.13 on)

_NOT_STRATEGIES = (ConsumingStrategy.NOT_FOLLOW, ConsumingStrategy.NOT_NEXT)
_OPTIONAL_TO_NOT = (
    "Specifying a pattern with an optional path to NOT condition is not supported yet. "
    "You can simulate such pattern with two independent patterns, one with and the other "
    "without the optional part."
)


class WithinType(enum.Enum):
    """Which two events a ``within`` window measures."""

    FIRST_AND_LAST = "FIRST_AND_LAST"
    PREVIOUS_AND_CURRENT = "PREVIOUS_AND_CURRENT"

    def __str__(self) -> str:
        return self.value


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"A pattern name must be a str (or a Pattern for a group), got {name!r}")
    return name


class Pattern(Generic[E]):
    """One step of a pattern over events of type ``E``; see the module docstring.

    ``Pattern[Stock].begin("start")`` types the conditions' events: mypy then checks
    ``.where(lambda e: e.price > 10)`` against ``Stock``. ``Pattern.begin("start")`` is a
    ``Pattern[Any]``, unchecked.
    """

    __slots__ = (
        "name",
        "previous",
        "condition",
        "until_condition",
        "quantifier",
        "times_",
        "window_times",
        "skip_strategy",
    )

    def __init__(
        self,
        name: str,
        previous: Pattern[E] | None,
        consuming_strategy: ConsumingStrategy,
        skip_strategy: AfterMatchSkipStrategy,
    ) -> None:
        self.name: str = name
        self.previous: Pattern[E] | None = previous
        self.condition: Condition | None = None
        self.until_condition: Condition | None = None
        self.quantifier: Quantifier = Quantifier.one(consuming_strategy)
        self.times_: Times | None = None
        self.window_times: dict[WithinType, int] = {}
        self.skip_strategy: AfterMatchSkipStrategy = skip_strategy

    # ---------------------------------------------------------------- starting and chaining

    @classmethod
    def begin(
        cls: type[Pattern[E]], name: str | Pattern[Any], skip_strategy: AfterMatchSkipStrategy | None = None
    ) -> Pattern[E]:
        """The first step; a Pattern argument starts with a group."""
        skip = AfterMatchSkipStrategy.no_skip() if skip_strategy is None else skip_strategy
        if not isinstance(skip, AfterMatchSkipStrategy):
            raise TypeError(f"skip_strategy must be an AfterMatchSkipStrategy, got {skip!r}")
        if isinstance(name, Pattern):
            return GroupPattern(None, name, ConsumingStrategy.STRICT, skip)
        return Pattern(_check_name(name), None, ConsumingStrategy.STRICT, skip)

    def _append(self, name: str | Pattern[Any], strategy: ConsumingStrategy) -> Pattern[E]:
        if isinstance(name, Pattern):
            return GroupPattern(self, name, strategy, self.skip_strategy)
        return Pattern(_check_name(name), self, strategy, self.skip_strategy)

    def next(self, name: str | Pattern[Any]) -> Pattern[E]:
        """A step with strict contiguity."""
        return self._append(name, ConsumingStrategy.STRICT)

    def followed_by(self, name: str | Pattern[Any]) -> Pattern[E]:
        """A step with relaxed contiguity (skip till next)."""
        return self._append(name, ConsumingStrategy.SKIP_TILL_NEXT)

    def followed_by_any(self, name: str | Pattern[Any]) -> Pattern[E]:
        """A step with non-deterministic relaxed contiguity (skip till any)."""
        return self._append(name, ConsumingStrategy.SKIP_TILL_ANY)

    def _append_not(self, name: str, strategy: ConsumingStrategy) -> Pattern[E]:
        if isinstance(name, Pattern):
            raise TypeError("A NOT pattern cannot be a group pattern")
        if self.quantifier.has_property(QuantifierProperty.OPTIONAL):
            raise UnsupportedOperationException(_OPTIONAL_TO_NOT)
        return Pattern(_check_name(name), self, strategy, self.skip_strategy)

    def not_next(self, name: str) -> Pattern[E]:
        """No event matching the new step may directly follow."""
        return self._append_not(name, ConsumingStrategy.NOT_NEXT)

    def not_followed_by(self, name: str) -> Pattern[E]:
        """No event matching the new step may occur before the next step."""
        return self._append_not(name, ConsumingStrategy.NOT_FOLLOW)

    # ---------------------------------------------------------------- conditions

    @overload
    def where(self, condition: Callable[[E], object]) -> Pattern[E]: ...
    @overload
    def where(self, condition: Callable[[E, Any], object]) -> Pattern[E]: ...
    @overload
    def where(self, condition: Condition) -> Pattern[E]: ...
    def where(self, condition: Any) -> Pattern[E]:
        """AND a condition (a ``Condition`` or a callable of ``(event)`` or ``(event, ctx)``)."""
        cond = as_condition(condition)
        self.condition = cond if self.condition is None else RichAndCondition(self.condition, cond)
        return self

    @overload
    def or_(self, condition: Callable[[E], object]) -> Pattern[E]: ...
    @overload
    def or_(self, condition: Callable[[E, Any], object]) -> Pattern[E]: ...
    @overload
    def or_(self, condition: Condition) -> Pattern[E]: ...
    def or_(self, condition: Any) -> Pattern[E]:
        """OR a condition with the current one (Flink's ``or``; alone it is just ``where``)."""
        cond = as_condition(condition)
        self.condition = cond if self.condition is None else RichOrCondition(self.condition, cond)
        return self

    def subtype(self, subtype: type | tuple[type, ...]) -> Pattern[E]:
        """AND an ``isinstance`` check."""
        if subtype is None:
            raise NullPointerException("The class cannot be null.")
        cond = SubtypeCondition(subtype)
        self.condition = cond if self.condition is None else RichAndCondition(self.condition, cond)
        return self

    @overload
    def until(self, condition: Callable[[E], object]) -> Pattern[E]: ...
    @overload
    def until(self, condition: Callable[[E, Any], object]) -> Pattern[E]: ...
    @overload
    def until(self, condition: Condition) -> Pattern[E]: ...
    def until(self, condition: Any) -> Pattern[E]:
        """Stop condition of a looping step."""
        if condition is None:
            raise NullPointerException("The condition cannot be null")  # sic: Flink has no period here
        if self.until_condition is not None:
            raise MalformedPatternException("Only one until condition can be applied.")
        if not self.quantifier.has_property(QuantifierProperty.LOOPING):
            raise MalformedPatternException("The until condition is only applicable to looping states.")
        self.until_condition = as_condition(condition)
        return self

    # ---------------------------------------------------------------- windows

    def within(
        self, duration: Duration | None, within_type: WithinType = WithinType.FIRST_AND_LAST
    ) -> Pattern[E]:
        """Window of the match (or, PREVIOUS_AND_CURRENT, between consecutive events); None is a no-op."""
        ms = window_millis(duration)
        if ms is not None:
            if not isinstance(within_type, WithinType):
                raise TypeError(f"within_type must be a WithinType, got {within_type!r}")
            self.window_times[within_type] = ms
        return self

    # ---------------------------------------------------------------- quantifiers

    def _check_no_not(self) -> None:
        if self.quantifier.consuming_strategy in _NOT_STRATEGIES:
            raise MalformedPatternException("Option not applicable to NOT pattern")

    def _check_quantifier_not_applied(self) -> None:
        if not self.quantifier.has_property(QuantifierProperty.SINGLE):
            raise MalformedPatternException(
                f"Already applied quantifier to this Pattern. Current quantifier is: {self.quantifier}"
            )

    def _check_previous_not_greedy(self) -> None:
        if self.previous is not None and self.previous.quantifier.has_property(QuantifierProperty.GREEDY):
            raise MalformedPatternException("Optional pattern cannot be preceded by greedy pattern")

    def optional(self) -> Pattern[E]:
        """The step may be skipped."""
        self._check_previous_not_greedy()
        self.quantifier.optional()
        return self

    def one_or_more(self, window: Duration | None = None) -> Pattern[E]:
        """One or more occurrences (``window``: the per-quantifier window)."""
        self._check_no_not()
        self._check_quantifier_not_applied()
        times = Times.of(1, None, window_millis(window))
        self.quantifier = Quantifier.looping(self.quantifier.consuming_strategy)
        self.times_ = times
        return self

    def times_or_more(self, times: int, window: Duration | None = None) -> Pattern[E]:
        """``times`` or more occurrences."""
        self._check_no_not()
        self._check_quantifier_not_applied()
        bounds = Times.of(_check_int(times), None, window_millis(window))
        self.quantifier = Quantifier.looping(self.quantifier.consuming_strategy)
        self.times_ = bounds
        return self

    def times(
        self, from_: int, to: int | timedelta | str | None = None, window: Duration | None = None
    ) -> Pattern[E]:
        """Exactly ``from_`` occurrences, or between ``from_`` and ``to``.

        ``times(n)``, ``times(a, b)``, ``times(n, timedelta)``, ``times(n, "10s")``,
        ``times(a, b, window)``; an int window of milliseconds must be passed as ``window=`` since
        ``times(a, b)`` is a range.
        """
        if isinstance(to, (timedelta, str)):
            if window is not None:
                raise TypeError("times() got two windows")
            to, window = None, to
        self._check_no_not()
        self._check_quantifier_not_applied()
        from_ = _check_int(from_)
        if to is None:
            if from_ <= 0:
                raise IllegalArgumentException("You should give a positive number greater than 0.")
            exact = Times.of(from_, None, window_millis(window))
            self.quantifier = Quantifier.times(self.quantifier.consuming_strategy)
            self.times_ = exact
            return self
        to = _check_int(to)
        quantifier = Quantifier.times(self.quantifier.consuming_strategy)
        if from_ == 0:
            # Flink rewrites times(0, n) as an optional times(1, n).
            quantifier.optional()
            from_ = 1
        times = Times.of(from_, to, window_millis(window))
        self.quantifier = quantifier
        self.times_ = times
        return self

    def greedy(self) -> Pattern[E]:
        """A looping step takes as many events as it can."""
        self._check_no_not()
        if isinstance(self, GroupPattern):
            raise MalformedPatternException("Option not applicable to group pattern")
        self.quantifier.greedy()
        return self

    def allow_combinations(self) -> Pattern[E]:
        """Relaxed, non-deterministic contiguity between repetitions."""
        self.quantifier.combinations()
        return self

    def consecutive(self) -> Pattern[E]:
        """Strict contiguity between repetitions."""
        self.quantifier.consecutive()
        return self

    # ---------------------------------------------------------------- getters

    def get_name(self) -> str:
        """The step name."""
        return self.name

    def get_previous(self) -> Pattern[E] | None:
        """The previous node."""
        return self.previous

    def get_quantifier(self) -> Quantifier:
        """The quantifier."""
        return self.quantifier

    def get_times(self) -> Times | None:
        """The repetition bounds, if any."""
        return self.times_

    def get_condition(self) -> Condition:
        """The condition (always-true when none was given)."""
        return BooleanConditions.true_function() if self.condition is None else self.condition

    def get_until_condition(self) -> Condition | None:
        """The until condition, if any."""
        return self.until_condition

    def get_after_match_skip_strategy(self) -> AfterMatchSkipStrategy:
        """The skip strategy given to ``begin``."""
        return self.skip_strategy

    def get_window_size(self, within_type: WithinType = WithinType.FIRST_AND_LAST) -> int | None:
        """The ``within`` window in milliseconds, or None."""
        return self.window_times.get(within_type)

    # ---------------------------------------------------------------- JSON rules (docs/rules.md)

    def to_dict(self, registry: Any = None, name: str | None = None) -> dict[str, Any]:
        """This pattern as a JSON rule document (a dict); ``name`` is the rule's name (default:
        the last step's); ``registry`` names the registered conditions and subtypes it uses."""
        return codec().to_dict(self, registry, name)

    def to_json(self, registry: Any = None, name: str | None = None, indent: int | None = 2) -> str:
        """This pattern as JSON rule text (see ``to_dict``)."""
        import json

        return json.dumps(self.to_dict(registry, name), indent=indent)

    @classmethod
    def from_json(
        cls, document: str | bytes | dict[str, Any], registry: Any = None, access: str = "any"
    ) -> Pattern[Any]:
        """The pattern of a JSON rule document (text or an already parsed dict).

        ``registry`` (``flowcep.rules.ConditionRegistry``) resolves CLASS conditions and subtypes
        by name; ``access`` is how expression conditions read fields: ``"any"`` (dicts by key,
        other events by attribute), ``"item"`` or ``"attr"``. A bad document raises
        ``flowcep.rules.RuleError`` naming the JSON path and the problem.
        """
        return codec().from_document(document, registry, access)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, document: dict[str, Any], registry: Any = None, access: str = "any") -> Pattern[Any]:
        """Same as ``from_json``, for a parsed document."""
        return cls.from_json(document, registry, access)

    # Flink (camelCase) names.
    followedBy = followed_by
    followedByAny = followed_by_any
    notNext = not_next
    notFollowedBy = not_followed_by
    oneOrMore = one_or_more
    timesOrMore = times_or_more
    allowCombinations = allow_combinations
    getName = get_name
    getPrevious = get_previous
    getQuantifier = get_quantifier
    getTimes = get_times
    getCondition = get_condition
    getUntilCondition = get_until_condition
    getAfterMatchSkipStrategy = get_after_match_skip_strategy
    getWindowSize = get_window_size
    get_window_time = get_window_size
    getWindowTime = get_window_size

    def __repr__(self) -> str:
        windows = "{" + ", ".join(f"{k}={v}" for k, v in self.window_times.items()) + "}"
        times = None if self.times_ is None else str(self.times_)
        return (
            f"Pattern{{name='{self.name}', previous={self.previous!r}, condition={self.condition!r}, "
            f"windowTimes={windows}, quantifier={self.quantifier}, untilCondition={self.until_condition!r}, "
            f"times={times}, afterMatchSkipStrategy={self.skip_strategy!r}}}"
        )


class GroupPattern(Pattern[E]):
    """A step made of a whole sub-pattern; quantifiers apply to the group."""

    __slots__ = ("raw_pattern",)

    def __init__(
        self,
        previous: Pattern[E] | None,
        raw_pattern: Pattern[Any],
        consuming_strategy: ConsumingStrategy,
        skip_strategy: AfterMatchSkipStrategy,
    ) -> None:
        super().__init__("GroupPattern", previous, consuming_strategy, skip_strategy)
        self.raw_pattern: Pattern[Any] = raw_pattern

    def where(self, condition: Any) -> Pattern[E]:
        raise UnsupportedOperationException("GroupPattern does not support where clause.")

    def or_(self, condition: Any) -> Pattern[E]:
        raise UnsupportedOperationException("GroupPattern does not support or clause.")

    def subtype(self, subtype: type | tuple[type, ...]) -> Pattern[E]:
        raise UnsupportedOperationException("GroupPattern does not support subtype clause.")

    def get_raw_pattern(self) -> Pattern[Any]:
        """The last node of the group's sub-pattern."""
        return self.raw_pattern

    getRawPattern = get_raw_pattern


def _check_int(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"Expected an int, got {n!r}")
    return n


def pattern_rich_conditions(pattern: Pattern[Any]) -> list[RichIterativeCondition]:
    """Every ``RichIterativeCondition`` of ``pattern`` (its steps, until conditions and groups),
    each once, in no particular order: what an operator opens and closes."""
    found: dict[int, RichIterativeCondition] = {}
    stack: list[Pattern[Any]] = [pattern]
    while stack:
        node: Pattern[Any] | None = stack.pop()
        while node is not None:
            for c in (*rich_conditions(node.condition), *rich_conditions(node.until_condition)):
                found.setdefault(id(c), c)
            if isinstance(node, GroupPattern):
                stack.append(node.raw_pattern)
            node = node.previous
    return list(found.values())
