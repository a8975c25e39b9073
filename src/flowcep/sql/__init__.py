"""MATCH_RECOGNIZE for Python: Flink SQL's row pattern recognition, compiled onto flowcep.

``run(query, rows)`` runs ``SELECT ... FROM t MATCH_RECOGNIZE (...)`` over an iterable of dicts or
objects and yields result rows as dicts; ``plan(query)`` gives the compiled ``Pattern`` and the
result function. Parsing needs sqlglot (``pip install 'flowcep[sql]'``); running a compiled plan
does not (Spark workers unpickle plans without it). See docs/sql.md.
"""

from __future__ import annotations

from typing import Any

from flowcep.sql.errors import SqlError

_LAZY = {
    "Plan": "flowcep.sql.planner",
    "compile_query": "flowcep.sql.planner",
    "Query": "flowcep.sql.query",
    "parse_query": "flowcep.sql.query",
    "plan": "flowcep.sql.execute",
    "run": "flowcep.sql.execute",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'flowcep.sql' has no attribute {name!r}")
    try:
        import sqlglot  # noqa: F401
    except ImportError as exc:  # depends on the environment
        raise ImportError("flowcep.sql needs sqlglot: pip install 'flowcep[sql]'") from exc
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["Plan", "Query", "SqlError", "compile_query", "parse_query", "plan", "run"]
