"""The ``flowcep`` command line.

    flowcep run PATTERN INPUT [--key COL] [--timestamp COL] [--out-of-orderness D]
                              [--format csv|jsonl|parquet] [--engine local|spark] [--output FILE]
                              [--keep-going] [--metrics-port N] [--quiet] [--progress]
                              [--evaluator nfa|optiseq|tree|auto]
    flowcep explain PATTERN [--dot FILE] [--svg FILE] [--png FILE]
                            [--evaluator nfa|optiseq|tree|auto [--input FILE] [--key COL] [--timestamp COL]]
    flowcep demo [--examples DIR]

PATTERN is a Python pattern file or a JSON rule file (``.json``, docs/rules.md). See docs/cli.md
for the details, the output format and the exit statuses.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout, suppress
from pathlib import Path
from typing import IO, Any

from flowcep.cli_support.errors import (
    EXIT_DEPENDENCY,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_PATTERN,
    EXIT_RUNTIME,
    EXIT_USAGE,
    KEEP_GOING_HINT,
    CliError,
)

PROG = "flowcep"
KINDS = ("match", "timeout", "late", "bad_record", "dropped")


# ----------------------------------------------------------------------------- argument parsing


def build_parser() -> argparse.ArgumentParser:
    from flowcep import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Flink CEP for Python: find event patterns in files and streams.",
        epilog="Start with `flowcep demo`. Docs: docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"flowcep {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="match a pattern over an input file, write matches as JSON lines",
        description=(
            "Run the pattern defined in PATTERN (a Python file defining `pattern`, and optionally "
            "`select` and `timeout`) over the events of INPUT, in event time. Matches, timed-out "
            "partial matches and late events are written as JSON lines; a summary goes to stderr."
        ),
    )
    run.add_argument(
        "pattern",
        metavar="PATTERN",
        help="Python file that defines `pattern`, or a JSON rule (docs/rules.md)",
    )
    run.add_argument(
        "input", metavar="INPUT", help="input file (csv, jsonl, parquet; .gz allowed), or - for stdin"
    )
    run.add_argument("--key", "-k", metavar="COL", help="column to key the stream by (default: one stream)")
    run.add_argument(
        "--timestamp",
        "-t",
        metavar="COL",
        default=None,
        help="event-time column: integer milliseconds or ISO-8601 (default: `timestamp`)",
    )
    run.add_argument(
        "--out-of-orderness",
        "-d",
        metavar="D",
        default="0",
        help="how late events may arrive, e.g. 500 (ms), 5s, 2m (default: 0, input in time order)",
    )
    run.add_argument(
        "--format",
        "-f",
        choices=["csv", "jsonl", "parquet"],
        help="input format (default: from the extension)",
    )
    run.add_argument("--engine", choices=["local", "spark"], default="local", help="local (default) or spark")
    run.add_argument("--output", "-o", metavar="FILE", help="write JSON lines to FILE instead of stdout")
    run.add_argument(
        "--evaluator",
        choices=["nfa", "optiseq", "tree", "auto"],
        default="nfa",
        help=(
            "nfa (default), or a bounded-data evaluator that reads the whole input first: optiseq, "
            "tree, or auto (the planner's choice); same matches (docs/bounded.md)"
        ),
    )
    run.add_argument(
        "--keep-going",
        action="store_true",
        help=(
            "write every bad record (invalid JSON or CSV, a missing column, an unparsable timestamp, "
            "a condition that raises) as kind bad_record with its line, and carry on (default: stop there)"
        ),
    )
    run.add_argument(
        "--metrics-port",
        type=int,
        metavar="N",
        help="serve Prometheus metrics at http://0.0.0.0:N/metrics while running (extra flowcep[metrics])",
    )
    run.add_argument(
        "--max-partial-matches-per-key",
        type=int,
        metavar="N",
        help="keep at most N partial matches per key (default: no bound, as Flink); see --on-limit",
    )
    run.add_argument(
        "--max-partial-matches",
        type=int,
        metavar="N",
        help="keep at most N partial matches in all keys (default: no bound, as Flink); see --on-limit",
    )
    run.add_argument(
        "--on-limit",
        choices=["drop_oldest", "drop_newest", "fail"],
        default=None,
        help=(
            "past a partial-match limit: drop the oldest (default) or newest partial matches, "
            "written as kind dropped, or fail"
        ),
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress line and no summary")
    run.add_argument(
        "--progress",
        action="store_true",
        help="show the progress line even when stderr is not a terminal",
    )
    run.set_defaults(func=cmd_run)

    explain = sub.add_parser(
        "explain",
        help="show the compiled NFA of a pattern (text, Graphviz DOT, SVG/PNG)",
        description="Print the states and transitions that PATTERN compiles to, and optionally draw them.",
    )
    explain.add_argument(
        "pattern",
        metavar="PATTERN",
        help="Python file that defines `pattern`, or a JSON rule (docs/rules.md)",
    )
    explain.add_argument(
        "--dot", metavar="FILE", help="write the Graphviz DOT source to FILE (- for stdout: only the DOT)"
    )
    explain.add_argument("--svg", metavar="FILE", help="render an SVG picture with Graphviz's `dot`")
    explain.add_argument("--png", metavar="FILE", help="render a PNG picture with Graphviz's `dot`")
    explain.add_argument(
        "--evaluator",
        choices=["nfa", "optiseq", "tree", "auto"],
        help=(
            "also print the bounded-data plan: start list, direction, tree shape, where each predicate "
            "sits, estimated costs (list sizes from --input; without it, only whether the pattern is served)"
        ),
    )
    explain.add_argument(
        "--input", metavar="FILE", help="events for --evaluator's plan (csv, jsonl, parquet)"
    )
    explain.add_argument("--key", "-k", metavar="COL", help="with --input: plan the largest key's events")
    explain.add_argument(
        "--timestamp", "-t", metavar="COL", default=None, help="with --input: event-time column"
    )
    explain.set_defaults(func=cmd_explain)

    demo = sub.add_parser(
        "demo",
        help="run the bundled examples and show what they find",
        description="Run the examples (stock trends, server alerts, card fraud, a Flink port) on their bundled data.",
    )
    demo.add_argument(
        "--examples", metavar="DIR", help="the examples directory (default: the one next to the package)"
    )
    demo.set_defaults(func=cmd_demo)

    from flowcep.cli_support.sql_command import add_parser as add_sql

    add_sql(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flowcep`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error (already printed)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        status = int(args.func(args))
        _flush_stdout()
        return status
    except CliError as e:
        _error(e.message)
        return e.status
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `flowcep run ... | head`); not an error of ours.
        _silence_stdout()
        return EXIT_OK


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _flush_stdout() -> None:
    """Write out what is buffered for stdout, so that a failed write is reported here, as one
    error line, not by the interpreter at exit."""
    _Output(sys.stdout, "standard output").flush()


def _write_error(name: str, e: OSError) -> CliError:
    return CliError(f"cannot write {name}: {e.strerror or e}", EXIT_RUNTIME)


class _Output:
    """The output of ``flowcep run``: a failed write (a full disk, ``-o /dev/full``) ends the run
    with one error line (a broken pipe is the reader going away: ``main`` handles that)."""

    __slots__ = ("_file", "_name")

    def __init__(self, file: IO[str], name: str) -> None:
        self._file = file
        self._name = name

    def write(self, text: str) -> None:
        try:
            self._file.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from None

    def flush(self) -> None:
        try:
            self._file.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from None

    def _failed(self, e: OSError) -> CliError:
        if self._file is sys.stdout:
            _silence_stdout()  # what could not be written is not tried again at exit
        return _write_error(self._name, e)


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@contextmanager
def _open_output(path: str | None) -> Iterator[_Output]:
    if path is None or path == "-":
        yield _Output(sys.stdout, "standard output")
        return
    try:
        f = open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}", EXIT_USAGE) from None
    try:
        yield _Output(f, path)
    except BaseException:
        with suppress(OSError):  # the first error is the one to report
            f.close()
        raise
    try:
        f.close()
    except OSError as e:
        raise _write_error(path, e) from None


# ----------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    from flowcep.cli_support.inputs import detect_format
    from flowcep.cli_support.loader import compile_pattern, load_pattern_file
    from flowcep.cli_support.timeparse import parse_duration

    try:
        out_of_orderness = parse_duration(args.out_of_orderness, "--out-of-orderness")
    except ValueError as e:
        raise CliError(str(e), EXIT_USAGE) from None
    fmt = detect_format(args.input, args.format)
    limit = _partial_match_limit(args)
    if args.input != "-" and not Path(args.input).exists():
        raise CliError(f"input file not found: {args.input}", EXIT_INPUT)
    pf = load_pattern_file(args.pattern)
    if pf.hierarchy is None:
        compile_pattern(pf.pattern, args.pattern)  # reports an illegal pattern before any input is read
    elif limit is not None:
        raise CliError("partial-match limits work with one pattern, not an event hierarchy", EXIT_USAGE)
    if limit is not None and args.evaluator not in ("nfa", "auto"):
        raise CliError("partial-match limits work with the nfa evaluator only", EXIT_USAGE)

    if args.engine == "spark":
        if args.metrics_port is not None:
            raise CliError("--metrics-port works with --engine local only", EXIT_USAGE)
        if args.evaluator != "nfa":
            from flowcep.runtime.bounded import batch_evaluator

            try:
                batch_evaluator(args.evaluator, pf.pattern, streaming=False, timeouts_out=True)
            except ValueError as e:
                raise CliError(f"--evaluator {args.evaluator}: {e}", EXIT_USAGE) from None
        return _run_spark(args, pf, fmt, out_of_orderness, limit)
    if args.evaluator != "nfa" and pf.hierarchy is not None:
        raise CliError("--evaluator does not run event hierarchies; use the default, nfa", EXIT_USAGE)
    if args.metrics_port is not None and (pf.hierarchy is not None or args.evaluator != "nfa"):
        # what is exported is one CepOperator's stats(), which the NFA fills as it reads
        raise CliError("--metrics-port works with one pattern and the nfa evaluator only", EXIT_USAGE)
    if args.evaluator != "nfa":
        from flowcep.runtime.bounded import nfa_only

        try:
            if nfa_only(
                args.evaluator,
                timeout_handling=pf.timeout is not None,
                processing_time=False,
                comparator=None,
                limited=limit is not None,
            ):
                args.evaluator = "nfa"  # auto, with timeouts to write
            elif args.evaluator != "auto":
                from flowcep.bounded import compile_bounded

                compile_bounded(pf.pattern)
        except ValueError as e:
            raise CliError(f"--evaluator {args.evaluator}: {e}", EXIT_USAGE) from None
    # The command is an application and may tune the collector (flowcep the library leaves it
    # alone): with Python's thresholds a job with much per-key state spends up to half its time
    # in collections that free nothing (docs/runtime.md section 8)
    from flowcep.runtime.gctuning import tuned_gc

    with tuned_gc():
        return _run_local(args, pf, fmt, out_of_orderness, limit)


def _partial_match_limit(args: argparse.Namespace) -> Any:
    """The ``PartialMatchLimit`` of the flags (None: unbounded, as Flink)."""
    from flowcep.runtime.limits import PartialMatchLimit

    if (
        args.on_limit is not None
        and args.max_partial_matches_per_key is None
        and args.max_partial_matches is None
    ):
        raise CliError("--on-limit needs --max-partial-matches-per-key or --max-partial-matches", EXIT_USAGE)
    for flag, value in (
        ("--max-partial-matches-per-key", args.max_partial_matches_per_key),
        ("--max-partial-matches", args.max_partial_matches),
    ):
        if value is not None and value < 1:
            raise CliError(f"{flag} must be at least 1, got {value}", EXIT_USAGE)
    return PartialMatchLimit.of(args.max_partial_matches_per_key, args.max_partial_matches, args.on_limit)


def _make_operator(pattern: Any, key: str | None, out_of_orderness: int, limit: Any = None) -> Any:
    from flowcep.runtime.operator import CepOperator

    key_by = operator.itemgetter(key) if key else None
    # bad records come out in their place among the outputs, with or without --keep-going: the
    # run then stops right there (without), writing nothing that the operator produced after it
    return CepOperator(
        pattern,
        key_by=key_by,
        out_of_orderness=out_of_orderness,
        on_error="side_output",
        partial_match_limit=limit,
    )


class _HierarchyRun:
    """A hierarchy's operator (the one-pass engine when the hierarchy is in its class, else
    ``HierarchyOperator``: ``hierarchy_operator``'s ``"auto"``) where ``flowcep run`` expects a
    ``CepOperator``: the row's parsed timestamp is read again from its column (the hierarchy
    reads it for intervals too), and each output becomes a record with its level and complex
    events as plain values."""

    def __init__(self, plan: Any, key: str | None, ts_col: str, out_of_orderness: int) -> None:
        from flowcep.cli_support.timeparse import parse_timestamp
        from flowcep.hierarchy import hierarchy_operator

        self.operator = hierarchy_operator(
            plan,
            key_by=key,
            timestamp=lambda row: parse_timestamp(row[ts_col]),
            out_of_orderness=out_of_orderness,
            emit=[level.name for level in plan.levels],
            on_error="side_output",
        )

    def process_element(self, record: Any, timestamp: int | None = None) -> list[Any]:
        return [_LevelRecord(o) for o in self.operator.process_element(record)]

    def flush(self) -> list[Any]:
        return [_LevelRecord(o) for o in self.operator.flush()]


class _LevelRecord:
    """A hierarchy's output as ``_output_record`` reads it (kind, key, value, timestamp, level)."""

    __slots__ = ("kind", "key", "value", "timestamp", "level")

    def __init__(self, o: Any) -> None:
        from flowcep.hierarchy.event import plain_match

        self.kind, self.key, self.timestamp, self.level = o.kind, o.key, o.timestamp, o.level
        if o.kind == "match":
            self.value = o.value.as_dict()
        elif o.kind == "timeout":
            self.value = plain_match(o.value)
        else:
            self.value = o.value


