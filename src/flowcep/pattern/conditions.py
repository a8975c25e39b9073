"""Conditions (Flink's ``IterativeCondition`` family) and their compilation to plain callables.

The NFA never calls ``filter`` on the hot path: it calls ``compile()`` once and keeps the returned
function, ``fn(event)`` for simple conditions and ``fn(event, ctx)`` for iterative ones. Compiled
functions return a truthy/falsy value (composites short-circuit like Java's ``&&``/``||``).
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable
from typing import Any

from flowcep.pattern.exceptions import NullPointerException

SimpleFn = Callable[[Any], Any]
IterativeFn = Callable[[Any, Any], Any]
Compiled = tuple[Callable[..., Any], bool]

_NULL_CONDITION = "The condition cannot be null."


class Condition(abc.ABC):
    """Base of every condition; ``compile()`` is what the NFA uses."""

    __slots__ = ()

    @abc.abstractmethod
    def compile(self) -> Compiled:
        """Return ``(fn, iterative)``: ``fn(event)`` if not iterative, else ``fn(event, ctx)``."""

    def test(self, value: Any, ctx: Any = None) -> bool:
        """Evaluate once (slow path, for tests and debugging)."""
        fn, iterative = self.compile()
        return bool(fn(value, ctx) if iterative else fn(value))

    def __and__(self, other: Any) -> RichAndCondition:
        return RichAndCondition(self, as_condition(other))

    def __or__(self, other: Any) -> RichOrCondition:
        return RichOrCondition(self, as_condition(other))

    def __invert__(self) -> RichNotCondition:
        return RichNotCondition(self)


class IterativeCondition(Condition):
    """A condition that may look at the partial match: override ``filter(value, ctx)``."""

    __slots__ = ()

    @abc.abstractmethod
    def filter(self, value: Any, ctx: Any) -> bool:
        """True if ``value`` is accepted; ``ctx.get_events_for_pattern(name)`` lists earlier events."""

    def compile(self) -> Compiled:
        return self.filter, True


class RichIterativeCondition(IterativeCondition):
    """An iterative condition with a lifecycle (Flink's ``RichIterativeCondition``): ``open(context)``
    once before the first event and ``close()`` once after the last, per operator instance (the
    embedded operator, each Spark task, each PyFlink subtask). ``get_runtime_context()`` is the
    context ``open`` received: the embedded runtime's ``RuntimeContext`` (key, metrics, job
    parameters), or PyFlink's. Conditions combined with ``and_``/``or_``/``not_`` or ``where``
    chains are opened too."""

    __slots__ = ("_runtime_context",)

    def open(self, context: Any) -> None:
        """Called once before the first event (override to set up)."""

    def close(self) -> None:
        """Called once after the last event (override to release)."""

    def set_runtime_context(self, context: Any) -> None:
        self._runtime_context = context

    def get_runtime_context(self) -> Any:
        """The runtime context (``IllegalStateException`` in Flink before it is set: None here)."""
        return getattr(self, "_runtime_context", None)

    setRuntimeContext = set_runtime_context
    getRuntimeContext = get_runtime_context


def rich_conditions(condition: Condition | None) -> list[RichIterativeCondition]:
    """The ``RichIterativeCondition`` objects in ``condition`` and its nested parts, each once."""
    found: dict[int, RichIterativeCondition] = {}
    stack = [] if condition is None else [condition]
    while stack:
        c = stack.pop()
        if isinstance(c, RichIterativeCondition):
            found.setdefault(id(c), c)
        if isinstance(c, _CompositeCondition):
            stack.extend(reversed(c.get_nested_conditions()))
    return list(found.values())


class SimpleCondition(Condition):
    """A condition on the event alone: override ``filter(value)``."""

    __slots__ = ()

    @abc.abstractmethod
    def filter(self, value: Any) -> bool:
        """True if ``value`` is accepted."""

    def compile(self) -> Compiled:
        return self.filter, False

    @staticmethod
    def of(fn: SimpleFn) -> SimpleCondition:
        """Wrap a one-argument function (Flink's ``SimpleCondition.of(FilterFunction)``)."""
        if fn is None:
            raise NullPointerException(_NULL_CONDITION)
        if not callable(fn):
            raise TypeError(f"SimpleCondition.of expects a callable, got {fn!r}")
        return _SimpleFunction(fn)


class _SimpleFunction(SimpleCondition):
    """A plain ``fn(event)``; compiles to ``fn`` itself."""

    __slots__ = ("fn",)

    def __init__(self, fn: SimpleFn) -> None:
        self.fn = fn

    def filter(self, value: Any) -> bool:
        return bool(self.fn(value))

    def compile(self) -> Compiled:
        return self.fn, False

    def __repr__(self) -> str:
        return f"SimpleCondition({_fn_name(self.fn)})"

    def __eq__(self, other: object) -> bool:
        return type(other) is _SimpleFunction and other.fn == self.fn

    def __hash__(self) -> int:
        return hash(self.fn)


class _IterativeFunction(IterativeCondition):
    """A plain ``fn(event, ctx)``; compiles to ``fn`` itself."""

    __slots__ = ("fn",)

    def __init__(self, fn: IterativeFn) -> None:
        self.fn = fn

    def filter(self, value: Any, ctx: Any) -> bool:
        return bool(self.fn(value, ctx))

    def compile(self) -> Compiled:
        return self.fn, True

    def __repr__(self) -> str:
        return f"IterativeCondition({_fn_name(self.fn)})"

    def __eq__(self, other: object) -> bool:
        return type(other) is _IterativeFunction and other.fn == self.fn

    def __hash__(self) -> int:
        return hash(self.fn)


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _always_true(value: Any) -> bool:
    return True


def _always_false(value: Any) -> bool:
    return False


class _ConstantCondition(SimpleCondition):
    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def filter(self, value: Any) -> bool:
        return self.value

    def compile(self) -> Compiled:
        return (_always_true if self.value else _always_false), False

    def __repr__(self) -> str:
        return "BooleanConditions.true_function()" if self.value else "BooleanConditions.false_function()"


_TRUE = _ConstantCondition(True)
_FALSE = _ConstantCondition(False)


class BooleanConditions:
    """Constant conditions."""

    @staticmethod
    def true_function() -> SimpleCondition:
        """Accepts every event."""
        return _TRUE

    @staticmethod
    def false_function() -> SimpleCondition:
        """Accepts no event."""
        return _FALSE

    trueFunction = true_function
    falseFunction = false_function


class SubtypeCondition(SimpleCondition):
    """Accepts instances of ``subtype`` (Flink's ``subtype(Class)``)."""

    __slots__ = ("subtype",)

    def __init__(self, subtype: type | tuple[type, ...]) -> None:
        if subtype is None:
            raise NullPointerException("The class cannot be null.")
        self.subtype = subtype

    def filter(self, value: Any) -> bool:
        return isinstance(value, self.subtype)

    def compile(self) -> Compiled:
        subtype = self.subtype
        return (lambda e: isinstance(e, subtype)), False

    def __repr__(self) -> str:
        return f"SubtypeCondition({self.subtype!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubtypeCondition) and other.subtype == self.subtype

    def __hash__(self) -> int:
        return hash(self.subtype)


class _CompositeCondition(IterativeCondition):
    """Shared parts of the Rich* composites; ``filter`` is the slow path via ``compile``."""

    __slots__ = ()

    def filter(self, value: Any, ctx: Any) -> bool:
        return self.test(value, ctx)

    def get_nested_conditions(self) -> tuple[Condition, ...]:
        """The direct parts."""
        raise NotImplementedError

    def getNestedConditions(self) -> tuple[Condition, ...]:
        """Alias of ``get_nested_conditions`` (dispatches to the subclass)."""
        return self.get_nested_conditions()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.get_nested_conditions() == self.get_nested_conditions()

    def __hash__(self) -> int:
        return hash((type(self), self.get_nested_conditions()))


class RichAndCondition(_CompositeCondition):
    """Both conditions hold (left first, short-circuit)."""

    __slots__ = ("left", "right")

    def __init__(self, left: Condition, right: Condition) -> None:
        self.left = as_condition(left)
        self.right = as_condition(right)

    def get_nested_conditions(self) -> tuple[Condition, ...]:
        return (self.left, self.right)

    def get_left(self) -> Condition:
        """The left part."""
        return self.left

    def get_right(self) -> Condition:
        """The right part."""
        return self.right

    getLeft = get_left
    getRight = get_right

    def compile(self) -> Compiled:
        lf, li = self.left.compile()
        rf, ri = self.right.compile()
        # One closure per arity combination, so no wrapper call is paid at match time.
        if li and ri:
            return (lambda e, c: lf(e, c) and rf(e, c)), True
        if li:
            return (lambda e, c: lf(e, c) and rf(e)), True
        if ri:
            return (lambda e, c: lf(e) and rf(e, c)), True
        return (lambda e: lf(e) and rf(e)), False

    def __repr__(self) -> str:
        return f"RichAndCondition({self.left!r}, {self.right!r})"


class RichOrCondition(_CompositeCondition):
    """Either condition holds (left first, short-circuit)."""

    __slots__ = ("left", "right")

    def __init__(self, left: Condition, right: Condition) -> None:
        self.left = as_condition(left)
        self.right = as_condition(right)

    def get_nested_conditions(self) -> tuple[Condition, ...]:
        return (self.left, self.right)

    def get_left(self) -> Condition:
        """The left part."""
        return self.left

    def get_right(self) -> Condition:
        """The right part."""
        return self.right

    getLeft = get_left
    getRight = get_right

    def compile(self) -> Compiled:
        lf, li = self.left.compile()
        rf, ri = self.right.compile()
        if li and ri:
            return (lambda e, c: lf(e, c) or rf(e, c)), True
        if li:
            return (lambda e, c: lf(e, c) or rf(e)), True
        if ri:
            return (lambda e, c: lf(e) or rf(e, c)), True
        return (lambda e: lf(e) or rf(e)), False

    def __repr__(self) -> str:
        return f"RichOrCondition({self.left!r}, {self.right!r})"


class RichNotCondition(_CompositeCondition):
    """The negation of a condition."""

    __slots__ = ("condition",)

    def __init__(self, condition: Condition) -> None:
        self.condition = as_condition(condition)

    def get_nested_conditions(self) -> tuple[Condition, ...]:
        return (self.condition,)

    def compile(self) -> Compiled:
        f, iterative = self.condition.compile()
        if iterative:
            return (lambda e, c: not f(e, c)), True
        return (lambda e: not f(e)), False

    def __repr__(self) -> str:
        return f"RichNotCondition({self.condition!r})"


def _positional_arity(fn: Callable[..., Any]) -> tuple[int, int, bool] | None:
    """(required, total, has *args) positional parameters, or None if unknown."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    required = total = 0
    varargs = False
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            total += 1
            if p.default is p.empty:
                required += 1
        elif p.kind is p.VAR_POSITIONAL:
            varargs = True
        elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
            return (-1, -1, False)  # cannot be called positionally
    return required, total, varargs


def as_condition(obj: Any) -> Condition:
    """Turn a condition or a plain callable into a ``Condition``.

    A callable needing one positional argument is simple, ``fn(event)``; one needing two is
    iterative, ``fn(event, ctx)``. A callable whose signature cannot be read (some built-ins) is
    taken as simple.
    """
    if isinstance(obj, Condition):
        return obj
    if obj is None:
        raise NullPointerException(_NULL_CONDITION)
    if not callable(obj):
        raise TypeError(f"A condition must be a Condition or a callable, got {obj!r}")
    arity = _positional_arity(obj)
    if arity is None:
        return _SimpleFunction(obj)
    required, total, varargs = arity
    if required == 2:
        return _IterativeFunction(obj)
    if required == 1 or (required == 0 and (total >= 1 or varargs)):
        return _SimpleFunction(obj)
    raise TypeError(
        f"A condition callable must take one positional argument (event) or two (event, ctx); "
        f"{_fn_name(obj)} has signature {inspect.signature(obj)}"
    )


def and_(*conditions: Any) -> Condition:
    """All conditions hold, evaluated left to right."""
    return _fold(RichAndCondition, conditions, "and_")


def or_(*conditions: Any) -> Condition:
    """At least one condition holds, evaluated left to right."""
    return _fold(RichOrCondition, conditions, "or_")


def not_(condition: Any) -> Condition:
    """The negation of ``condition``."""
    return RichNotCondition(as_condition(condition))


def _fold(
    kind: type[RichAndCondition] | type[RichOrCondition], conditions: tuple[Any, ...], name: str
) -> Condition:
    if not conditions:
        raise TypeError(f"{name}() needs at least one condition")
    result = as_condition(conditions[0])
    for c in conditions[1:]:
        result = kind(result, as_condition(c))
    return result
