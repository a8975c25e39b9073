"""Card fraud on Spark: the same pattern over a batch DataFrame and over a stream of files.

A probe purchase under 5.00, then a purchase over 500.00 in another country within 15 minutes,
per card (see card_fraud.py for the story). ``flowcep.connectors.spark.detect`` runs it

1. on a batch DataFrame read from examples/data/card_transactions.csv, with a ``select`` that
   shapes each match into a row of our own schema, and
2. on a streaming DataFrame: the same rows arrive as three JSON files, three micro-batches,
   with the default output (key, kind, times, and the matched rows as JSON).

Both find the same frauds. Needs ``pip install 'flowcep[spark]'`` and Java 17.

Run it:  python examples/spark_fraud.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from flowcep import AfterMatchSkipStrategy, Pattern

DATA = Path(__file__).resolve().parent / "data" / "card_transactions.csv"
SCHEMA = "time timestamp, card string, merchant string, country string, amount double"


def large_abroad(payment, ctx) -> bool:
    probe = ctx.get_events_for_pattern("probe")[0]
    return payment.amount > 500 and payment.country != probe.country


pattern = (
    Pattern.begin("probe", AfterMatchSkipStrategy.skip_past_last_event())
    .where(lambda p: p.amount < 5)
    .followed_by("large")
    .where(large_abroad)
    .within(timedelta(minutes=15))
)


def fraud_row(match) -> tuple:
    """One output row per match: (card, probe time, probe amount, time, amount, merchant, country)."""
    probe, large = match["probe"][0], match["large"][0]
    return (probe.card, probe.time, probe.amount, large.time, large.amount, large.merchant, large.country)


FRAUD_SCHEMA = (
    "card string, probe_time timestamp, probe_amount double, "
    "time timestamp, amount double, merchant string, country string"
)


def batch(spark) -> list[str]:
    """Frauds in the whole history, one line each."""
    from flowcep.connectors.spark import detect

    payments = spark.read.schema(SCHEMA).option("header", "true").csv(str(DATA))
    frauds = detect(
        payments, pattern, key="card", timestamp="time", select=fraud_row, output_schema=FRAUD_SCHEMA
    )
    return [
        f"FRAUD {f.card}  probe {f.probe_amount:.2f} at {f.probe_time:%H:%M:%S}, "
        f"then {f.amount:.2f} at {f.merchant} ({f.country}) at {f.time:%H:%M:%S}"
        for f in frauds.orderBy("time").collect()
    ]


def streaming(spark, workdir: Path) -> list[str]:
    """The same rows as three files, read as a stream; default output."""
    from flowcep.connectors.spark import detect

    rows = spark.read.schema(SCHEMA).option("header", "true").csv(str(DATA)).orderBy("time").collect()
    inbox = workdir / "inbox"
    inbox.mkdir()
    third = -(-len(rows) // 3)
    for i in range(3):
        path = inbox / f"payments-{i}.json"
        with path.open("w", encoding="utf-8") as f:
            for r in rows[i * third : (i + 1) * third]:
                f.write(json.dumps({**r.asDict(), "time": r.time.isoformat()}) + "\n")
        # the file source takes files in modification-time order: make it the time order
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))

    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(inbox))
    results = detect(stream, pattern, key="card", timestamp="time", out_of_orderness="0 seconds")
    query = (
        results.writeStream.format("parquet")
        .option("path", str(workdir / "frauds"))
        .option("checkpointLocation", str(workdir / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    lines = []
    for r in spark.read.parquet(str(workdir / "frauds")).where("kind = 'match'").orderBy("last_ts").collect():
        steps = json.loads(r.events)
        probe, large = steps["probe"][0], steps["large"][0]
        lines.append(
            f"FRAUD {r.key}  probe {probe['amount']:.2f} at {r.first_ts:%H:%M:%S}, "
            f"then {large['amount']:.2f} at {large['merchant']} ({large['country']}) at {r.last_ts:%H:%M:%S}"
        )
    return lines


def main(spark) -> list[str]:
    out = ["batch:"]
    found = batch(spark)
    out += found
    with tempfile.TemporaryDirectory() as tmp:
        streamed = streaming(spark, Path(tmp))
    out += ["streaming (3 micro-batches):", *streamed]
    out.append(f"{len(found)} suspicious cards; batch and streaming agree: {found == streamed}")
    return out


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from flowcep.connectors.spark import ROCKSDB_PROVIDER

    session = (
        SparkSession.builder.master("local[2]")
        .appName("flowcep-spark-fraud")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        for line in main(session):
            print(line)
    finally:
        session.stop()
