"""sqlglot's expression trees to flowcep's (``flowcep.expr.nodes``), checked as Flink SQL checks
them: navigation and aggregates over one pattern variable, no PREV/NEXT (Flink SQL 2.3 has no
physical offsets), no DISTINCT aggregates, no CLASSIFIER or MATCH_NUMBER."""

from __future__ import annotations

from collections.abc import Callable, Collection

import attrs
from sqlglot import exp

from flowcep.expr import nodes as n
from flowcep.sql.errors import SqlError

_COMPARE: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_ARITHMETIC: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.DPipe: "||",
}
_AGGREGATES: dict[type[exp.Expression], str] = {
    exp.Sum: "SUM",
    exp.Avg: "AVG",
    exp.Min: "MIN",
    exp.Max: "MAX",
    exp.Count: "COUNT",
}
_FUNCTIONS: dict[type[exp.Expression], str] = {
    exp.Upper: "UPPER",
    exp.Lower: "LOWER",
    exp.Trim: "TRIM",
    exp.Length: "CHAR_LENGTH",
    exp.Abs: "ABS",
    exp.Pow: "POWER",
    exp.Sqrt: "SQRT",
    exp.Floor: "FLOOR",
    exp.Ceil: "CEIL",
    exp.Coalesce: "COALESCE",
    exp.Concat: "CONCAT",
    exp.Substring: "SUBSTRING",
}
_CASTS = {
    "INT": "INT",
    "INTEGER": "INT",
    "SMALLINT": "INT",
    "TINYINT": "INT",
    "BIGINT": "BIGINT",
    "DOUBLE": "DOUBLE",
    "FLOAT": "DOUBLE",
    "REAL": "DOUBLE",
    "DECIMAL": "DOUBLE",
    "VARCHAR": "STRING",
    "CHAR": "STRING",
    "TEXT": "STRING",
    "STRING": "STRING",
    "BOOLEAN": "BOOLEAN",
}
_REJECTED_CALLS = {
    "PREV": "PREV: Flink does not support physical offsets within partition",
    "NEXT": "NEXT: Flink does not support physical offsets within partition",
    "CLASSIFIER": "CLASSIFIER() is not supported (as in Flink SQL)",
    "MATCH_NUMBER": "MATCH_NUMBER() is not supported (as in Flink SQL)",
    "MATCH_PROCTIME": "MATCH_PROCTIME() is not supported: flowcep runs MATCH_RECOGNIZE in event time",
    "RUNNING": "RUNNING is not supported (as in Flink SQL): ONE ROW PER MATCH measures are FINAL",
}