def _make_hierarchy_operator(plan: Any, key: str | None, ts_col: str, out_of_orderness: int) -> _HierarchyRun:
    return _HierarchyRun(plan, key, ts_col, out_of_orderness)


def _run_local(args: argparse.Namespace, pf: Any, fmt: str, out_of_orderness: int, limit: Any) -> int:
    key_col: str | None = args.key
    ts_col: str = args.timestamp or "timestamp"
    if pf.hierarchy is not None:
        op = _make_hierarchy_operator(pf.hierarchy, key_col, ts_col, out_of_orderness)
    else:
        op = _make_operator(pf.pattern, key_col, out_of_orderness, limit)
    # the pattern's RichIterativeConditions (every level's) open before the first row and close
    # after the run, as in a Flink job
    matcher = op.operator if isinstance(op, _HierarchyRun) else op
    with matcher:
        return _run_operator(args, pf, op, fmt, out_of_orderness)


def _run_operator(args: argparse.Namespace, pf: Any, op: Any, fmt: str, out_of_orderness: int) -> int:
    from flowcep.cli_support.inputs import BadRow, ReadProgress, read_batches
    from flowcep.cli_support.output import ProgressLine, dumps, result_line, summary_line
    from flowcep.cli_support.timeparse import parse_timestamp
    from flowcep.runtime.output import Output

    key_col: str | None = args.key
    ts_col: str = args.timestamp or "timestamp"
    keep_going: bool = args.keep_going
    process, flush = _serve_metrics(op, args.metrics_port)
    # a bounded evaluator reads everything first (None: the NFA matches as it reads)
    bounded: list[tuple[Any, int]] | None = [] if args.evaluator != "nfa" else None
    counts = dict.fromkeys(KINDS, 0)
    read_progress = ReadProgress()
    show_progress = not args.quiet and (args.progress or sys.stderr.isatty())
    progress = ProgressLine(enabled=show_progress, delay=0.0 if args.progress else 1.0)
    select, timeout = pf.select, pf.timeout
    events = 0
    started = time.perf_counter()
    input_name = "<stdin>" if args.input == "-" else args.input
    line: int | None = 0  # where reading is: a line/row number, 0 before the first, None at the end

    def at_line(n: int) -> str:
        return f"{input_name}: {'line' if read_progress.unit == 'bytes' else 'row'} {n}"

    def where() -> str:
        if line is None:
            return "the end of the input"
        if not line:
            return "the start of the input"
        return at_line(line)

    with _open_output(args.output) as out:
        write = out.write

        # what a match or timeout is written as without select or timeout ("": a function)
        plain = {"match": "" if select else "match", "timeout": "" if timeout else "match"}

        def emit(outputs: list[Any]) -> None:
            lines: list[str] = []  # written at once, also when an output stops the run
            try:
                for o in outputs:
                    kind = o.kind
                    if type(o) is Output and plain.get(kind) and type(o.value) is dict:
                        counts[kind] += 1
                        lines.append(result_line(kind, o.key, o.timestamp, "match", o.value))
                        continue
                    if kind == "bad_record" and not keep_going:
                        raise _bad_record_error(o.value, at_line)
                    record = _output_record(o, select, timeout, where)
                    counts[record["kind"]] += 1
                    lines.append(dumps(record) + "\n")
            finally:
                if lines:
                    write("".join(lines))

        def bad_input(n: int, value: Any, reason: str, message: str) -> None:
            """A line that never reaches the operator: a bad_record, or (without --keep-going)
            the end of the run."""
            if not keep_going:
                raise CliError(message + KEEP_GOING_HINT, EXIT_INPUT)
            counts["bad_record"] += 1
            record = {"kind": "bad_record", "key": None, "timestamp": None, "line": n}
            record["event"] = value
            record["error"] = reason
            write(dumps(record) + "\n")

        try:
            last_raw_ts: Any = object()  # rows in time order often share a timestamp: parse it once
            ts = 0
            for lines, items in read_batches(args.input, fmt or None, read_progress, bad_rows=keep_going):
                for line, record in zip(lines, items):
                    if type(record) is BadRow:
                        bad_input(line, record.value, record.reason, "")  # (bad_rows: only with --keep-going)
                        continue
                    if ts_col not in record or (key_col and key_col not in record):
                        what, details = _missing_column(
                            record, key_col, ts_col, explicit_ts=args.timestamp is not None
                        )
                        bad_input(line, record, f"{what} {details}", f"{what} at {at_line(line)} {details}")
                        continue
                    raw_ts = record[ts_col]
                    if type(raw_ts) is int:
                        ts = raw_ts
                    elif raw_ts != last_raw_ts or type(raw_ts) is not type(last_raw_ts):
                        try:
                            ts = parse_timestamp(raw_ts)
                        except ValueError as e:
                            what = f"column {ts_col!r}: {e}"
                            bad_input(
                                line,
                                record,
                                f"unparsable timestamp: {what}",
                                f"unparsable timestamp at {where()}: {what}",
                            )
                            continue
                        last_raw_ts = raw_ts
                    events += 1
                    if bounded is not None:
                        bounded.append((record, ts))
                        continue
                    try:
                        outputs = process(record, ts)
                    except Exception as e:
                        raise _matching_error(e, where()) from e
                    if outputs:
                        emit(outputs)
                    if not events & 1023:
                        progress.update(events, counts, read_progress)
            line = None
            if bounded is not None:
                emit(_run_bounded(op, bounded, args.evaluator, key_col, out_of_orderness, where))
            try:
                outputs = flush(op)
            except Exception as e:
                raise _matching_error(e, where()) from e
            emit(outputs)
            out.flush()
        finally:
            progress.clear()

    elapsed = time.perf_counter() - started
    if not args.quiet:
        print(summary_line(events, elapsed, counts), file=sys.stderr)
    return EXIT_OK


