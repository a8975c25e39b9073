"""Condition trees built by the compiler, and their compilation to callables.

The compiler combines user conditions (``where``/``until``) with negations
and conjunctions, as Flink's compiler does with RichNot/RichAnd.  Here those
combinations are tiny tree nodes; ``compile_condition`` turns a tree into one
plain callable ``fn(event, ctx) -> bool`` when the NFA is built, so the hot
path never walks a tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Evaluator = Callable[[Any, Any], bool]


class Cond:
    __slots__ = ()

    def describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe()


class TrueCond(Cond):
    __slots__ = ()

    def describe(self) -> str:
        return "true"


TRUE = TrueCond()


class Atom(Cond):
    """A user condition (anything with ``compile() -> (fn, iterative)``)."""

    __slots__ = ("condition",)

    def __init__(self, condition: Any) -> None:
        self.condition = condition

    def describe(self) -> str:
        describe = getattr(self.condition, "describe", None)
        if callable(describe):
            return str(describe())
        return repr(self.condition)


class Not(Cond):
    __slots__ = ("inner",)

    def __init__(self, inner: Cond) -> None:
        self.inner = inner

    def describe(self) -> str:
        return f"!({self.inner.describe()})"


class And(Cond):
    __slots__ = ("left", "right")

    def __init__(self, left: Cond, right: Cond) -> None:
        self.left = left
        self.right = right

    def describe(self) -> str:
        return f"({self.left.describe()} && {self.right.describe()})"


def atom(condition: Any) -> Cond:
    """Wrap a pattern's condition; ``None`` (no ``where``) is always true."""
    return TRUE if condition is None else Atom(condition)


def is_iterative(cond: Cond) -> bool:
    if isinstance(cond, Atom):
        return bool(cond.condition.compile()[1])
    if isinstance(cond, Not):
        return is_iterative(cond.inner)
    if isinstance(cond, And):
        return is_iterative(cond.left) or is_iterative(cond.right)
    return False


def compile_condition(cond: Cond | None) -> Evaluator | None:
    """``fn(event, ctx)``; ``None`` when the condition is always true."""
    if cond is None or isinstance(cond, TrueCond):
        return None
    if isinstance(cond, Atom):
        fn, iterative = cond.condition.compile()
        if iterative:
            return fn  # type: ignore[no-any-return]
        simple = fn
        return lambda e, c: simple(e)
    if isinstance(cond, Not):
        inner = compile_condition(cond.inner)
        if inner is None:
            return lambda e, c: False
        return lambda e, c: not inner(e, c)
    if isinstance(cond, And):
        left = compile_condition(cond.left)
        right = compile_condition(cond.right)
        if left is None:
            return right
        if right is None:
            return left
        return lambda e, c: bool(left(e, c)) and bool(right(e, c))
    raise TypeError(f"not a condition node: {cond!r}")
