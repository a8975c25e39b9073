"""Reading events from CSV, JSON lines or Parquet files (or standard input).

Every row comes out as a :class:`Record` together with its location (the line number in a
text file, the row number in a Parquet file), so that errors can say where the bad row is; the
record keeps it too (``source_line``), for errors met when it is matched.

A line that is no record (invalid JSON, a CSV row of the wrong width, text that is not UTF-8)
stops the reading with a :class:`CliError`, or, with ``bad_rows=True``, comes out as a
:class:`BadRow` in its place and reading goes on (``flowcep run --keep-going``).

CSV cells are typed the obvious way: ``42`` becomes an int, ``3.5`` a float, an empty cell
``None``; everything else stays a string (``007`` too, so identifiers keep their zeros).
JSON lines keep the types JSON gives them.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_INPUT, KEEP_GOING_HINT, CliError
from flowcep.cli_support.records import Record, set_source_line

FORMATS = ("csv", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_INT_RE = re.compile(r"-?(?:0|[1-9]\d*)")
_NUMERIC_START = frozenset("-.0123456789")
_FLOAT_RE = re.compile(r"-?(?:0|[1-9]\d*)?\.\d+(?:[eE][-+]?\d+)?|-?(?:0|[1-9]\d*)(?:\.\d*)?[eE][-+]?\d+")


@dataclass
class ReadProgress:
    """How far reading has got; ``total`` is None when unknown (stdin, compressed input)."""

    done: int = 0
    total: int | None = None
    unit: str = "bytes"

    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


@dataclass(frozen=True)
class BadRow:
    """A line that is no record: what could be read of it (the text, the cells, the JSON value)
    and what is wrong with it."""

    value: Any
    reason: str


def detect_format(path: str, fmt: str | None) -> str:
    """The input format: ``fmt`` if given, else from the file name's extension."""
    if fmt:
        fmt = fmt.lower()
        if fmt == "json" or fmt == "ndjson":
            fmt = "jsonl"
        if fmt not in FORMATS:
            raise CliError(f"unknown input format {fmt!r}; use one of: {', '.join(FORMATS)}", EXIT_INPUT)
        return fmt
    name = path.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if path == "-":
        return ""  # sniffed from the first line
    raise CliError(
        f"cannot tell the format of {path!r} from its name; pass --format csv, jsonl or parquet", EXIT_INPUT
    )


def convert_cell(text: str) -> Any:
    """Type a CSV cell: int, float, None for an empty cell, else the string itself."""
    if not text:
        return None
    if text[0] in _NUMERIC_START:
        if _INT_RE.fullmatch(text):
            return int(text)
        if _FLOAT_RE.fullmatch(text):
            return float(text)
    return text


