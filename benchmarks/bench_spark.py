"""Throughput of flowcep.connectors.spark: events/s for 1k and 100k keys, batch and streaming.

The workload is W1 of the benchmarks: ``a`` followed by ``b`` followed by ``c`` within 10 ms,
every key getting one event per millisecond (names drawn from a, b, c, d). The same events also
run through the pure-Python ``CepOperator`` in this process, side by side.

    python benchmarks/bench_spark.py [--events 300000] [--keys 1000 100000] [--master local[2]]

The streaming input is written as ``--files`` time slices, each of ``--splits`` parquet files
with the keys split among them (a topic with a partition per core; one file is read by one task
on one core), one slice per micro-batch.

"streaming no-op" runs the streaming query's input, buckets and state calls through a processor
that matches nothing: Spark's own share of the streaming time. Prints a table, then one JSON
line. Times include Spark's job (and query) start-up, as a user running one job would see them;
the Python workers (batch's and streaming's) are started once before the measurements by a small
job of each kind.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flowcep import Pattern


def w1_pattern() -> Pattern:
    return (
        Pattern.begin("a")
        .where(lambda e: e.name == "a")
        .followed_by("b")
        .where(lambda e: e.name == "b")
        .followed_by("c")
        .where(lambda e: e.name == "c")
        .within(10)
    )


NAMES = "abcd"

#: CPU seconds used by Spark's JVM and by its Python workers during the last timed section
LAST_CPU: dict[str, float] = {}


def cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) so far of this machine's Spark JVMs and PySpark Python workers
    (Linux ``/proc``; empty elsewhere)."""
    totals = {"jvm": 0.0, "python workers": 0.0}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used = (int(fields[11]) + int(fields[12])) / tick
        if b"java" in cmd and b"pyspark" in cmd:
            totals["jvm"] += used
        elif b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
            totals["python workers"] += used
    return totals


def _timed_cpu(before: dict[str, float]) -> None:
    after = cpu_seconds()
    LAST_CPU.clear()
    LAST_CPU.update({k: round(after[k] - before.get(k, 0.0), 1) for k in after})


