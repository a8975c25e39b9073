"""A MATCH_RECOGNIZE query, parsed with sqlglot and checked: the ``Query`` value.

sqlglot parses the statement, MEASURES and DEFINE; two parts it does not parse are read here:
the PATTERN text (``flowcep.sql.pattern_syntax``) and Flink's WITHIN clause, which follows
PATTERN and is cut out of the text, by sqlglot's tokens, before the statement is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Tokenizer as BaseTokenizer
from sqlglot.tokens import TokenType

from flowcep.expr import nodes as n
from flowcep.sql.errors import SqlError
from flowcep.sql.expressions import Translator
from flowcep.sql.pattern_syntax import Term, parse_pattern


class FlinkSql(Dialect):
    """Flink SQL's lexical rules, as far as MATCH_RECOGNIZE needs them."""

    class Tokenizer(BaseTokenizer):
        IDENTIFIERS = ["`"]
        KEYWORDS = {**BaseTokenizer.KEYWORDS, "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE}


_SKIPS = ("PAST LAST ROW", "TO NEXT ROW", "TO FIRST", "TO LAST")
_UNIT_MS = {"DAY": 86_400_000, "HOUR": 3_600_000, "MINUTE": 60_000, "SECOND": 1000}


@attrs.frozen(slots=True)
class Measure:
    name: str
    expr: n.Expr
    text: str


@attrs.frozen(slots=True)
class Query:
    """What a MATCH_RECOGNIZE query asks, checked; ``output`` is (output column, source column)."""

    table: str
    partition_by: tuple[str, ...]
    time_column: str
    order_by: tuple[tuple[str, bool], ...]  # the columns after the time, (name, descending)
    measures: tuple[Measure, ...]
    skip: str  # one of _SKIPS
    skip_to: str | None
    pattern: tuple[Term, ...]
    within_ms: int | None
    define: dict[str, tuple[n.Expr, str]]
    output: tuple[tuple[str, str], ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(t.var for t in self.pattern)


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect=FlinkSql)


def _cut_within(text: str) -> tuple[str, str | None]:
    """``text`` without the ``WITHIN INTERVAL ...`` that follows PATTERN (...), and that clause."""
    try:
        tokens = FlinkSql().tokenize(text)
    except TokenError as exc:
        raise SqlError(f"cannot read the query: {exc}") from exc
    for i, token in enumerate(tokens):
        if token.text.upper() != "WITHIN":
            continue
        start = i + 1
        end = start
        while (
            end < len(tokens)
            and tokens[end].text.upper() != "DEFINE"
            and tokens[end].token_type != TokenType.R_PAREN
        ):
            end += 1
        if start == end:
            raise SqlError("WITHIN: expected INTERVAL '<n>' <unit> after WITHIN")
        clause = text[tokens[start].start : tokens[end - 1].end + 1]
        return text[: token.start] + " " + text[tokens[end - 1].end + 1 :], clause
    return text, None


def _interval_ms(clause: str) -> int:
    try:
        node = sqlglot.parse_one(clause, read=FlinkSql)
    except ParseError as exc:
        raise SqlError(f"WITHIN {clause}: not an interval ({exc})") from exc
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        raise SqlError(f"WITHIN {clause}: expected INTERVAL '<n>' <unit>")
    unit = node.text("unit").upper()
    if unit not in _UNIT_MS:
        raise SqlError(
            f"WITHIN {clause}: unit {unit or '(none)'} is not supported (DAY, HOUR, MINUTE, SECOND)"
        )
    try:
        amount = float(node.this.this)
    except ValueError as exc:
        raise SqlError(f"WITHIN {clause}: {node.this.this!r} is not a number") from exc
    ms = round(amount * _UNIT_MS[unit])
    if ms <= 0:
        raise SqlError(f"WITHIN {clause}: the interval must be positive")
    return ms


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse_expression(text: str, clause: str, variables: Collection[str]) -> n.Expr:
    """One expression of DEFINE's dialect, alone (a JSON rule's condition); ``clause`` names it in
    errors, ``variables`` are the pattern variables it may name."""
    try:
        node = sqlglot.parse_one(text, read=FlinkSql)
    except (ParseError, TokenError) as exc:
        raise SqlError(f"{clause}: cannot parse {text!r}: {_ANSI.sub('', str(exc))}") from exc
    if not isinstance(node, exp.Expression):
        raise SqlError(f"{clause}: {text!r} is not an expression")
    return Translator(clause, variables, _sql)(node)


def parse_query(text: str) -> Query:
    """Parse and check ``SELECT ... FROM table MATCH_RECOGNIZE (...) [AS alias]``."""
    stripped, within = _cut_within(text)
    try:
        statements = sqlglot.parse(stripped, read=FlinkSql)
    except (ParseError, TokenError) as exc:
        raise SqlError(f"cannot parse the query: {exc}") from exc
    statements = [s for s in statements if s is not None]
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise SqlError("expected one SELECT ... FROM table MATCH_RECOGNIZE (...) statement")
    select = statements[0]
    for clause in ("where", "group", "having", "order", "limit", "joins", "with_", "qualify", "distinct"):
        if select.args.get(clause):
            raise SqlError(
                f"{clause.upper().rstrip('_')} is not supported: the statement is SELECT ... FROM table MATCH_RECOGNIZE (...)"
            )
    match = select.args.get("match")
    from_ = select.args.get("from_") or select.args.get("from")
    if not isinstance(match, exp.MatchRecognize):
        raise SqlError("the query has no MATCH_RECOGNIZE clause after its table")
    if from_ is None or not isinstance(from_.this, exp.Table):
        raise SqlError("MATCH_RECOGNIZE must follow a table name")
    return _match_recognize(from_.this.name, match, select, within)


def _match_recognize(table: str, match: exp.MatchRecognize, select: exp.Select, within: str | None) -> Query:
    if match.args.get("pattern") is None:
        raise SqlError("MATCH_RECOGNIZE needs a PATTERN clause")
    pattern = parse_pattern(match.args["pattern"].name)
    variables = tuple(t.var for t in pattern)

    partition_by = tuple(_plain_column("PARTITION BY", c) for c in match.args.get("partition_by") or ())
    order = match.args.get("order")
    if order is None or not order.expressions:
        raise SqlError("ORDER BY is required: its first column is the event time")
    first, *rest = order.expressions
    if first.args.get("desc"):
        raise SqlError(
            f"ORDER BY {_sql(first)}: primary sort order must be ascending on time (as in Flink SQL)"
        )
    time_column = _plain_column("ORDER BY", first.this)
    order_by = tuple((_plain_column("ORDER BY", o.this), bool(o.args.get("desc"))) for o in rest)

    rows = match.args.get("rows")
    if rows is not None and rows.name != "ONE ROW PER MATCH":
        raise SqlError(f"{rows.name} is not supported: Flink SQL 2.3 runs ONE ROW PER MATCH only")

    skip, skip_to = "PAST LAST ROW", None
    after = match.args.get("after")
    if after is None:
        skip = "TO NEXT ROW"  # Flink SQL's default (Calcite's), measured with Flink 2.3
    else:
        words = after.name.split()[3:]  # after AFTER MATCH SKIP
        skip = " ".join(words[:2]) if words[:2] in (["TO", "FIRST"], ["TO", "LAST"]) else " ".join(words)
        if skip in ("TO FIRST", "TO LAST"):
            skip_to = " ".join(words[2:])
            if skip_to.startswith("`") and skip_to.endswith("`"):
                skip_to = skip_to[1:-1]
            if skip_to not in variables:
                raise SqlError(f"{after.name}: unknown pattern variable {skip_to!r}")
        elif skip not in _SKIPS:
            raise SqlError(f"{after.name} is not supported")

    measures = []
    names: set[str] = set(partition_by)
    translate = Translator("MEASURES", variables, _sql)
    for m in match.args.get("measures") or ():
        if m.args.get("window_frame") == "RUNNING":
            raise SqlError(f"MEASURES: RUNNING {_sql(m.this)}: RUNNING is not supported (as in Flink SQL)")
        node = m.this
        if not isinstance(node, exp.Alias):
            raise SqlError(f"MEASURES: {_sql(node)} needs a name: expression AS name")
        if node.alias in names:
            raise SqlError(f"MEASURES: column {node.alias!r} is defined twice")
        names.add(node.alias)
        measures.append(Measure(node.alias, translate(node.this), _sql(node.this)))

    if not match.args.get("define"):
        raise SqlError("MATCH_RECOGNIZE needs a DEFINE clause (Flink SQL's grammar requires one)")
    define: dict[str, tuple[n.Expr, str]] = {}
    for d in match.args["define"]:
        var = d.alias
        if var not in variables:
            raise SqlError(f"DEFINE {var}: {var} is not a variable of PATTERN ({' '.join(variables)})")
        if var in define:
            raise SqlError(f"DEFINE {var}: defined twice")
        define[var] = (Translator(f"DEFINE {var}", variables, _sql)(d.this), _sql(d.this))

    columns = partition_by + tuple(m.name for m in measures)
    alias = match.args.get("alias")
    alias_name = alias.name if alias is not None else None
    output = _projection(select, columns, alias_name, table)
    return Query(
        table=table,
        partition_by=partition_by,
        time_column=time_column,
        order_by=order_by,
        measures=tuple(measures),
        skip=skip,
        skip_to=skip_to,
        pattern=pattern,
        within_ms=_interval_ms(within) if within is not None else None,
        define=define,
        output=output,
    )


def _plain_column(clause: str, node: exp.Expression) -> str:
    if not isinstance(node, exp.Column) or node.table:
        raise SqlError(f"{clause} {_sql(node)}: only plain columns are supported")
    return node.name


def _projection(
    select: exp.Select, columns: tuple[str, ...], alias: str | None, table: str
) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for item in select.expressions:
        if isinstance(item, exp.Star):
            out.extend((c, c) for c in columns)
            continue
        name = item.alias if isinstance(item, exp.Alias) else None
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            out.extend((c, c) for c in columns)
            continue
        if not isinstance(node, exp.Column) or node.table not in ("", alias):
            raise SqlError(
                f"SELECT {_sql(item)}: only the columns of the MATCH_RECOGNIZE result can be selected"
            )
        if node.name not in columns:
            raise SqlError(
                f"SELECT {_sql(item)}: no column {node.name!r} in the result (it has {', '.join(columns)})"
            )
        out.append((name or node.name, node.name))
    return tuple(out)
