"""The expression language shared by the declarative front ends (MATCH_RECOGNIZE, JSON patterns).

Trees of ``flowcep.expr.nodes`` compile once into Python functions: ``ExpressionCondition`` is a
pattern condition, ``compile_measures_function`` computes values over a finished match.
"""

from flowcep.expr.codegen import (
    ANY,
    ATTR,
    ITEM,
    ExpressionError,
    compile_condition_function,
    compile_measures_function,
)
from flowcep.expr.condition import ExpressionCondition
from flowcep.expr.nodes import (
    Aggregate,
    And,
    Between,
    Binary,
    Call,
    Case,
    Cast,
    Expr,
    Field,
    In,
    IsNull,
    Like,
    Literal,
    MatchRowtime,
    Navigation,
    Negate,
    Not,
    Or,
)

__all__ = [
    "ANY",
    "ATTR",
    "ITEM",
    "Aggregate",
    "And",
    "Between",
    "Binary",
    "Call",
    "Case",
    "Cast",
    "Expr",
    "ExpressionCondition",
    "ExpressionError",
    "Field",
    "In",
    "IsNull",
    "Like",
    "Literal",
    "MatchRowtime",
    "Navigation",
    "Negate",
    "Not",
    "Or",
    "compile_condition_function",
    "compile_measures_function",
]