def _serve_metrics(op: Any, port: int | None) -> tuple[Callable[..., Any], Callable[[Any], list[Any]]]:
    """The operator's process and flush calls; with a port, they hold the lock that a scrape of
    the Prometheus endpoint served there takes to read ``stats()``."""
    if port is None:
        return op.process_element, _flush_warning_plainly
    try:
        from flowcep.runtime.metrics import OperatorMetrics, serve_prometheus

        metrics = OperatorMetrics(op)
        serve_prometheus(metrics, port)
    except ImportError as e:
        raise CliError(
            f"--metrics-port needs prometheus-client: pip install 'flowcep[metrics]' ({e})", EXIT_DEPENDENCY
        ) from None
    except OSError as e:
        raise CliError(
            f"--metrics-port {port}: cannot serve metrics there: {e.strerror or e}", EXIT_USAGE
        ) from None
    lock = metrics.lock

    def process(event: Any, timestamp: int) -> list[Any]:
        with lock:
            return op.process_element(event, timestamp)  # type: ignore[no-any-return]

    def flush(op: Any) -> list[Any]:
        with lock:
            return _flush_warning_plainly(op)

    return process, flush


def _run_bounded(
    op: Any, rows: list[tuple[Any, int]], evaluator: str, key: str | None, out_of_orderness: int, where: Any
) -> list[Any]:
    """The outputs of a bounded evaluator over all ``rows`` (record, timestamp); the rows go
    through the operator instead when only the NFA can serve them (runtime/bounded.py)."""
    from flowcep.runtime.bounded import bounded_outputs

    stamps = {id(record): ts for record, ts in rows}
    try:
        outputs = bounded_outputs(
            [record for record, _ in rows],
            op.pattern,
            evaluator,
            key_by=operator.itemgetter(key) if key else None,
            timestamp=lambda record: stamps[id(record)],
            out_of_orderness=out_of_orderness,
        )
        if outputs is not None:
            return outputs
        outputs = []
        for record, ts in rows:
            outputs.extend(op.process_element(record, timestamp=ts))
        return outputs
    except Exception as e:
        raise _matching_error(e, where()) from e


