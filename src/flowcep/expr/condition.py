"""``ExpressionCondition``: an expression tree as a pattern condition, compiled on first use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowcep.expr.codegen import ITEM, compile_condition_function
from flowcep.expr.nodes import Expr
from flowcep.pattern.conditions import Compiled, Condition


class ExpressionCondition(Condition):
    """The condition ``expr`` of pattern variable ``variable`` in a pattern of ``variables``.

    Equal trees make equal conditions. ``compile()`` returns ``fn(event)`` when the expression
    reads only the row being tested, else ``fn(event, ctx)``; the function is built once.
    ``text`` and ``dialect`` say where the tree came from (``"SQL"``, or ``"AVIATOR"`` for a JSON
    rule's Aviator subset), so that a JSON rule is written back as it was read.
    """

    __slots__ = ("expr", "variable", "variables", "access", "text", "dialect", "_compiled")

    def __init__(
        self,
        expr: Expr,
        variable: str,
        variables: Sequence[str],
        access: str = ITEM,
        text: str | None = None,
        dialect: str = "SQL",
    ) -> None:
        self.expr = expr
        self.variable = variable
        self.variables = tuple(variables)
        self.access = access
        self.text = text  # the source text, for messages, explain and JSON rules
        self.dialect = dialect
        self._compiled: Compiled | None = None
        self.compile()  # fail now, on the query, rather than on the first row

    def compile(self) -> Compiled:
        if self._compiled is None:
            self._compiled = compile_condition_function(self.expr, self.variable, self.variables, self.access)
        return self._compiled

    def describe(self) -> str:
        return self.text if self.text is not None else repr(self.expr)

    def __repr__(self) -> str:
        return f"ExpressionCondition({self.variable}: {self.describe()})"

    def __eq__(self, other: object) -> bool:
        return type(other) is ExpressionCondition and (
            other.expr,
            other.variable,
            other.variables,
            other.access,
        ) == (self.expr, self.variable, self.variables, self.access)

    def __hash__(self) -> int:
        return hash((self.expr, self.variable, self.variables, self.access))

    def __getstate__(self) -> Any:
        return (self.expr, self.variable, self.variables, self.access, self.text, self.dialect)

    def __setstate__(self, state: Any) -> None:
        self.expr, self.variable, self.variables, self.access, self.text, self.dialect = state
        self._compiled = None
