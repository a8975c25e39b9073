"""MATCH_RECOGNIZE on DataFrames: ``match_recognize(df, query)``, batch or streaming.

The query is compiled by ``flowcep.sql`` (pattern, DEFINE conditions, MEASURES) and run by
``detect``; the result has Flink SQL's columns, the PARTITION BY columns then the MEASURES (or
the SELECT list), with Spark types inferred from the input schema.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from flowcep.expr import ATTR
from flowcep.expr import nodes as n
from flowcep.sql.errors import SqlError
from flowcep.sql.planner import compile_query

from .detect import detect

_STRING_FUNCTIONS = {"UPPER", "LOWER", "TRIM", "SUBSTRING", "CONCAT"}
_CASTS = {
    "INT": T.LongType(),
    "BIGINT": T.LongType(),
    "DOUBLE": T.DoubleType(),
    "STRING": T.StringType(),
    "BOOLEAN": T.BooleanType(),
}
_FRACTIONAL = (T.FloatType, T.DoubleType, T.DecimalType)


def match_recognize(
    df: DataFrame,
    query: str,
    *,
    out_of_orderness: int | timedelta | str = 0,
    on_error: str | None = None,
    state_ttl: int | timedelta | str | None = None,
) -> DataFrame:
    """Run ``SELECT ... FROM t MATCH_RECOGNIZE (...)`` over ``df`` (the table name is not looked
    up: the query runs over ``df``); a DataFrame of result rows, one per match.

    ``out_of_orderness``, ``on_error`` and ``state_ttl`` are ``detect``'s.
    """
    from flowcep.sql.query import parse_query  # sqlglot: needed here, not on the workers

    parsed = parse_query(query)
    if parsed.order_by:
        raise SqlError("ORDER BY: on Spark only the time column is supported (no secondary sort columns)")
    plan = compile_query(parsed, ATTR)
    schema = df.schema
    types = {f.name: f.dataType for f in schema.fields}
    for column in (*parsed.partition_by, parsed.time_column):
        if column not in types:
            raise SqlError(f"column {column!r} is not in the DataFrame (it has {', '.join(types)})")
    inferred = {c: types[c] for c in parsed.partition_by}
    for m in parsed.measures:
        inferred[m.name] = _type(m.expr, types, parsed.time_column, f"MEASURES {m.text}")
    output = T.StructType([T.StructField(out, inferred[src], True) for out, src in parsed.output])
    result = plan.result
    return detect(
        df,
        plan.pattern,
        key=list(parsed.partition_by) or None,
        timestamp=parsed.time_column,
        out_of_orderness=out_of_orderness,
        select=result,
        output_schema=output,
        on_error=on_error,
        state_ttl=state_ttl,
    )


def _type(node: n.Expr, types: dict[str, T.DataType], time_column: str, where: str) -> T.DataType:
    """The Spark type of a measure, from the input schema."""

    def of(x: n.Expr) -> T.DataType:
        return _type(x, types, time_column, where)

    if isinstance(node, n.Literal):
        value = node.value
        if isinstance(value, bool):
            return T.BooleanType()
        if isinstance(value, int):
            return T.LongType()
        if isinstance(value, float):
            return T.DoubleType()
        return T.StringType()
    if isinstance(node, n.Field):
        if node.name not in types:
            raise SqlError(f"{where}: column {node.name!r} is not in the DataFrame")
        return types[node.name]
    if isinstance(node, (n.Navigation, n.Negate)):
        return of(node.operand)
    if isinstance(node, n.MatchRowtime):
        return types[time_column]
    if isinstance(node, n.Aggregate):
        if node.name == "COUNT":
            return T.LongType()
        assert node.operand is not None
        inner = of(node.operand)
        if node.name == "SUM" and isinstance(inner, (T.ByteType, T.ShortType, T.IntegerType)):
            return T.LongType()
        return inner
    if isinstance(node, n.Binary):
        if node.op in n.COMPARISONS:
            return T.BooleanType()
        if node.op == "||":
            return T.StringType()
        left, right = of(node.left), of(node.right)
        if isinstance(left, _FRACTIONAL) or isinstance(right, _FRACTIONAL):
            return T.DoubleType()
        return T.LongType()
    if isinstance(node, (n.And, n.Or, n.Not, n.IsNull, n.In, n.Between, n.Like)):
        return T.BooleanType()
    if isinstance(node, n.Case):
        return of(node.whens[0][1])
    if isinstance(node, n.Cast):
        return _CASTS[node.type]
    if isinstance(node, n.Call):
        if node.name in _STRING_FUNCTIONS:
            return T.StringType()
        if node.name in ("CHAR_LENGTH", "CHARACTER_LENGTH"):
            return T.LongType()
        if node.name in ("POWER", "SQRT"):
            return T.DoubleType()
        return of(node.args[0])
    raise SqlError(f"{where}: cannot infer a Spark type")


__all__ = ["match_recognize"]
