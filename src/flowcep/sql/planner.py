"""A checked ``Query`` compiled: the flowcep ``Pattern`` and the function making result rows.

The pattern is built as Flink SQL 2.3 builds its CEP pattern: variables joined by ``next``
(strict contiguity), quantifiers as ``one_or_more``/``times``/``times_or_more``, each
``consecutive``, greedy unless reluctant (``?`` and ``{n}`` stay as they are), the skip
strategy on ``begin`` (TO FIRST/TO LAST throw on a miss), WITHIN as ``within``. The builder's
checks then give Flink's messages (a greedy last variable, patterns that can match nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import attrs

from flowcep.expr import ITEM, ExpressionCondition, ExpressionError, compile_measures_function
from flowcep.pattern import (
    AfterMatchSkipStrategy,
    IllegalArgumentException,
    MalformedPatternException,
    Pattern,
)
from flowcep.sql.errors import SqlError
from flowcep.sql.pattern_syntax import INFINITE, Term

if TYPE_CHECKING:
    from flowcep.sql.query import Query

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def skip_strategy(query: Query) -> AfterMatchSkipStrategy:
    if query.skip == "PAST LAST ROW":
        return AfterMatchSkipStrategy.skip_past_last_event()
    if query.skip == "TO NEXT ROW":
        return AfterMatchSkipStrategy.skip_to_next()
    assert query.skip_to is not None
    if query.skip == "TO FIRST":
        return AfterMatchSkipStrategy.skip_to_first(query.skip_to).throw_exception_on_miss()
    return AfterMatchSkipStrategy.skip_to_last(query.skip_to).throw_exception_on_miss()


def _quantify(p: Pattern, term: Term) -> Pattern:
    low, high = term.low, term.high
    optional = (low, high) == (0, 1)
    if (low, high) == (1, 1):
        return p
    if (low, high) == (0, INFINITE):
        p = p.one_or_more().optional().consecutive()
    elif (low, high) == (1, INFINITE):
        p = p.one_or_more().consecutive()
    elif optional:
        p = p.optional()
    elif high != INFINITE:
        p = p.times(low, high).consecutive()
    else:
        p = p.times_or_more(low).consecutive()
    if term.greedy and (optional or low == high):
        return p
    if term.greedy:
        return p.greedy()
    if optional:
        raise SqlError(
            f"PATTERN: {term.text()}: Reluctant optional variables are not supported yet (as in Flink SQL)"
        )
    return p


def _check_terms(query: Query) -> None:
    """What Flink SQL's planner rejects before it builds the CEP pattern."""
    text = " ".join(t.text() for t in query.pattern)
    if all(t.low == 0 for t in query.pattern):
        raise SqlError(
            f"PATTERN ({text}): Patterns that can produce empty matches are not supported. "
            "There must be at least one non-optional state."
        )
    last = query.pattern[-1]
    if last.greedy and last.low != last.high and (last.low, last.high) != (0, 1):
        raise SqlError(
            f"PATTERN ({text}): {last.text()}: Greedy quantifiers are not allowed as the last element of a "
            "Pattern yet. Finish your pattern with either a simple variable or reluctant quantifier."
        )


def build_pattern(query: Query, access: str = ITEM) -> Pattern:
    """The flowcep pattern of ``query``; conditions read rows by ``access``."""
    _check_terms(query)
    variables = query.variables
    pattern: Pattern | None = None
    try:
        for term in query.pattern:
            p = Pattern.begin(term.var, skip_strategy(query)) if pattern is None else pattern.next(term.var)
            if term.var in query.define:
                expr, text = query.define[term.var]
                p = p.where(ExpressionCondition(expr, term.var, variables, access, text))
            pattern = _quantify(p, term)
        assert pattern is not None
        if query.within_ms is not None:
            pattern = pattern.within(query.within_ms)
        _compile_once(pattern)
    except ExpressionError as exc:
        raise SqlError(f"DEFINE: {exc}") from exc
    except (MalformedPatternException, IllegalArgumentException) as exc:
        raise SqlError(f"PATTERN ({' '.join(t.text() for t in query.pattern)}): {exc}") from exc
    return pattern


def _compile_once(pattern: Pattern) -> None:
    """Compile once, so that what Flink rejects when it plans the query fails here too."""
    from flowcep.nfa import NFACompiler

    NFACompiler.compile(pattern)


@attrs.frozen(slots=True)
class Plan:
    """A compiled query: ``pattern``, ``key(row)``, ``timestamp(row)``, ``comparator``, and
    ``result(match)`` making the output row (a dict in SELECT order)."""

    query: Query
    pattern: Pattern
    key: Callable[[Any], Any] | None
    timestamp: Callable[[Any], int]
    comparator: Callable[[Any, Any], int] | None
    result: Callable[[dict[str, list[Any]]], dict[str, Any]]


def reader(access: str, name: str) -> Callable[[Any], Any]:
    if access == ITEM:
        return lambda row: row[name]
    return lambda row: getattr(row, name)


def to_millis(value: Any) -> Any:
    """Event time as epoch milliseconds: ints pass; datetimes convert (naive ones are UTC)."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return value


def compile_query(query: Query, access: str = ITEM) -> Plan:
    pattern = build_pattern(query, access)
    try:
        measures = compile_measures_function(
            [m.expr for m in query.measures], query.variables, access, query.time_column
        )
    except ExpressionError as exc:
        raise SqlError(f"MEASURES: {exc}") from exc
    keys = [reader(access, c) for c in query.partition_by]
    if not keys:
        key = None
    elif len(keys) == 1:
        key = keys[0]
    else:
        key = lambda row: tuple(k(row) for k in keys)  # noqa: E731
    read_time = reader(access, query.time_column)

    def timestamp(row: Any) -> Any:
        return to_millis(read_time(row))

    comparator = _comparator(query, access)
    partition = query.partition_by
    names = partition + tuple(m.name for m in query.measures)
    output = query.output
    identity = [o for o, _ in output] == list(names) and [s for _, s in output] == list(names)
    variables = query.variables

    def result(match: dict[str, list[Any]]) -> dict[str, Any]:
        values = measures(match)
        if partition:
            row = next(rows[0] for v in variables if (rows := match.get(v)))  # any row: same partition
            values = tuple(k(row) for k in keys) + values
        full = dict(zip(names, values))
        return full if identity else {o: full[s] for o, s in output}

    return Plan(query, pattern, key, timestamp, comparator, result)


def _comparator(query: Query, access: str) -> Callable[[Any, Any], int] | None:
    if not query.order_by:
        return None
    readers = [(reader(access, c), desc) for c, desc in query.order_by]

    def compare(a: Any, b: Any) -> int:
        for read, desc in readers:
            x, y = read(a), read(b)
            if x == y:
                continue
            if x is None or y is None:  # NULLs first ascending, as Flink sorts them
                less = x is None
            else:
                less = x < y
            return (1 if less else -1) if desc else (-1 if less else 1)
        return 0

    return compare
