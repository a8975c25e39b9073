"""``flowcep run --engine spark``: a batch run of the Spark connector over one file.

The command line's record shape lives here, not in the connector: the connector's matcher calls
:func:`cli_record` (its ``format`` mode) on the workers to make each result row.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from flowcep.connectors.spark.detect import build, check_columns
from flowcep.connectors.spark.values import dumps, duration_ms
from flowcep.hierarchy.event import ComplexEvent, plain_match
from flowcep.runtime.bounded import batch_evaluator

CLI_SCHEMA = "kind string, key string, timestamp long, record string"


class _CliFormat:
    """The ``format`` of the connector's matcher: ``(kind, key, timestamp, record JSON)`` rows.

    ``record`` is ``"match"`` ({step: [row dict]}) or ``"value"`` (``select(match)``) for matches,
    the same for timeouts (``"value"``: the pattern file's ``timeout(partial)``), ``"event"`` (and
    ``"error"``) for late and invalid rows: the local engine's shapes. Over an event hierarchy,
    a record also has its ``"level"`` ("" for raw rows), and a match is its complex event as
    plain values (``ComplexEvent.as_dict``).
    """

    def __init__(
        self, select: Callable[[Any], Any] | None, timeout: Callable[[Any], Any] | None = None
    ) -> None:
        self.select = select
        self.timeout = timeout

    def __call__(
        self,
        matcher: Any,
        kind: str,
        key: str | None,
        ts: int | None,
        value: Any,
        reason: str | None,
        level: str | None = None,
    ) -> tuple[Any, ...]:
        if level is not None:
            return (kind, key, ts, dumps(self._level_record(matcher, kind, value, reason, level)))
        record: dict[str, Any]
        if kind == "match":
            record = (
                {"value": self.select(value)}
                if self.select is not None
                else {"match": matcher.events_dict(value)}
            )
        elif kind == "timeout":
            record = (
                {"value": self.timeout(value)}
                if self.timeout is not None
                else {"match": matcher.events_dict(value)}
            )
        elif kind == "dropped":
            record = {"match": matcher.events_dict(value)}
        else:
            (row,) = value[kind]
            record = {"event": matcher.row_dict(row)}
            if reason is not None:
                record["error"] = reason
        return (kind, key, ts, dumps(record))

    @staticmethod
    def _level_record(matcher: Any, kind: str, value: Any, reason: str | None, level: str) -> dict[str, Any]:
        """A hierarchy's result as the local engine writes it (``flowcep run``)."""
        row = matcher.row_dict
        record: dict[str, Any] = {"level": level}
        if kind == "match":
            record["match"] = value.as_dict(row)
        elif kind == "timeout":
            record["match"] = plain_match(value, row)
        else:
            ((event,),) = value.values()
            record["event"] = event.as_dict(row) if isinstance(event, ComplexEvent) else row(event)
            if reason is not None:
                record["error"] = reason
        return record


class CliResults(Iterator[dict[str, Any]]):
    """What :func:`run_cli` returns: an iterator of result records (``events``: not counted, None)."""

    events: int | None = None

    def __init__(self, rows: Iterator[Row], stop: Callable[[], None] | None) -> None:
        self._rows = rows
        self._stop = stop

    def __next__(self) -> dict[str, Any]:
        try:
            row = next(self._rows)
        except StopIteration:
            self.close()
            raise
        record: dict[str, Any] = {"kind": row.kind, "key": row.key, "timestamp": row.timestamp}
        record.update(json.loads(row.record))
        return record

    def close(self) -> None:
        """Stop the Spark session if :func:`run_cli` started it."""
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()


def _cli_session() -> tuple[SparkSession, bool]:
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(os.environ.get("FLOWCEP_SPARK_MASTER", "local[*]"))
        .appName("flowcep")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)))
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def run_cli(
    pattern: Any,
    input_path: str,
    fmt: str | None,
    key: str | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str,
    select: Callable[[Any], Any] | None,
    timeout: Callable[[Any], Any] | None = None,
    emit: list[str] | None = None,
    evaluator: str = "nfa",
    partial_match_limit: Any = None,
) -> CliResults:
    """A batch run over one file; yields the CLI's JSON records (docs/spark.md, "The command line").

    Records are ``{"kind", "key", "timestamp"}`` plus what :class:`_CliFormat` writes, ordered by
    timestamp, then key. ``fmt`` is ``csv``, ``jsonl`` or ``parquet``. ``pattern`` may be an event
    hierarchy, whose ``emit`` levels come out (default: the top levels). The session is the active
    one, else a local one (UTC) that is stopped when the iterator is exhausted or closed.
    ``evaluator``: as ``detect``'s; the output carries timeouts, so with a window ``"auto"`` runs
    the NFA and an explicit bounded evaluator is a ``ValueError``.
    """
    evaluator = batch_evaluator(evaluator, pattern, streaming=False, timeouts_out=True)
    spark, own = _cli_session()
    try:
        fmt = (fmt or "").lower()
        if fmt == "csv":
            df = spark.read.option("header", "true").option("inferSchema", "true").csv(input_path)
        elif fmt in ("jsonl", "json", "ndjson"):
            df = spark.read.json(input_path)
        elif fmt == "parquet":
            df = spark.read.parquet(input_path)
        else:
            raise ValueError(f"the spark engine reads csv, jsonl or parquet, not {fmt!r}")
        key_names = [key] if key else None
        check_columns(df, key_names, timestamp)
        delay = duration_ms(out_of_orderness, "out_of_orderness")
        out = build(
            df,
            pattern,
            key_names,
            timestamp,
            delay,
            None,
            "output",
            "format",
            _CliFormat(select, timeout),
            CLI_SCHEMA,
            emit=emit,
            evaluator=evaluator,
            partial_match_limit=partial_match_limit,
        )
        rows = out.orderBy(F.col("timestamp").asc_nulls_first(), F.col("key").asc_nulls_first(), "kind")
        return CliResults(rows.toLocalIterator(), spark.stop if own else None)
    except BaseException:
        if own:
            spark.stop()
        raise