def _flush_warning_plainly(op: Any) -> list[Any]:
    """``op.flush()``; its warning of matches that never came out is a ``flowcep: warning:`` line."""
    from flowcep.runtime.output import HeldBackMatchesWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HeldBackMatchesWarning)
        outputs: list[Any] = op.flush()
    for w in caught:
        if issubclass(w.category, HeldBackMatchesWarning):
            print(f"{PROG}: warning: {w.message}", file=sys.stderr)
        else:  # someone else's: as it would have been shown
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return outputs


def _missing_column(record: Any, key_col: str | None, ts_col: str, explicit_ts: bool) -> tuple[str, str]:
    """What is wrong with the columns of ``record``, which lacks the timestamp's or the key's:
    ``missing column 'x'``, and the columns it has, with a hint."""
    columns = ", ".join(map(str, record)) or "none"
    if ts_col not in record:
        hint = "" if explicit_ts else "; name the event-time column with --timestamp COL"
        return f"missing column {ts_col!r}", f"(columns: {columns}){hint}"
    return f"missing column {key_col!r} (--key)", f"(columns: {columns})"


def _bad_record_error(bad: Any, at_line: Callable[[int], str]) -> CliError:
    """The error that stops a run (without --keep-going) at a record the operator rejected: at
    the record's own line, which may have been read long before it was matched."""
    from flowcep.cli_support.records import source_line
    from flowcep.runtime.output import describe

    n = source_line(bad.record)
    location = "" if n is None else f" at {at_line(n)}"
    return CliError(f"matching failed{location}: {describe(bad)}{KEEP_GOING_HINT}", EXIT_RUNTIME)


