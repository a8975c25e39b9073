"""Random MATCH_RECOGNIZE queries and ticker tables, and Flink SQL 2.3 running them.

Every query has the same result columns (``symbol``, ``m1``..``m6``, BIGINT), so that many of
them run as one Flink job (UNION ALL), each over its own table.
"""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any

QUANTIFIERS = ["", "", "", "+", "*", "?", "{2}", "{1,3}", "{2,}", "+?", "*?", "{1,2}?", "{2,}?"]
LAST_QUANTIFIERS = ["", "", "{2}", "+?", "*?", "{1,3}?", "?"]
SKIPS = ["AFTER MATCH SKIP PAST LAST ROW", "AFTER MATCH SKIP TO NEXT ROW", ""]


def table(rnd: random.Random, n: int = 24) -> list[dict[str, Any]]:
    """Rows of two symbols, one per second, interleaved."""
    return [
        {
            "symbol": rnd.choice("ab"),
            "ts": 1000 * (i + 1),
            "price": rnd.randint(0, 15),
            "tax": rnd.randint(0, 3),
        }
        for i in range(n)
    ]


def _condition(rnd: random.Random, var: str, earlier: list[str]) -> str:
    k = rnd.randint(2, 13)
    choices = [
        f"{var}.price > {k}",
        f"{var}.price < {k}",
        f"(LAST({var}.price, 1) IS NULL OR {var}.price >= LAST({var}.price, 1))",
        f"SUM({var}.price) < {rnd.randint(10, 40)}",
        f"{var}.tax = {rnd.randint(0, 3)} OR {var}.price > {k}",
        f"AVG(price) < {k}",
        f"COUNT({var}.price) <= 2",
        f"{var}.price % 2 = 0",
        f"NOT {var}.price BETWEEN {k} AND {k + 4}",
        f"{var}.price + {var}.tax > {k}",
    ]
    if earlier:
        other = rnd.choice(earlier)
        choices += [f"{var}.price > FIRST({other}.price)", f"{var}.price <= LAST({other}.price) + 2"]
    return rnd.choice(choices)


def query(rnd: random.Random, name: str) -> str:
    """A random query over table ``name`` that Flink SQL 2.3 plans (or flowcep rejects)."""
    n = rnd.randint(2, 4)
    variables = list("ABCD"[:n])
    quants = [rnd.choice(QUANTIFIERS) for _ in variables[:-1]] + [rnd.choice(LAST_QUANTIFIERS)]
    pattern = " ".join(v + q for v, q in zip(variables, quants))
    defines = [
        f"{v} AS {_condition(rnd, v, variables[:i])}" for i, v in enumerate(variables) if rnd.random() < 0.8
    ] or [f"{variables[-1]} AS {_condition(rnd, variables[-1], variables[:-1])}"]  # DEFINE is required
    skips = list(SKIPS)
    if quants[0] in ("", "+", "{2}", "{1,3}", "{2,}", "+?", "{2,}?") and quants[-1] in (
        "",
        "{2}",
        "+?",
        "{1,3}?",
    ):
        skips.append(f"AFTER MATCH SKIP TO LAST {variables[-1]}")  # never the match's first row
    within = f"WITHIN INTERVAL '{rnd.randint(3, 9)}' SECOND" if rnd.random() < 0.3 else ""
    some = rnd.choice(variables)
    return (
        f"SELECT * FROM {name} MATCH_RECOGNIZE ("
        f" PARTITION BY symbol ORDER BY rowtime"
        f" MEASURES FIRST({variables[0]}.price) AS m1, LAST({variables[-1]}.ts) AS m2, SUM(price) AS m3,"
        f" COUNT(*) AS m4, MAX({some}.price) AS m5, AVG(price) AS m6"
        f" ONE ROW PER MATCH {rnd.choice(skips)}"
        f" PATTERN ({pattern}) {within}"
        f" DEFINE {', '.join(defines)})"
    )


# Flink's planner (Calcite) keeps its metadata provider per thread; now and then, on a loaded
# machine, PyFlink plans a query on a thread without one and the job fails with this message alone.
# It says nothing about the query: the job is run again, on a new table environment.
PLANNER_FLAKE = "metadataHandlerProvider"


def flink_results(
    cases: list[tuple[str, str, list[dict[str, Any]]]],
) -> dict[str, list[tuple[Any, ...]]] | str:
    """Run ``(name, query, rows)`` cases as one Flink SQL job: each case's result rows, in
    Flink's order, or the error text when the job fails (after ``PLANNER_FLAKE`` three times)."""
    for _ in range(3):
        result = _flink_results(cases)
        if result != PLANNER_FLAKE:
            break
    return result


def _flink_results(
    cases: list[tuple[str, str, list[dict[str, Any]]]],
) -> dict[str, list[tuple[Any, ...]]] | str:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    selects = []
    for name, text, rows in cases:
        folder = tempfile.mkdtemp(prefix="flowcep-sql-")
        with open(os.path.join(folder, "t.csv"), "w") as f:
            for r in rows:
                f.write(f"{r['symbol']},{r['ts']},{r['price']},{r['tax']}\n")
        env.execute_sql(
            f"CREATE TEMPORARY TABLE {name} (symbol STRING, ts BIGINT, price BIGINT, tax BIGINT,"
            f" rowtime AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rowtime AS rowtime)"
            f" WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'csv')"
        )
        selects.append(
            text.replace("SELECT * FROM", f"SELECT '{name}' AS qid, symbol, m1, m2, m3, m4, m5, m6 FROM", 1)
        )
    out: dict[str, list[tuple[Any, ...]]] = {name: [] for name, _, _ in cases}
    try:
        with env.execute_sql(" UNION ALL ".join(selects)).collect() as results:
            for row in results:
                out[row[0]].append(tuple(row[1:]))
    except Exception as exc:  # the job's failure, reported by the caller
        return root_cause(exc)
    return out


def root_cause(exc: BaseException) -> str:
    """The innermost Java exception's message (Py4J wraps it)."""
    java = getattr(exc, "java_exception", None)
    message = str(exc).splitlines()[0]
    while java is not None:
        message = str(java.getMessage())
        java = java.getCause()
    return message[:500]