class Translator:
    """Translates one clause's expressions; ``clause`` names it in messages."""

    def __init__(self, clause: str, variables: Collection[str], sql: Callable[[exp.Expression], str]) -> None:
        self.clause = clause
        self.variables = variables
        self.sql = sql

    def fail(self, node: exp.Expression, why: str) -> SqlError:
        return SqlError(f"{self.clause}: {self.sql(node)}: {why}")

    def __call__(self, node: exp.Expression) -> n.Expr:
        return self.expr(node)

    def expr(self, node: exp.Expression) -> n.Expr:  # noqa: C901 - one branch per node kind
        if isinstance(node, exp.Paren):
            return self.expr(node.this)
        if isinstance(node, exp.Column):
            return self.column(node)
        if isinstance(node, exp.Literal):
            return n.Literal(_number(node.this) if not node.is_string else node.this)
        if isinstance(node, exp.Boolean):
            return n.Literal(bool(node.this))
        if isinstance(node, exp.Null):
            return n.Literal(None)
        if isinstance(node, exp.Neg):
            inner = self.expr(node.this)
            if isinstance(inner, n.Literal) and isinstance(inner.value, (int, float)):
                return n.Literal(-inner.value)
            return n.Negate(inner)
        op = _COMPARE.get(type(node)) or _ARITHMETIC.get(type(node))
        if op is not None:
            return n.Binary(op, self.expr(node.this), self.expr(node.expression))
        if isinstance(node, exp.And):
            return n.And((self.expr(node.this), self.expr(node.expression)))
        if isinstance(node, exp.Or):
            return n.Or((self.expr(node.this), self.expr(node.expression)))
        if isinstance(node, exp.Not):
            inner = self.expr(node.this)
            if isinstance(inner, (n.IsNull, n.In, n.Between, n.Like)):
                return attrs.evolve(inner, negated=not inner.negated)
            return n.Not(inner)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise self.fail(node, "only IS NULL and IS NOT NULL are supported")
            return n.IsNull(self.expr(node.this))
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                raise self.fail(node, "IN with a subquery is not supported")
            return n.In(self.expr(node.this), tuple(self.expr(e) for e in node.expressions))
        if isinstance(node, exp.Between):
            return n.Between(self.expr(node.this), self.expr(node.args["low"]), self.expr(node.args["high"]))
        if isinstance(node, exp.Like):
            pattern = node.expression
            if not (isinstance(pattern, exp.Literal) and pattern.is_string):
                raise self.fail(node, "the LIKE pattern must be a string literal")
            return n.Like(self.expr(node.this), pattern.this, negated=bool(node.args.get("negate")))
        if isinstance(node, exp.Escape):
            like = node.this
            if not isinstance(like, exp.Like) or not isinstance(node.expression, exp.Literal):
                raise self.fail(node, "ESCAPE goes with LIKE and a string literal")
            inner = self.expr(like)
            assert isinstance(inner, n.Like)
            return n.Like(inner.operand, inner.pattern, inner.negated, node.expression.this)
        if isinstance(node, exp.Case):
            if node.this is not None:
                raise self.fail(node, "only searched CASE (CASE WHEN ...) is supported")
            whens = tuple((self.expr(i.this), self.expr(i.args["true"])) for i in node.args.get("ifs", []))
            default = node.args.get("default")
            return n.Case(whens, self.expr(default) if default is not None else None)
        if isinstance(node, exp.Cast):
            type_name = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
            cast = _CASTS.get(type_name.upper())
            if cast is None:
                raise self.fail(node, f"CAST to {type_name} is not supported")
            return n.Cast(self.expr(node.this), cast)
        if isinstance(node, (exp.First, exp.Last)):
            return self.navigation(node)
        if type(node) in _AGGREGATES:
            return self.aggregate(node)
        if type(node) in _FUNCTIONS:
            return self.function(node)
        if isinstance(node, exp.Anonymous):
            name = str(node.this).upper()
            if name == "MATCH_ROWTIME":
                if node.expressions:
                    raise self.fail(
                        node, "MATCH_ROWTIME() takes no argument here (the time column is ORDER BY's)"
                    )
                return n.MatchRowtime()
            if name in _REJECTED_CALLS:
                raise self.fail(node, _REJECTED_CALLS[name])
            raise self.fail(node, f"function {name} is not supported")
        raise self.fail(node, f"{type(node).__name__} expressions are not supported")

    def column(self, node: exp.Column) -> n.Expr:
        if node.args.get("db") is not None:
            raise self.fail(node, "a column is VARIABLE.column or column")
        var = node.table or None
        if var is not None and var not in self.variables:
            raise self.fail(
                node, f"unknown pattern variable {var!r} (the pattern has {', '.join(self.variables)})"
            )
        if isinstance(node.this, exp.Star):
            raise self.fail(node, "'*' is only allowed in COUNT(*)")
        return n.Field(node.name, var)

    def single_var(self, node: exp.Expression, operand: n.Expr) -> str | None:
        named = n.field_vars(operand)
        if len(named) > 1:
            raise self.fail(
                node, "Multiple pattern variables in one navigation or aggregate (as in Flink SQL)"
            )
        for inner in n.walk(operand):
            if isinstance(inner, (n.Navigation, n.Aggregate, n.MatchRowtime)):
                raise self.fail(node, "navigation and aggregates cannot be nested")
        return next(iter(named)) if named else None

    def navigation(self, node: exp.First | exp.Last) -> n.Expr:
        operand = self.expr(node.this)
        offset_node = node.args.get("expression")
        offset = 0
        if offset_node is not None:
            value = self.expr(offset_node)
            if not (isinstance(value, n.Literal) and isinstance(value.value, int) and value.value >= 0):
                raise self.fail(node, "the offset must be a non-negative integer literal")
            offset = value.value
        kind = "FIRST" if isinstance(node, exp.First) else "LAST"
        return n.Navigation(kind, operand, self.single_var(node, operand), offset)

    def aggregate(self, node: exp.Expression) -> n.Expr:
        name = _AGGREGATES[type(node)]
        arg = node.this
        if isinstance(arg, exp.Distinct):
            raise self.fail(node, "DISTINCT aggregations are not supported (as in Flink SQL)")
        if node.expressions:
            raise self.fail(node, f"{name} takes one argument")
        if isinstance(arg, exp.Star):
            if name != "COUNT":
                raise self.fail(node, f"{name}(*) is not an aggregate")
            return n.Aggregate("COUNT", None, None)
        operand = self.expr(arg)
        return n.Aggregate(name, operand, self.single_var(node, operand))

    def function(self, node: exp.Expression) -> n.Expr:
        name = _FUNCTIONS[type(node)]
        if isinstance(node, exp.Substring):
            args = [node.this, node.args.get("start"), node.args.get("length")]
        elif isinstance(node, exp.Concat):
            args = list(node.expressions)
        elif isinstance(node, exp.Trim):
            if node.args.get("expression") is not None or node.args.get("position") is not None:
                raise self.fail(node, "only TRIM(string) is supported")
            args = [node.this]
        else:
            args = [node.this, node.args.get("expression"), *node.expressions]
        return n.Call(name, tuple(self.expr(a) for a in args if a is not None))


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)