def _matching_error(e: BaseException, location: str) -> CliError:
    return CliError(f"matching failed at {location}: {type(e).__name__}: {e}", EXIT_RUNTIME)


def _output_record(
    o: Any,
    select: Callable[[Any], Any] | None,
    timeout: Callable[[Any], Any] | None,
    where: Callable[[], str],
) -> dict[str, Any]:
    kind = o.kind
    kind = getattr(kind, "value", kind)
    kind = str(kind).lower()
    record: dict[str, Any] = {"kind": kind, "key": o.key, "timestamp": o.timestamp}
    level = getattr(o, "level", None)
    if level is not None:  # an event hierarchy's output: the level it comes from ("" for raw events)
        record["level"] = level
    value = o.value
    if kind == "match":
        if select is not None:
            record["value"] = _call_user(select, value, "select", where)
        else:
            record["match"] = value
    elif kind == "timeout":
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], dict):
            value = value[0]
        if timeout is not None:
            record["value"] = _call_user(timeout, value, "timeout", where)
        else:
            record["match"] = value
    elif kind == "bad_record":
        from flowcep.cli_support.records import source_line

        event, error = _split_bad_record(value)
        record["line"] = source_line(event)
        record["event"] = event
        record["error"] = error
    elif kind == "dropped":  # flowcep.runtime.limits.DroppedPartialMatch
        record["match"] = value.match
        record["start_timestamp"] = value.start_timestamp
        record["limit"] = value.limit
    else:
        record["event"] = value
    return record


