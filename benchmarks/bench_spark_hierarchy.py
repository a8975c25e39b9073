"""A Spark batch run of an event hierarchy on each engine: events/s of ``detect(df, hierarchy,
engine=...)`` for ``"levels"`` (``HierarchyOperator``) and ``"one_pass"`` (``OnePassHierarchy``).

    python benchmarks/bench_spark_hierarchy.py [--size 200000] [--keys 100] [--layers 3]

The hierarchy and the raw events are benchmarks/hierarchy.py's (seed 004's generator: L steps per
layer, constraint probability P, window T, C events per millisecond), here over ``--keys`` keys.
Each cell is the wall time of the whole job (the input cached first; Spark's job start-up
included, as a user running one job sees it), best of ``--repeat``, after one warm-up run per
engine that starts the Python workers. Both engines must give the same number of matches.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hierarchy as seed004  # noqa: E402  (benchmarks/hierarchy.py)

ENGINES = ("levels", "one_pass")


def run(df: Any, plan: Any, engine: str) -> tuple[float, int]:
    """Seconds of one batch job over ``df``, and its top-level matches."""
    from flowcep.connectors.spark import detect

    started = time.perf_counter()
    out = detect(df, plan, key="key", timestamp="ts", engine=engine)
    matches = out.where("kind = 'match'").count()
    return time.perf_counter() - started, matches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=200_000, help="raw events (default 200000)")
    parser.add_argument("--keys", type=int, default=100, help="keys (default 100)")
    parser.add_argument("--layers", type=int, default=3, help="H (default 3)")
    parser.add_argument("--length", type=int, default=3, help="L (default 3)")
    parser.add_argument("--window", type=int, default=100, help="T in ms (default 100)")
    parser.add_argument("--p", type=float, default=0.7, help="P (default 0.7)")
    parser.add_argument("--per-ms", type=int, default=4, help="C, raw events per millisecond (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine, best kept (default 3)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers run this interpreter
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    # the hierarchy's conditions live in benchmarks/hierarchy.py, which the workers cannot import
    cloudpickle.register_pickle_by_value(seed004)
    spark = (
        SparkSession.builder.master(args.master)
        .appName("flowcep-bench-hierarchy")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    raw = seed004.events(args.size, args.length, args.per_ms, args.keys)
    df = spark.createDataFrame(
        [(e.kind, e.v, e.ts, e.key) for e in raw], "kind int, v double, ts long, key long"
    )
    df = df.cache()
    df.count()
    plan = seed004.hierarchy(args.layers, args.length, args.p, args.window, "followed_by").build()
    print(
        f"Spark batch, {args.master}: S={args.size} keys={args.keys} H={args.layers} L={args.length} "
        f"T={args.window} P={args.p} C={args.per_ms}/ms"
    )
    results: dict[str, tuple[float, int]] = {}
    for engine in ENGINES:
        run(df.limit(2_000), plan, engine)  # warm-up: the Python workers start
        best = min(run(df, plan, engine) for _ in range(args.repeat))
        results[engine] = best
        print(f"{engine:<9} {best[1]:>8} matches  {best[0]:7.2f} s  {args.size / best[0]:>10,.0f} events/s")
    levels, one_pass = results["levels"], results["one_pass"]
    if levels[1] != one_pass[1]:
        print(f"MISMATCH: levels {levels[1]} matches, one_pass {one_pass[1]}")
        return 1
    print(f"one_pass / levels: {levels[0] / one_pass[0]:.2f}x")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