def name_of(i: int) -> str:
    """The event name of event ``i``: a multiplicative hash, computed alike in Python and Spark."""
    return NAMES[(i * 2654435761 % 4294967296) // 1024 % 4]


def spark_events(spark: Any, n: int, keys: int) -> Any:
    from pyspark.sql import functions as F

    h = (F.col("id") * F.lit(2654435761) % F.lit(4294967296)) / F.lit(1024)
    index = (F.floor(h) % 4 + 1).cast("int")
    name = F.element_at(F.array(*[F.lit(c) for c in NAMES]), index)
    return spark.range(n).select(
        F.col("id"),
        F.concat(F.lit("k"), (F.col("id") % keys).cast("string")).alias("key"),
        name.alias("name"),
        (F.col("id") / keys).cast("long").alias("ts"),
    )


def bench_batch(spark: Any, n: int, keys: int) -> tuple[float, int]:
    from flowcep.connectors.spark import detect

    df = spark_events(spark, n, keys).cache()
    df.count()
    cpu = cpu_seconds()
    started = time.perf_counter()
    out = detect(df, w1_pattern(), key="key", timestamp="ts")
    matches = out.where("kind = 'match'").count()
    elapsed = time.perf_counter() - started
    _timed_cpu(cpu)
    df.unpersist()
    return elapsed, matches


def _no_op_processor() -> Any:
    """Spark's own share: the same buckets, rows handed to Python and read, one state read and
    write per bucket, no matching (the class is made here: pyspark is imported late)."""
    from pyspark.sql.streaming import StatefulProcessor

    from flowcep.connectors.spark.chunks import unchunk

    class NoOp(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.state = handle.getValueState("s", "blob binary")

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Any:  # noqa: N802,N803
            for row in rows:
                unchunk(row[1])
            if self.state.exists():
                self.state.get()
            self.state.update((b"",))
            return iter(())

        def close(self) -> None:
            pass

    return NoOp()


def floor_stream(stream: Any, buckets: int) -> Any:
    """The stream of ``bench_stream`` through a no-op processor on the connector's buckets."""
    from pyspark.sql import functions as F

    from flowcep.connectors.spark.chunks import CHUNK_SCHEMA, chunker

    prepared = (
        stream.withColumn("ms", F.col("ts"))
        .withColumn("bucket", F.pmod(F.hash("key"), F.lit(buckets)))
        .withColumn("wm", F.timestamp_millis("ms"))
        .withWatermark("wm", "0 milliseconds")
        .drop("wm")
    )
    # the events shipped as the connector ships them (in chunks per bucket)
    items = len(prepared.columns) - 1
    prepared = prepared.mapInArrow(chunker([None] * items), CHUNK_SCHEMA)
    out = prepared.groupBy("bucket").transformWithState(
        _no_op_processor(), "key string, kind string", "Append", "EventTime"
    )
    return out.where("kind = 'match'")


def bench_stream(
    spark: Any,
    n: int,
    keys: int,
    files: int,
    workdir: Path,
    floor: bool = False,
    buckets: int = 1024,
    splits: int = 1,
) -> tuple[float, int]:
    from pyspark.sql import functions as F

    from flowcep.connectors.spark import detect

    name = f"{keys}-floor" if floor else str(keys)
    src = workdir / f"src-{name}"
    src.mkdir(parents=True)
    df = spark_events(spark, n, keys)
    # one file per time slice, written in time order, so that micro-batches follow event time
    slice_ms = max(1, -(-n // keys) // files)
    for i in range(files):
        part = df.where(
            (F.col("ts") >= i * slice_ms) & ((F.col("ts") < (i + 1) * slice_ms) | F.lit(i == files - 1))
        )
        tmp = workdir / f"tmp-{name}-{i}"
        if splits == 1:
            part.coalesce(1).write.parquet(str(tmp))
        else:  # the keys split over files, like a topic with a partition per core
            part.repartition(splits, "key").sortWithinPartitions("ts", "id").write.parquet(str(tmp))
        for j, data in enumerate(sorted(tmp.glob("part-*.parquet"))):
            target = src / f"slice-{i:04d}-{j}.parquet"
            data.rename(target)
            os.utime(target, (1_000_000_000 + i, 1_000_000_000 + i))  # the file source orders by mtime
    sink = workdir / f"sink-{name}"
    stream = spark.readStream.schema(df.schema).option("maxFilesPerTrigger", splits).parquet(str(src))
    if floor:
        out = floor_stream(stream, buckets)
    else:
        out = detect(stream, w1_pattern(), key="key", timestamp="ts", buckets=buckets).where("kind = 'match'")
    started = time.perf_counter()
    cpu = cpu_seconds()
    q = (
        out.writeStream.format("parquet")
        .option("path", str(sink))
        .option("checkpointLocation", str(workdir / f"ck-{name}"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    elapsed = time.perf_counter() - started
    _timed_cpu(cpu)
    for p in q.recentProgress:
        d = p["durationMs"]
        state = p["stateOperators"][0] if p["stateOperators"] else {}
        metrics = state.get("customMetrics", {})
        timing = ", ".join(
            f"{k} {v}" for k, v in sorted(metrics.items()) if k.endswith(("TimeMs", "Timers")) and v
        )
        print(
            f"    batch {p['batchId']}: {p['numInputRows']} rows, {d.get('triggerExecution', 0)} ms "
            f"(addBatch {d.get('addBatch', 0)} ms; state rows {state.get('numRowsTotal')}, "
            f"{state.get('memoryUsedBytes', 0) / 1e6:.1f} MB; {timing})",
            file=sys.stderr,
        )
    matches = spark.read.parquet(str(sink)).count()
    return elapsed, matches


def bench_pure(n: int, keys: int) -> tuple[float, int]:
    """The embedded runtime on the same events (rows as plain tuples with attribute access)."""
    import collections

    from flowcep.runtime import CepOperator

    Ev = collections.namedtuple("Ev", "id key name ts")
    events = [Ev(i, f"k{i % keys}", name_of(i), i // keys) for i in range(n)]
    op = CepOperator(w1_pattern(), key_by=lambda e: e.key, timestamp=lambda e: e.ts)
    LAST_CPU.clear()
    started = time.perf_counter()
    matches = 0
    for e in events:
        for o in op.process_element(e):
            matches += o.kind == "match"
    matches += sum(o.kind == "match" for o in op.flush())
    return time.perf_counter() - started, matches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--keys", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--files", type=int, default=5, help="micro-batches of the streaming run")
    parser.add_argument(
        "--splits",
        type=int,
        default=2,
        help="files per micro-batch, the keys split among them like a topic's partitions (1: one file, "
        "which Spark reads as one task on one core)",
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--buckets", type=int, default=None, help="detect(buckets=...); default: the connector's"
    )
    parser.add_argument("--no-pure", action="store_true", help="skip the pure-Python comparison")
    parser.add_argument("--batch-only", action="store_true", help="batch and pure Python only (no streaming)")
    parser.add_argument(
        "--no-floor",
        action="store_true",
        help="skip the no-op streaming run (Spark's own cost: same input, buckets and state calls, no matching)",
    )
    args = parser.parse_args(argv)
    if args.buckets is None:
        from flowcep.connectors.spark import DEFAULT_BUCKETS

        args.buckets = DEFAULT_BUCKETS

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from flowcep.connectors.spark import ROCKSDB_PROVIDER

    spark = (
        SparkSession.builder.master(args.master)
        .appName("flowcep-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    workdir = Path(tempfile.mkdtemp(prefix="flowcep-bench-"))
    results: list[dict[str, Any]] = []
    try:
        # start the Python workers (batch, and streaming's) once, outside the measurements
        bench_batch(spark, 2_000, 10)
        bench_stream(spark, 2_000, 10, 2, workdir / "warm-up", buckets=args.buckets)
        for keys in args.keys:
            runs = [("spark batch", lambda k=keys: bench_batch(spark, args.events, k))]
            if not args.batch_only:
                runs.append(
                    (
                        "spark streaming",
                        lambda k=keys: bench_stream(
                            spark,
                            args.events,
                            k,
                            args.files,
                            workdir,
                            buckets=args.buckets,
                            splits=args.splits,
                        ),
                    )
                )
            if not args.no_floor and not args.batch_only:
                runs.append(
                    (
                        "streaming no-op",
                        lambda k=keys: bench_stream(
                            spark,
                            args.events,
                            k,
                            args.files,
                            workdir,
                            floor=True,
                            buckets=args.buckets,
                            splits=args.splits,
                        ),
                    )
                )
            if not args.no_pure:
                runs.append(("pure python", lambda k=keys: bench_pure(args.events, k)))
            for mode, run in runs:
                elapsed, matches = run()
                results.append(
                    {
                        "mode": mode,
                        "keys": keys,
                        "events": args.events,
                        "seconds": round(elapsed, 3),
                        "events_per_s": round(args.events / elapsed),
                        "matches": matches,
                        "cpu_seconds": dict(LAST_CPU),
                    }
                )
                print(
                    f"  {mode:<16} {keys:>7} keys  {args.events / elapsed:>10,.0f} events/s"
                    + "".join(f"; {k} {v} CPU s" for k, v in LAST_CPU.items()),
                    file=sys.stderr,
                )
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"\n{'mode':<16} {'keys':>8} {'events':>9} {'seconds':>8} {'events/s':>10} {'matches':>8}"
        f" {'JVM CPU s':>10} {'Python CPU s':>13}"
    )
    for r in results:
        cpu = r["cpu_seconds"]
        print(
            f"{r['mode']:<16} {r['keys']:>8} {r['events']:>9} {r['seconds']:>8.2f} "
            f"{r['events_per_s']:>10,} {r['matches']:>8} {cpu.get('jvm', '-'):>10} {cpu.get('python workers', '-'):>13}"
        )
    print(json.dumps({"benchmark": "spark", "master": args.master, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