def _split_bad_record(value: Any) -> tuple[Any, str]:
    record = getattr(value, "record", None)
    error = getattr(value, "error", None)
    if record is not None and isinstance(error, str):  # flowcep.runtime.output.BadRecord
        step = getattr(value, "step", None)
        stage = getattr(value, "stage", None)
        where = f"pattern step {step!r}" if step else f"{stage} stage" if stage else ""
        return record, f"{error} (at {where})" if where else error
    if isinstance(value, tuple) and len(value) == 2:
        event, error = value
        return event, error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    for ev_attr, err_attr in (("event", "error"), ("element", "error"), ("event", "exception")):
        if hasattr(value, ev_attr) and hasattr(value, err_attr):
            err = getattr(value, err_attr)
            return getattr(value, ev_attr), err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    return value, ""


def _call_user(fn: Callable[[Any], Any], value: Any, name: str, where: Callable[[], str]) -> Any:
    try:
        return fn(value)
    except Exception as e:
        raise CliError(
            f"{name}() raised {type(e).__name__}: {e} (on a result ready at {where()})", EXIT_RUNTIME
        ) from e


def _run_spark(args: argparse.Namespace, pf: Any, fmt: str, out_of_orderness: int, limit: Any) -> int:
    from flowcep.cli_support.output import dumps, summary_line

    if args.input == "-":
        raise CliError("--engine spark reads files, not standard input; pass a file name", EXIT_USAGE)
    hint = "the spark engine needs pyspark, which is not installed: pip install flowcep[spark]"
    try:
        from flowcep.cli_support.spark_engine import run_cli
    except ImportError as e:
        if (e.name or "").startswith("flowcep"):
            raise CliError(f"this flowcep has no spark connector ({e})", EXIT_DEPENDENCY) from None
        raise CliError(f"{hint} ({e})", EXIT_DEPENDENCY) from None
    counts = dict.fromkeys(KINDS, 0)
    started = time.perf_counter()
    with _open_output(args.output) as out:
        try:
            hierarchy = pf.hierarchy
            results = run_cli(
                pf.pattern if hierarchy is None else hierarchy,
                args.input,
                fmt,
                args.key,
                args.timestamp or "timestamp",
                out_of_orderness,
                _jsonable_select(pf.select),
                _jsonable_select(pf.timeout),
                # every level, as the local engine writes them
                emit=None if hierarchy is None else [level.name for level in hierarchy.levels],
                evaluator=args.evaluator,
                partial_match_limit=limit,
            )
            for item in results:
                kind = str(item.get("kind", "match")) if isinstance(item, dict) else "match"
                counts[kind] = counts.get(kind, 0) + 1
                out.write(dumps(item))
                out.write("\n")
        except ImportError as e:
            raise CliError(f"{hint} ({e})", EXIT_DEPENDENCY) from None
        except CliError:
            raise
        except Exception as e:
            status = EXIT_INPUT if str(e).startswith("missing column") else EXIT_RUNTIME
            raise CliError(f"the spark engine failed: {type(e).__name__}: {e}", status) from e
    if not args.quiet:
        seconds = time.perf_counter() - started
        events = getattr(results, "events", None)
        if events is not None:
            line = summary_line(events, seconds, counts).replace("flowcep:", "flowcep (spark):", 1)
        else:  # the connector does not count input rows
            line = summary_line(0, seconds, counts).split(": ", 2)[2]
            line = f"flowcep (spark): {seconds:.2f} s: {line}"
        print(line, file=sys.stderr)
    return EXIT_OK


