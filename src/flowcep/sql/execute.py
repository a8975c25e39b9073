"""Run a MATCH_RECOGNIZE query over Python rows: ``flowcep.sql.run(query, rows)``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from flowcep.expr import ATTR, ITEM
from flowcep.sql.planner import Plan, compile_query
from flowcep.sql.query import parse_query


def plan(query: str, access: str = ITEM) -> Plan:
    """Parse, check and compile ``query`` for rows read by ``access`` (``"item"``: mappings,
    ``"attr"``: objects)."""
    return compile_query(parse_query(query), access)


def run(
    query: str,
    rows: Iterable[Any],
    *,
    out_of_orderness: int = 0,
    on_late: Callable[[Any], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Run ``query`` (``SELECT ... FROM t MATCH_RECOGNIZE (...)``) over ``rows`` lazily.

    Rows are mappings or objects with the query's columns; the first ORDER BY column is the event
    time (epoch milliseconds or datetimes). Result rows come out as dicts, in event time, as the
    watermark (the latest time seen minus ``out_of_orderness`` ms) passes them; a row behind the
    watermark is late: Flink SQL drops it, ``on_late(row)`` sees it.
    """
    iterator = iter(rows)
    first = next(iterator, _END)
    if first is _END:
        return iter(())
    access = ITEM if isinstance(first, Mapping) else ATTR
    compiled = plan(query, access)
    return _results(compiled, itertools.chain((first,), iterator), out_of_orderness, on_late)


_END = object()


def _results(
    compiled: Plan, rows: Iterable[Any], out_of_orderness: int, on_late: Callable[[Any], None] | None
) -> Iterator[dict[str, Any]]:
    from flowcep.runtime import CEP

    stream = CEP.pattern(
        rows,
        compiled.pattern,
        key_by=compiled.key,
        timestamp=compiled.timestamp,
        out_of_orderness=out_of_orderness,
        comparator=compiled.comparator,
    )
    results = stream.select(compiled.result)
    if on_late is None:
        yield from results
        return
    # the late rows collected so far, without pulling input (iterating the side output would)
    late = results._side_queue(CEP.LATE_DATA)
    for row in results:
        while late:
            on_late(late.popleft())
        yield row
    while late:
        on_late(late.popleft())
