"""MATCH_RECOGNIZE for Python: Flink SQL's row pattern recognition, compiled onto flowcep.

``run(query, rows)`` runs ``SELECT ... FROM t MATCH_RECOGNIZE (...)`` over an iterable of dicts or
objects and yields result rows as dicts; ``plan(query)`` gives the compiled ``Pattern`` and the
result function. Needs sqlglot (``pip install 'flowcep[sql]'``). See docs/sql.md.
"""

try:
    import sqlglot  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("flowcep.sql needs sqlglot: pip install 'flowcep[sql]'") from exc

from flowcep.sql.errors import SqlError
from flowcep.sql.plan import Plan, compile_query
from flowcep.sql.query import Query, parse_query
from flowcep.sql.run import plan, run

__all__ = ["Plan", "Query", "SqlError", "compile_query", "parse_query", "plan", "run"]
