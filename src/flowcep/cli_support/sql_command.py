"""``flowcep sql QUERY-FILE INPUT``: a MATCH_RECOGNIZE query over a file, result rows as JSON lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flowcep.cli_support.errors import (
    EXIT_DEPENDENCY,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_PATTERN,
    EXIT_RUNTIME,
    CliError,
)
from flowcep.cli_support.inputs import BadRow, read_rows
from flowcep.cli_support.output import dumps
from flowcep.cli_support.timeparse import parse_duration, parse_timestamp


def add_parser(sub: Any) -> None:
    sql = sub.add_parser(
        "sql",
        help="run a MATCH_RECOGNIZE query over an input file, write result rows as JSON lines",
        description=(
            "Run the query in QUERY-FILE (SELECT ... FROM t MATCH_RECOGNIZE (...), Flink SQL's "
            "syntax, docs/sql.md) over the rows of INPUT; the table name is not looked up. The first "
            "ORDER BY column is the event time (integer milliseconds or ISO-8601). One JSON line per "
            "result row."
        ),
    )
    sql.add_argument("query", metavar="QUERY-FILE", help="file holding the query")
    sql.add_argument(
        "input", metavar="INPUT", help="input file (csv, jsonl, parquet; .gz allowed), or - for stdin"
    )
    sql.add_argument(
        "--format",
        "-f",
        choices=["csv", "jsonl", "parquet"],
        help="input format (default: from the extension)",
    )
    sql.add_argument(
        "--out-of-orderness",
        "-d",
        metavar="D",
        default="0",
        help="how late rows may arrive, e.g. 500 (ms), 5s (default: 0); later rows are dropped, as Flink SQL does",
    )
    sql.add_argument("--output", "-o", metavar="FILE", help="write JSON lines to FILE instead of stdout")
    sql.set_defaults(func=cmd_sql)


def cmd_sql(args: argparse.Namespace) -> int:
    try:
        from flowcep.sql import SqlError, plan
    except ImportError as exc:
        raise CliError(str(exc), EXIT_DEPENDENCY) from exc
    try:
        text = Path(args.query).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {args.query}: {exc.strerror or exc}", EXIT_PATTERN) from exc
    try:
        compiled = plan(text)
        delay = parse_duration(args.out_of_orderness)
    except SqlError as exc:
        raise CliError(f"{args.query}: {exc}", EXIT_PATTERN) from exc
    except ValueError as exc:
        raise CliError(f"--out-of-orderness: {exc}", EXIT_INPUT) from exc
    time_column = compiled.query.time_column
    from flowcep.runtime import CEP

    stream = CEP.pattern(
        _rows(args.input, args.format, time_column),
        compiled.pattern,
        key_by=compiled.key,
        timestamp=compiled.timestamp,
        out_of_orderness=delay,
        comparator=compiled.comparator,
    )
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    try:
        for row in stream.select(compiled.result):
            out.write(dumps(row) + "\n")
    except CliError:
        raise
    except Exception as exc:  # a condition or measure raised on a row: name it
        raise CliError(f"matching failed: {exc}", EXIT_RUNTIME) from exc
    finally:
        if out is not sys.stdout:
            out.close()
    return EXIT_OK


def _rows(path: str, fmt: str | None, time_column: str) -> Iterator[Any]:
    for line, record in read_rows(path, fmt):
        if isinstance(record, BadRow):
            raise CliError(f"{path}: line {line}: {record}", EXIT_INPUT)
        if time_column not in record:
            raise CliError(
                f"{path}: line {line}: no column {time_column!r} (the ORDER BY time column)", EXIT_INPUT
            )
        try:
            record[time_column] = parse_timestamp(record[time_column])
        except ValueError as exc:
            raise CliError(
                f"{path}: line {line}: unparsable timestamp in {time_column!r}: {exc}", EXIT_INPUT
            ) from exc
        yield record
