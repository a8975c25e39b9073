"""The expression language's syntax tree: small immutable nodes, shared by every front end.

A front end (MATCH_RECOGNIZE's DEFINE and MEASURES, JSON pattern conditions) builds these nodes;
``flowcep.expr.codegen`` compiles them, once, into Python functions. Values follow SQL: ``None``
is NULL, comparisons and arithmetic with NULL give NULL, AND/OR/NOT use three-valued logic.

Rows are referred to through pattern variables: ``Field("price", "A")`` is the price of the last
row mapped to ``A`` (in A's own condition, the row being tested); ``var=None`` is the default
variable, every row of the match (the row being tested, in a condition).
"""

from __future__ import annotations

from typing import Any, Union

import attrs

ARITHMETIC = ("+", "-", "*", "/", "%", "||")
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")
AGGREGATES = ("SUM", "AVG", "MIN", "MAX", "COUNT")


@attrs.frozen(slots=True)
class Literal:
    """A constant: int, float, str, bool or None (NULL)."""

    value: Any


@attrs.frozen(slots=True)
class Field:
    """A column of a row: of the last row mapped to ``var`` (None: the default variable)."""

    name: str
    var: str | None = None


@attrs.frozen(slots=True)
class Negate:
    """Unary minus."""

    operand: Expr


@attrs.frozen(slots=True)
class Binary:
    """Arithmetic (``+ - * / % ||``) or a comparison (``= <> < <= > >=``)."""

    op: str
    left: Expr
    right: Expr

    def __attrs_post_init__(self) -> None:
        if self.op not in ARITHMETIC and self.op not in COMPARISONS:
            raise ValueError(f"unknown binary operator {self.op!r}")


@attrs.frozen(slots=True)
class And:
    operands: tuple[Expr, ...]


@attrs.frozen(slots=True)
class Or:
    operands: tuple[Expr, ...]


@attrs.frozen(slots=True)
class Not:
    operand: Expr


@attrs.frozen(slots=True)
class IsNull:
    operand: Expr
    negated: bool = False


@attrs.frozen(slots=True)
class In:
    operand: Expr
    options: tuple[Expr, ...]
    negated: bool = False


@attrs.frozen(slots=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr
    negated: bool = False


@attrs.frozen(slots=True)
class Like:
    """SQL LIKE with a constant pattern (``%`` any run, ``_`` one character)."""

    operand: Expr
    pattern: str
    negated: bool = False
    escape: str | None = None


@attrs.frozen(slots=True)
class Call:
    """A scalar function from ``flowcep.expr.functions.FUNCTIONS``, by upper-case name."""

    name: str
    args: tuple[Expr, ...]


@attrs.frozen(slots=True)
class Case:
    """``CASE WHEN c THEN v ... ELSE d END``; no ELSE is ELSE NULL."""

    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None = None


@attrs.frozen(slots=True)
class Cast:
    """``CAST(x AS type)``, type one of ``flowcep.expr.functions.CASTS``."""

    operand: Expr
    type: str


@attrs.frozen(slots=True)
class Navigation:
    """``FIRST(expr, offset)`` / ``LAST(expr, offset)``: ``expr`` on one row of ``var``'s rows.

    FIRST counts from the first row mapped to ``var`` (offset 0 is that row), LAST from the last;
    past either end it is NULL. Fields inside ``operand`` read the chosen row.
    """

    kind: str
    operand: Expr
    var: str | None = None
    offset: int = 0

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("FIRST", "LAST"):
            raise ValueError(f"unknown navigation {self.kind!r}")
        if self.offset < 0:
            raise ValueError(f"a navigation offset must be 0 or more, got {self.offset}")


@attrs.frozen(slots=True)
class Aggregate:
    """``SUM/AVG/MIN/MAX/COUNT(expr)`` over ``var``'s rows; ``operand=None`` is ``COUNT(*)``.

    NULLs are skipped; over no values SUM/AVG/MIN/MAX are NULL and COUNT is 0.
    """

    name: str
    operand: Expr | None
    var: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.name not in AGGREGATES:
            raise ValueError(f"unknown aggregate {self.name!r}")


@attrs.frozen(slots=True)
class MatchRowtime:
    """The time of the last row of the match (MEASURES only)."""


Expr = Union[
    Literal,
    Field,
    Negate,
    Binary,
    And,
    Or,
    Not,
    IsNull,
    In,
    Between,
    Like,
    Call,
    Case,
    Cast,
    Navigation,
    Aggregate,
    MatchRowtime,
]


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``node``."""
    if isinstance(node, (Negate, Not, IsNull, Like, Cast, Navigation)):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, (And, Or)):
        return node.operands
    if isinstance(node, In):
        return (node.operand, *node.options)
    if isinstance(node, Between):
        return (node.operand, node.low, node.high)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Case):
        flat = tuple(x for pair in node.whens for x in pair)
        return flat + ((node.default,) if node.default is not None else ())
    if isinstance(node, Aggregate):
        return (node.operand,) if node.operand is not None else ()
    return ()


def walk(node: Expr) -> list[Expr]:
    """``node`` and every node under it, parents first."""
    out = [node]
    i = 0
    while i < len(out):
        out.extend(children(out[i]))
        i += 1
    return out


def field_vars(node: Expr) -> set[str | None]:
    """The variables the fields of ``node`` name (None: the default variable)."""
    return {n.var for n in walk(node) if isinstance(n, Field)}
