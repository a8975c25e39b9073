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

Evaluator = Callable[..., bool]  # fn(event) or, iterative, fn(event, ctx)


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


def compile_condition(cond: Cond | None) -> tuple[Evaluator | None, bool]:
    """``(fn, iterative)``: ``fn(event)`` if not iterative, else ``fn(event, ctx)``; ``fn`` is
    ``None`` when the condition is always true.  Simple conditions take one argument so that
    the hot path calls the user's function itself, not a wrapper around it."""
    if cond is None or isinstance(cond, TrueCond):
        return None, False
    if isinstance(cond, Atom):
        fn, iterative = cond.condition.compile()
        return fn, bool(iterative)
    if isinstance(cond, Not):
        inner, iterative = compile_condition(cond.inner)
        if inner is None:
            return _never, False
        if iterative:
            return (lambda e, c: not inner(e, c)), True
        return (lambda e: not inner(e)), False
    if isinstance(cond, And):
        left, left_iterative = compile_condition(cond.left)
        right, right_iterative = compile_condition(cond.right)
        if left is None:
            return right, right_iterative
        if right is None:
            return left, left_iterative
        if not left_iterative and not right_iterative:
            return (lambda e: bool(left(e)) and bool(right(e))), False
        lf: Evaluator = left if left_iterative else (lambda e, c: left(e))
        rf: Evaluator = right if right_iterative else (lambda e, c: right(e))
        return (lambda e, c: bool(lf(e, c)) and bool(rf(e, c))), True
    raise TypeError(f"not a condition node: {cond!r}")


def _never(event: Any) -> bool:
    return False
