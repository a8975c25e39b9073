"""Conditions and event types registered by name: what a JSON rule's CLASS conditions point to.

A rule cannot carry Python code, so a condition written in Python is registered under a name
(Ververica's documents name a Java class there) and the rule names it::

    registry = ConditionRegistry()
    registry.register("fraud.BigAmount", lambda e: e["amount"] > 500)
    registry.register_factory("fraud.AmountAbove", lambda limit: lambda e: e["amount"] > float(limit))
    registry.register_type("fraud.CardEvent", CardEvent)
    Pattern.from_json(text, registry)

``registry.condition(name, *args)`` gives the same condition for a pattern built in Python, so
that ``to_json`` can write it back by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.pattern.conditions import Compiled, Condition, as_condition


class NamedCondition(Condition):
    """A registered condition, with the name (and arguments) a rule gives it; compares by those."""

    __slots__ = ("name", "args", "condition")

    def __init__(self, name: str, condition: Any, args: tuple[str, ...] | None = None) -> None:
        self.name = name
        self.args = args  # None: a plain CLASS condition; a tuple: Ververica's "args"
        self.condition = as_condition(condition)

    def compile(self) -> Compiled:
        return self.condition.compile()

    def __repr__(self) -> str:
        args = "" if self.args is None else ", " + ", ".join(repr(a) for a in self.args)
        return f"NamedCondition({self.name!r}{args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is NamedCondition and (other.name, other.args) == (self.name, self.args)

    def __hash__(self) -> int:
        return hash((self.name, self.args))


class ConditionRegistry:
    """Names for conditions, condition factories (CLASS with "args") and subtypes."""

    def __init__(self) -> None:
        self._conditions: dict[str, Condition] = {}
        self._factories: dict[str, Callable[..., Any]] = {}
        self._types: dict[str, type] = {}

    def register(self, name: str, condition: Any) -> NamedCondition:
        """Register a condition (a ``Condition`` or a callable of ``(event)`` or ``(event, ctx)``)."""
        self._check_free(name)
        self._conditions[name] = as_condition(condition)
        return self.condition(name)

    def register_factory(self, name: str, factory: Callable[..., Any]) -> None:
        """Register ``factory(*args) -> condition`` for rules that give the condition "args"."""
        self._check_free(name)
        if not callable(factory):
            raise TypeError(f"a condition factory must be callable, got {factory!r}")
        self._factories[name] = factory

    def register_type(self, name: str, cls: type) -> None:
        """Register an event class for SUBTYPE conditions ("subClassName")."""
        if not isinstance(cls, type):
            raise TypeError(f"register_type expects a class, got {cls!r}")
        if name in self._types:
            raise ValueError(f"a type is already registered as {name!r}")
        self._types[name] = cls

    def _check_free(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a condition name must be a non-empty str, got {name!r}")
        if name in self._conditions or name in self._factories:
            raise ValueError(f"a condition is already registered as {name!r}")

    def condition(self, name: str, *args: str) -> NamedCondition:
        """The registered condition ``name`` (built by its factory from ``args``, if it has one).

        Raises ``KeyError`` with the registered names when there is none.
        """
        if name in self._factories:
            return NamedCondition(name, self._factories[name](*args), tuple(args))
        if name in self._conditions:
            if args:
                raise TypeError(f"condition {name!r} is registered without a factory: it takes no args")
            return NamedCondition(name, self._conditions[name])
        raise KeyError(self._missing("condition", name, [*self._conditions, *self._factories]))

    def subtype(self, name: str) -> type:
        """The class registered as ``name``."""
        if name not in self._types:
            raise KeyError(self._missing("type", name, list(self._types)))
        return self._types[name]

    def type_name(self, cls: type) -> str | None:
        """The name ``cls`` is registered under, if any."""
        for name, registered in self._types.items():
            if registered is cls:
                return name
        return None

    @staticmethod
    def _missing(what: str, name: str, known: list[str]) -> str:
        shown = ", ".join(sorted(known)) if known else "none"
        return f"no {what} is registered as {name!r} (registered: {shown})"