def _jsonable_select(select: Callable[[Any], Any] | None) -> Callable[[Any], Any] | None:
    """``select`` whose result is plain JSON data, converted as the local engine converts it
    (dataclasses, attrs classes and named tuples to objects, datetimes to ISO text...)."""
    if select is None:
        return None
    return functools.partial(_select_as_json, select)


def _select_as_json(select: Callable[[Any], Any], match: Any) -> Any:
    from flowcep.cli_support.output import dumps

    return json.loads(dumps(select(match)))


# ----------------------------------------------------------------------------- explain


def cmd_explain(args: argparse.Namespace) -> int:
    from flowcep.cli_support.explain import (
        explain_dot,
        explain_hierarchy_dot,
        explain_hierarchy_text,
        explain_text,
        render_dot,
    )
    from flowcep.cli_support.loader import compile_pattern, load_pattern_file

    pf = load_pattern_file(args.pattern)
    title = str(args.pattern)
    out = _Output(sys.stdout, "standard output")
    if pf.hierarchy is not None:
        text, dot = explain_hierarchy_text(pf.hierarchy, title), explain_hierarchy_dot(pf.hierarchy, title)
    else:
        nfa = compile_pattern(pf.pattern, args.pattern)
        text, dot = explain_text(nfa, pf.pattern, title), explain_dot(nfa, title)
    if args.dot != "-":  # with --dot -, stdout is only the DOT: `flowcep explain p.py --dot - | dot -Tsvg`
        out.write(text)
    if args.evaluator:
        if pf.hierarchy is not None:
            raise CliError("--evaluator does not explain event hierarchies", EXIT_USAGE)
        out.write(_bounded_plan(pf.pattern, args) + "\n")
    if not (args.dot or args.svg or args.png):
        return EXIT_OK
    if args.dot == "-":
        out.write(dot)
    elif args.dot:
        try:
            Path(args.dot).write_text(dot, encoding="utf-8")
        except OSError as e:
            raise CliError(f"cannot write {args.dot}: {e.strerror}", EXIT_USAGE) from None
        print(f"wrote {args.dot}", file=sys.stderr)
    for fmt, path in (("svg", args.svg), ("png", args.png)):
        if path:
            render_dot(dot, path, fmt)
            print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


