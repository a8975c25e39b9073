"""A streaming query's driver, run as its own process by test_crash.py and killed with SIGKILL.

    python crash_driver.py INPUT_DIR SINK_DIR CHECKPOINT_DIR

Reads INPUT_DIR (JSON lines, one file per micro-batch), runs ``detect`` with the pattern below
and writes the default output to SINK_DIR (JSON files, Spark's exactly-once file sink), with
the query's state in CHECKPOINT_DIR. The ``availableNow`` trigger stops the query once the input
is consumed; the process then exits 0. Started again on the same directories after a kill, it
carries on from the checkpoint.
"""

from __future__ import annotations

import os
import sys

from flowcep import Pattern

SCHEMA = "id long, user string, type string, amount double, ms long"
OUT_OF_ORDERNESS = 20
BUCKETS = 16


def pattern() -> Pattern:
    """a, then b, then c, within 40 ms: matches, and timeouts of the partial ones."""
    return (
        Pattern.begin("a")
        .where(lambda e: e.type == "a")
        .followed_by("b")
        .where(lambda e: e.type == "b")
        .followed_by("c")
        .where(lambda e: e.type == "c")
        .within(40)
    )


def main(input_dir: str, sink: str, checkpoint: str) -> int:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from flowcep.connectors.spark import ROCKSDB_PROVIDER, detect

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("flowcep-crash-driver")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(input_dir)
    out = detect(
        stream, pattern(), key="user", timestamp="ms", out_of_orderness=OUT_OF_ORDERNESS, buckets=BUCKETS
    )
    query = (
        out.writeStream.format("json")
        .option("path", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    print("started", flush=True)
    query.awaitTermination()
    print("done", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:4]))
