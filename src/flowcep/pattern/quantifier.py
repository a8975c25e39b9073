"""Quantifiers: how often a pattern step matches and with which contiguity (Flink's ``Quantifier``)."""

from __future__ import annotations

import enum

import attrs

from flowcep.pattern.exceptions import IllegalArgumentException, MalformedPatternException


class ConsumingStrategy(enum.Enum):
    """Contiguity to the previous step (or between repetitions, for the inner strategy)."""

    STRICT = "STRICT"
    SKIP_TILL_NEXT = "SKIP_TILL_NEXT"
    SKIP_TILL_ANY = "SKIP_TILL_ANY"
    NOT_FOLLOW = "NOT_FOLLOW"
    NOT_NEXT = "NOT_NEXT"

    def __str__(self) -> str:
        return self.value


class QuantifierProperty(enum.Enum):
    """Properties of a quantifier; declaration order is Flink's (it shows in messages)."""

    SINGLE = "SINGLE"
    LOOPING = "LOOPING"
    TIMES = "TIMES"
    OPTIONAL = "OPTIONAL"
    GREEDY = "GREEDY"

    def __str__(self) -> str:
        return self.value


_PROPERTY_ORDER = {p: i for i, p in enumerate(QuantifierProperty)}
_NOT_STRATEGIES = (ConsumingStrategy.NOT_FOLLOW, ConsumingStrategy.NOT_NEXT)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise MalformedPatternException(message)


@attrs.define(slots=True, eq=True)
class Quantifier:
    """Mutable like Flink's: the builder changes it in place, but every Pattern node owns its own."""

    properties: frozenset[QuantifierProperty]
    consuming_strategy: ConsumingStrategy
    inner_consuming_strategy: ConsumingStrategy = ConsumingStrategy.SKIP_TILL_NEXT

    @classmethod
    def one(cls, consuming_strategy: ConsumingStrategy) -> Quantifier:
        """A single occurrence."""
        return cls(frozenset({QuantifierProperty.SINGLE}), consuming_strategy)

    @classmethod
    def looping(cls, consuming_strategy: ConsumingStrategy) -> Quantifier:
        """``one_or_more`` / ``times_or_more``."""
        return cls(frozenset({QuantifierProperty.LOOPING}), consuming_strategy)

    @classmethod
    def times(cls, consuming_strategy: ConsumingStrategy) -> Quantifier:
        """``times(n)`` / ``times(a, b)``."""
        return cls(frozenset({QuantifierProperty.TIMES}), consuming_strategy)

    def has_property(self, prop: QuantifierProperty) -> bool:
        """True if ``prop`` is set."""
        return prop in self.properties

    def copy(self) -> Quantifier:
        """An independent copy."""
        return Quantifier(self.properties, self.consuming_strategy, self.inner_consuming_strategy)

    def combinations(self) -> None:
        """``allow_combinations()``: relaxed (skip-till-any) contiguity between repetitions."""
        _check(not self.has_property(QuantifierProperty.SINGLE), f"Combinations not applicable to {self}!")
        _check(
            self.inner_consuming_strategy is not ConsumingStrategy.STRICT,
            "You can apply either combinations or consecutive, not both!",
        )
        _check(
            self.inner_consuming_strategy is not ConsumingStrategy.SKIP_TILL_ANY,
            "Combinations already applied!",
        )
        self.inner_consuming_strategy = ConsumingStrategy.SKIP_TILL_ANY

    def consecutive(self) -> None:
        """``consecutive()``: strict contiguity between repetitions."""
        _check(
            self.has_property(QuantifierProperty.LOOPING) or self.has_property(QuantifierProperty.TIMES),
            f"Consecutive not applicable to {self}!",
        )
        _check(
            self.inner_consuming_strategy is not ConsumingStrategy.SKIP_TILL_ANY,
            "You can apply either combinations or consecutive, not both!",
        )
        _check(self.inner_consuming_strategy is not ConsumingStrategy.STRICT, "Consecutive already applied!")
        self.inner_consuming_strategy = ConsumingStrategy.STRICT

    def optional(self) -> None:
        """Mark optional."""
        _check(not self.has_property(QuantifierProperty.OPTIONAL), "Optional already applied!")
        _check(self.consuming_strategy not in _NOT_STRATEGIES, "NOT pattern cannot be optional")
        self.properties = self.properties | {QuantifierProperty.OPTIONAL}

    def greedy(self) -> None:
        """Mark greedy."""
        _check(
            self.inner_consuming_strategy is not ConsumingStrategy.SKIP_TILL_ANY,
            "Option not applicable to FollowedByAny pattern",
        )
        _check(
            not self.has_property(QuantifierProperty.SINGLE), "Option not applicable to singleton quantifier"
        )
        self.properties = self.properties | {QuantifierProperty.GREEDY}

    # Flink (camelCase) names.
    hasProperty = has_property

    def get_consuming_strategy(self) -> ConsumingStrategy:
        """The contiguity to the previous step."""
        return self.consuming_strategy

    def get_inner_consuming_strategy(self) -> ConsumingStrategy:
        """The contiguity between repetitions."""
        return self.inner_consuming_strategy

    getConsumingStrategy = get_consuming_strategy
    getInnerConsumingStrategy = get_inner_consuming_strategy

    def __str__(self) -> str:
        # Same text as Flink's toString (an EnumSet prints in declaration order).
        props = ", ".join(str(p) for p in sorted(self.properties, key=_PROPERTY_ORDER.__getitem__))
        return (
            f"Quantifier{{properties=[{props}], consumingStrategy={self.consuming_strategy}, "
            f"innerConsumingStrategy={self.inner_consuming_strategy}}}"
        )


def _check_from(instance: Times, attribute: attrs.Attribute[int], value: int) -> None:
    if value <= 0:
        raise IllegalArgumentException("The from should be a positive number greater than 0.")


def _check_to(instance: Times, attribute: attrs.Attribute[int], value: int) -> None:
    if value < instance.from_:
        raise IllegalArgumentException(
            f"The to should be a number greater than or equal to from: {instance.from_}."
        )


@attrs.frozen(slots=True)
class Times:
    """Repetition bounds and the optional per-quantifier window (milliseconds)."""

    from_: int = attrs.field(validator=_check_from)
    to: int = attrs.field(validator=_check_to)
    window_size: int | None = None  # ms; at most 0: no window (as in Flink)

    @classmethod
    def of(cls, from_: int, to: int | None = None, window_size: int | None = None) -> Times:
        """``Times.of(n)`` is exactly n; ``Times.of(a, b)`` is a range."""
        return cls(from_, from_ if to is None else to, window_size)

    def get_from(self) -> int:
        """Lower bound."""
        return self.from_

    def get_to(self) -> int:
        """Upper bound."""
        return self.to

    def get_window_size(self) -> int | None:
        """Per-quantifier window in ms, or None."""
        return self.window_size

    getFrom = get_from
    getTo = get_to
    getWindowSize = get_window_size

    def __str__(self) -> str:
        return f"Times{{from={self.from_}, to={self.to}, windowSize={self.window_size}}}"