def _bounded_plan(pattern: Any, args: argparse.Namespace) -> str:
    """``explain --evaluator``: the planner's account, over --input's largest key if given."""
    from flowcep.bounded import UnsupportedPattern, plan, support

    if not args.input:
        feature = support(pattern)
        served = (
            "served by optiseq and tree" if feature is None else f"not served by optiseq and tree: {feature}"
        )
        return f"bounded evaluators: {served} (give --input for the plan)"
    from flowcep.cli_support.inputs import ReadProgress, detect_format, read_rows
    from flowcep.cli_support.timeparse import parse_timestamp

    ts_col = args.timestamp or "timestamp"
    by_key: dict[Any, list[tuple[Any, int]]] = {}
    for _, record in read_rows(
        args.input, detect_format(args.input, None) or None, ReadProgress(), bad_rows=False
    ):
        try:
            ts = parse_timestamp(record[ts_col])
            key = record[args.key] if args.key else None
        except (KeyError, TypeError, ValueError) as e:
            raise CliError(f"--input {args.input}: {e}", EXIT_INPUT) from None
        by_key.setdefault(key, []).append((record, ts))
    rows = max(by_key.values(), key=len, default=[])
    rows.sort(key=lambda r: r[1])
    try:
        chosen = plan(pattern, [r for r, _ in rows], [t for _, t in rows], args.evaluator, detailed=True)
    except UnsupportedPattern as e:
        raise CliError(f"--evaluator {args.evaluator}: {e}", EXIT_USAGE) from None
    return f"bounded plan over {len(rows):,} events:\n{chosen.explain()}"


# ----------------------------------------------------------------------------- demo


def cmd_demo(args: argparse.Namespace) -> int:
    from flowcep.cli_support.demo import run_demo

    # its print()s through _Output: a stdout that cannot be written is one error line
    with redirect_stdout(_Output(sys.stdout, "standard output")):  # type: ignore[type-var]  # (write, flush)
        return run_demo(args.examples)


__all__ = [
    "EXIT_DEPENDENCY",
    "EXIT_INPUT",
    "EXIT_OK",
    "EXIT_PATTERN",
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "build_parser",
    "main",
]

if __name__ == "__main__":
    sys.exit(main())