def read_rows(
    path: str | Path, fmt: str | None = None, progress: ReadProgress | None = None, bad_rows: bool = False
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_or_row_number, Record)`` for every row of ``path`` (``"-"`` = stdin).

    Raises :class:`CliError` (exit status 4, or 5 when pyarrow is missing for parquet) with the
    file and line in the message when the input cannot be read; with ``bad_rows``, a line that
    is no record comes out as ``(line, BadRow)`` instead, and reading goes on (a file that
    cannot be opened, or a CSV header that cannot be read, still raises).
    """
    path = str(path)
    fmt = detect_format(path, fmt)
    progress = progress if progress is not None else ReadProgress()
    if fmt == "parquet":
        yield from _read_parquet(path, progress)
        return
    with _open_binary(path, progress) as raw:
        undecodable: list[tuple[int, BadRow]] | None = [] if bad_rows else None
        lines = _decoded_lines(raw, path, progress, undecodable)
        if not fmt:
            first = next(lines, None)
            if first is None:
                return
            fmt = "jsonl" if first.lstrip().startswith("{") else "csv"
            lines = _chain_first(first, lines)
        rows = _read_csv(lines, path, bad_rows) if fmt == "csv" else _read_jsonl(lines, path, bad_rows)
        if undecodable is None:
            yield from rows
            return
        for row in rows:
            if undecodable:  # lines before this row that were not UTF-8
                yield from undecodable
                undecodable.clear()
            yield row
        yield from undecodable


def read_events(path: str | Path, fmt: str | None = None) -> list[Record]:
    """All rows of a file as a list of :class:`Record` (a convenience for scripts and examples)."""
    return [record for _, record in read_rows(path, fmt)]


def _chain_first(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


class _Counting(io.RawIOBase):
    """A binary reader that counts the bytes taken from the file, for the progress line."""

    def __init__(self, inner: IO[bytes], progress: ReadProgress) -> None:
        self.inner = inner
        self.progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.progress.done += n
        return n


def _open_binary(path: str, progress: ReadProgress) -> IO[bytes]:
    if path == "-":
        progress.total = None
        return io.BufferedReader(_Counting(sys.stdin.buffer, progress))  # type: ignore[arg-type]
    p = Path(path)
    if not p.exists():
        raise CliError(f"input file not found: {path}", EXIT_INPUT)
    if p.is_dir():
        raise CliError(f"input is a directory, not a file: {path}", EXIT_INPUT)
    try:
        f = open(p, "rb")  # noqa: SIM115 - closed by the caller's with-block
    except OSError as e:
        raise CliError(f"cannot open {path}: {e.strerror}", EXIT_INPUT) from e
    if path.lower().endswith(".gz"):
        progress.total = None
        return gzip.GzipFile(fileobj=io.BufferedReader(_Counting(f, progress)))  # type: ignore[return-value]
    progress.total = p.stat().st_size
    return io.BufferedReader(_Counting(f, progress))


def _decoded_lines(
    raw: IO[bytes], path: str, progress: ReadProgress, undecodable: list[tuple[int, BadRow]] | None
) -> Iterator[str]:
    """The lines of ``raw`` as text. A line that is not UTF-8 raises, or with ``undecodable``
    (a list) is put there as a bad row and read as a blank line, which the readers skip."""
    line_no = 0
    for line in raw:
        line_no += 1
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = BadRow(line.decode("utf-8", "replace").rstrip("\r\n"), f"not UTF-8 text ({e.reason})")
            if undecodable is None:
                _reject(path, line_no, bad, False)  # raises
            else:
                undecodable.append((line_no, bad))
            yield "\n"
            continue
        if line_no == 1 and text.startswith("\ufeff"):
            text = text[1:]  # byte-order mark
        yield text


def _where(path: str, line: int, what: str = "line") -> str:
    name = "<stdin>" if path == "-" else path
    return f"{name}: {what} {line}"


def _reject(path: str, line: int, bad: BadRow, bad_rows: bool) -> BadRow:
    """``bad``, to yield in the line's place with ``bad_rows``; else the error that stops reading."""
    if not bad_rows:
        raise CliError(f"{_where(path, line)}: {bad.reason}{KEEP_GOING_HINT}", EXIT_INPUT)
    return bad


def _read_csv(lines: Iterable[str], path: str, bad_rows: bool) -> Iterator[tuple[int, Any]]:
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as e:
        raise CliError(f"{_where(path, reader.line_num)}: bad CSV header: {e}", EXIT_INPUT) from None
    header = [h.strip() for h in header]
    if not any(header):
        raise CliError(f"{_where(path, 1)}: the CSV file has an empty header line", EXIT_INPUT)
    width = len(header)
    convert = convert_cell
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            yield reader.line_num, _reject(path, reader.line_num, BadRow(None, f"bad CSV: {e}"), bad_rows)
            continue
        if not cells:
            continue  # blank line
        line_no = reader.line_num
        if len(cells) != width:
            reason = f"{len(cells)} cells, but the header has {width} columns"
            yield line_no, _reject(path, line_no, BadRow(cells, reason), bad_rows)
            continue
        record = Record(zip(header, map(convert, cells)))  # widths checked above
        set_source_line(record, line_no)
        yield line_no, record


def _read_jsonl(lines: Iterable[str], path: str, bad_rows: bool) -> Iterator[tuple[int, Any]]:
    loads = json.loads
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except json.JSONDecodeError as e:
            bad = BadRow(line.rstrip("\r\n"), f"not valid JSON ({e.msg}, column {e.colno})")
            yield line_no, _reject(path, line_no, bad, bad_rows)
            continue
        if not isinstance(obj, dict):
            bad = BadRow(obj, f"expected a JSON object per line, got {type(obj).__name__}")
            yield line_no, _reject(path, line_no, bad, bad_rows)
            continue
        record = Record(obj)
        set_source_line(record, line_no)
        yield line_no, record


def _read_parquet(path: str, progress: ReadProgress) -> Iterator[tuple[int, Record]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CliError(
            "reading parquet needs pyarrow, which is not installed: pip install pyarrow", EXIT_DEPENDENCY
        ) from None
    if path == "-":
        raise CliError("parquet cannot be read from standard input; pass a file name", EXIT_INPUT)
    if not Path(path).exists():
        raise CliError(f"input file not found: {path}", EXIT_INPUT)
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own ArrowInvalid / OSError types
        raise CliError(f"{path}: not a readable parquet file ({e})", EXIT_INPUT) from None
    progress.total = pf.metadata.num_rows
    progress.unit = "rows"
    row = 0
    for batch in pf.iter_batches(batch_size=8192):
        for obj in batch.to_pylist():
            row += 1
            progress.done = row
            record = Record(obj)
            set_source_line(record, row)
            yield row, record
