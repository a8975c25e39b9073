"""A fraud rule set edited while a Spark streaming query runs (docs/multi-pattern.md, section 5).

The same story as fraud_rules.py, on Spark Structured Streaming: payments arrive as JSON files,
and ``flowcep.connectors.spark.detect_rules`` reads the rules from a directory of JSON rule files
at every micro-batch. The query starts with ``examples/rules/fraud/`` in its rule directory; after
the morning's payments an analyst copies in ``examples/rules/fraud-edited/`` (probe-then-big v2
replaces v1, probe-then-big-home is new) and deletes big-spree.json. The query is not restarted:
the next micro-batch runs the edited set, and the rules left alone keep their state.

Needs ``pip install 'flowcep[spark]'`` and Java 17.

Run it:  python examples/spark_fraud_rules.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "card_transactions.csv"
RULES = HERE / "rules" / "fraud"
EDITED = HERE / "rules" / "fraud-edited"
SCHEMA = "time timestamp, card string, merchant string, country string, amount double"
EDIT_AT = "15:30:00"


def write_payments(inbox: Path, name: str, rows: list) -> None:
    tmp = inbox / f"{name}.tmp"
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({**r.asDict(), "time": r.time.isoformat()}) + "\n")
    tmp.rename(inbox / f"{name}.json")  # the file source never sees a half-written file


def edit_rules(rules: Path) -> None:
    """The analyst's edit: the edited files copied in (atomically), big-spree.json deleted."""
    for source in sorted(EDITED.glob("*.json")):
        shutil.copy(source, rules / f"{source.stem}.tmp")
        (rules / f"{source.stem}.tmp").rename(rules / source.name)
    (rules / "big-spree.json").unlink()


def main(spark, workdir: Path | None = None) -> list[str]:
    from flowcep.connectors.spark import detect_rules

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) if workdir is None else workdir
        rules, inbox = work / "rules", work / "inbox"
        shutil.copytree(RULES, rules)
        inbox.mkdir()
        rows = spark.read.schema(SCHEMA).option("header", "true").csv(str(DATA)).orderBy("time").collect()
        morning = [r for r in rows if f"{r.time:%H:%M:%S}" < EDIT_AT]
        afternoon = rows[len(morning) :]
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(inbox))
        alerts = detect_rules(stream, str(rules), key="card", timestamp="time", buckets=4)
        query = (
            alerts.where("kind = 'match'")
            .writeStream.format("memory")
            .queryName("fraud_rule_alerts")
            .option("checkpointLocation", str(work / "checkpoint"))
            .start()
        )
        try:
            write_payments(inbox, "morning", morning)
            query.processAllAvailable()
            edit_rules(rules)
            write_payments(inbox, "afternoon", afternoon)
            query.processAllAvailable()
        finally:
            query.stop()
        lines = []
        for r in spark.table("fraud_rule_alerts").orderBy("last_ts", "pattern").collect():
            events = [e for step in json.loads(r.events).values() for e in step]
            amounts = " -> ".join(f"{e['amount']:.2f} ({e['country']})" for e in events)
            lines.append(
                f"{r.pattern} v{r.version}  {r.key}  {r.first_ts:%H:%M:%S}-{r.last_ts:%H:%M:%S}  {amounts}"
            )
    return lines + [f"{len(lines)} alerts"]


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from flowcep.connectors.spark import ROCKSDB_PROVIDER

    session = (
        SparkSession.builder.master("local[2]")
        .appName("flowcep-spark-fraud-rules")
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
