"""bench_sql.py's query run by flowcep (SQL and Python API) and by Flink SQL 2.3, in one run.

    PYTHONPATH=src .venv-flink/bin/python benchmarks/bench_sql_flink.py [--events 100000]

Flink runs the query through PyFlink's table environment (streaming mode, parallelism 1) over
a bounded CSV file source with an event-time watermark; its time is from submitting the job to
having collected every result row. A trivial job over the same file (a filter that keeps no row)
is timed too, and the table shows Flink's rate both raw and with that job's time subtracted
(job start-up and reading the file). The three match counts must agree.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

from bench_sql import QUERY, events, hand_written, select, timed

from flowcep import CEP
from flowcep.sql import run


def flink_env(data: list[dict[str, Any]]) -> Any:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    folder = tempfile.mkdtemp(prefix="flowcep-bench-")
    with open(os.path.join(folder, "t.csv"), "w") as f:
        for r in data:
            f.write(f"{r['symbol']},{r['ts']},{r['price']}\n")
    env.execute_sql(
        "CREATE TEMPORARY TABLE Ticker (symbol STRING, ts BIGINT, price BIGINT,"
        " rowtime AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rowtime AS rowtime)"
        f" WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'csv')"
    )
    return env


def flink_job(env: Any, sql: str) -> tuple[float, int]:
    start = time.perf_counter()
    with env.execute_sql(sql).collect() as results:
        count = sum(1 for _ in results)
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    n = args.events
    data = events(n)
    sql_s, sql_count = timed(lambda: run(QUERY, data))
    pattern = hand_written()
    api_s, api_count = timed(
        lambda: CEP.pattern(data, pattern, key_by=lambda e: e["symbol"], timestamp=lambda e: e["ts"]).select(
            select
        )
    )
    env = flink_env(data)
    flink_job(env, "SELECT symbol FROM Ticker WHERE price < 0")  # warms the JVM and the client
    trivial_s, _ = flink_job(env, "SELECT symbol FROM Ticker WHERE price < 0")
    flink_s, flink_count = flink_job(env, QUERY.replace("ORDER BY ts", "ORDER BY rowtime"))
    assert sql_count == api_count == flink_count, (sql_count, api_count, flink_count)
    print(f"{n} events, {sql_count} matches")
    print(f"flowcep MATCH_RECOGNIZE   {n / sql_s:>10,.0f} events/s  ({sql_s:.2f} s)")
    print(f"flowcep Python API        {n / api_s:>10,.0f} events/s  ({api_s:.2f} s)")
    print(f"Flink SQL 2.3, whole job  {n / flink_s:>10,.0f} events/s  ({flink_s:.2f} s)")
    print(
        f"Flink SQL 2.3, minus the trivial job ({trivial_s:.2f} s)  {n / max(flink_s - trivial_s, 1e-9):>10,.0f} events/s"
    )


if __name__ == "__main__":
    main()
