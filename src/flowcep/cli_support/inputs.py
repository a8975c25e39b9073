"""Reading events from CSV, JSON lines or Parquet files (or standard input).

Every row comes out as a :class:`Record` together with its location (the line number in a
text file, the row number in a Parquet file), so that errors can say where the bad row is; the
record keeps it too (``source_line``), for errors met when it is matched.

A line that is no record (invalid JSON, a CSV row of the wrong width, text that is not UTF-8)
stops the reading with a :class:`CliError`, or, with ``bad_rows=True``, comes out as a
:class:`BadRow` in its place and reading goes on (``flowcep run --keep-going``).

CSV cells are typed the obvious way: ``42`` becomes an int, ``3.5`` a float, an empty cell
``None``; everything else stays a string (``007`` too, so identifiers keep their zeros;
celltypes.py). JSON lines keep the types JSON gives them.

The file is read in pieces of whole lines (``read_batches`` yields the rows of each piece as a
list), so that the work per row is done a piece at a time: decoding, typing a CSV column,
making the records. A large CSV file is parsed by pyarrow when it is installed (arrowcsv.py),
as long as its lines are plain rows; from the first line that is not, the standard library's
``csv`` module reads on. From standard input, a piece is what has arrived, so rows are not held
back waiting for more.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO, Any

from flowcep.cli_support.celltypes import convert_cell, convert_column
from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_INPUT, KEEP_GOING_HINT, CliError
from flowcep.cli_support.records import Record, record_maker, set_source_line

FORMATS = ("csv", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
PIECE_BYTES = 64 << 10  # read, decoded and typed at a time; PyPy's nursery holds its records
ARROW_PIECE_BYTES = 1 << 20  # parsed by pyarrow at a time (a call costs more than its rows, there)
# pyarrow takes a moment to import: it reads only files at least this large
ARROW_MIN_BYTES = 8 << 20

# the line (or row) numbers, and the Record or BadRow of each, in the file's order
Batch = tuple[Sequence[int], list[Any]]

__all__ = [
    "FORMATS",
    "BadRow",
    "ReadProgress",
    "convert_cell",
    "detect_format",
    "read_batches",
    "read_events",
    "read_rows",
]


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


def read_rows(
    path: str | Path, fmt: str | None = None, progress: ReadProgress | None = None, bad_rows: bool = False
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_or_row_number, Record)`` for every row of ``path`` (``"-"`` = stdin).

    Raises :class:`CliError` (exit status 4, or 5 when pyarrow is missing for parquet) with the
    file and line in the message when the input cannot be read; with ``bad_rows``, a line that
    is no record comes out as ``(line, BadRow)`` instead, and reading goes on (a file that
    cannot be opened, or a CSV header that cannot be read, still raises). Every row before a
    bad line comes out before the error is raised.
    """
    return chain.from_iterable(
        zip(lines, items) for lines, items in read_batches(path, fmt, progress, bad_rows)
    )


def read_events(path: str | Path, fmt: str | None = None) -> list[Record]:
    """All rows of a file as a list of :class:`Record` (a convenience for scripts and examples)."""
    return [record for _, record in read_rows(path, fmt)]


def read_batches(
    path: str | Path,
    fmt: str | None = None,
    progress: ReadProgress | None = None,
    bad_rows: bool = False,
    arrow: bool | None = None,
) -> Iterator[Batch]:
    """``read_rows``, a piece of the input at a time: ``(lines, items)``, the line (or row)
    numbers and the Record or BadRow of each.

    ``arrow``: parse CSV with pyarrow (True), or not (False); None: when it is installed and
    the file is at least ``ARROW_MIN_BYTES`` large.
    """
    path = str(path)
    fmt = detect_format(path, fmt)
    progress = progress if progress is not None else ReadProgress()
    if fmt == "parquet":
        yield from _read_parquet(path, progress)
        return
    with _open_binary(path, progress) as raw:
        if fmt == "csv" and _use_arrow(arrow, path, progress):
            yield from _read_csv_arrow(_pieces(raw, False, ARROW_PIECE_BYTES), path, bad_rows)
            return
        pieces = _pieces(raw, path == "-", PIECE_BYTES)
        undecodable: deque[tuple[int, BadRow]] = deque()
        texts = _decoded(pieces, path, 0, undecodable)
        if not fmt:
            first = next(texts, None)
            if first is None:
                return
            first_line = first[: first.find("\n") + 1 or None]
            fmt = "jsonl" if first_line.lstrip().startswith("{") else "csv"
            texts = chain([first], texts)
        if fmt == "csv":
            yield from _read_csv(texts, path, bad_rows, undecodable)
        else:
            yield from _read_jsonl(texts, path, bad_rows, undecodable)


def _use_arrow(arrow: bool | None, path: str, progress: ReadProgress) -> bool:
    if arrow is False or path == "-" or (arrow is None and (progress.total or 0) < ARROW_MIN_BYTES):
        return False
    try:
        import flowcep.cli_support.arrowcsv  # noqa: F401
    except ImportError:
        return False
    return True


# ----------------------------------------------------------------------------- bytes and text


class _Counting(io.RawIOBase):
    """A binary reader that counts the bytes taken from the file, for the progress line."""

    def __init__(self, inner: IO[bytes], progress: ReadProgress) -> None:
        self.inner = inner
        self.progress = progress
        # what has arrived, not a full buffer: a pipe is read as it is written
        self._read = getattr(inner, "read1", inner.read)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._read(len(buffer))
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


def _pieces(raw: IO[bytes], interactive: bool, size: int) -> Iterator[bytes]:
    """``raw`` in pieces of whole lines (the last may lack its newline) of about ``size`` bytes;
    ``interactive``: a piece is what has arrived (``read1``)."""
    read = raw.read1 if interactive else raw.read  # type: ignore[attr-defined]
    partial: list[bytes] = []  # a line that has not ended yet
    while True:
        data = read(size)
        if not data:
            break
        cut = data.rfind(b"\n") + 1
        if not cut:
            partial.append(data)
            continue
        if partial:
            partial.append(data[:cut])
            yield b"".join(partial)
            partial.clear()
        else:
            yield data[:cut] if cut < len(data) else data
        if cut < len(data):
            partial.append(data[cut:])
    if partial:
        yield b"".join(partial)


def _decoded(
    pieces: Iterable[bytes], path: str, line_no: int, undecodable: deque[tuple[int, BadRow]]
) -> Iterator[str]:
    """The pieces as text; ``line_no`` lines come before the first. A line that is not UTF-8
    becomes a blank line (which the readers skip), and ``(its line, BadRow)`` goes to
    ``undecodable`` for the readers to report in its place."""
    for piece in pieces:
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError:
            text = "".join(_decoded_lines(piece, line_no, undecodable))
        if line_no == 0 and text.startswith("\ufeff"):
            text = text[1:]  # byte-order mark
        line_no += piece.count(b"\n")
        yield text


def _decoded_lines(piece: bytes, line_no: int, undecodable: deque[tuple[int, BadRow]]) -> Iterator[str]:
    for line in io.BytesIO(piece):
        line_no += 1
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = BadRow(line.decode("utf-8", "replace").rstrip("\r\n"), f"not UTF-8 text ({e.reason})")
            undecodable.append((line_no, bad))
            yield "\n"


def _lines(texts: Iterable[str], ends: list[int]) -> Iterator[str]:
    """The lines of ``texts``, each with its newline; ``ends[0]`` is the number of the last
    line of the text being read (from ``ends[0]`` on entry)."""

    def lines_of(text: str) -> Iterable[str]:
        ends[0] += text.count("\n") + (not text.endswith("\n"))
        return io.StringIO(text, newline="\n")

    return chain.from_iterable(map(lines_of, texts))


def _where(path: str, line: int, what: str = "line") -> str:
    name = "<stdin>" if path == "-" else path
    return f"{name}: {what} {line}"


def _reject(path: str, line: int, bad: BadRow) -> CliError:
    """The error that stops reading (without ``bad_rows``) at a line that is no record."""
    return CliError(f"{_where(path, line)}: {bad.reason}{KEEP_GOING_HINT}", EXIT_INPUT)


# ----------------------------------------------------------------------------- CSV


def _csv_header(
    reader: Any, path: str, bad_rows: bool, undecodable: deque[tuple[int, BadRow]]
) -> list[str] | None:
    """The header's column names (None: the input is empty)."""
    try:
        header = next(reader)
    except StopIteration:
        return None
    except csv.Error as e:
        raise CliError(f"{_where(path, reader.line_num)}: bad CSV header: {e}", EXIT_INPUT) from None
    if undecodable and undecodable[0][0] <= reader.line_num and not bad_rows:
        line, bad = undecodable[0]
        raise _reject(path, line, bad)
    header = [h.strip() for h in header]
    if not any(header):
        raise CliError(f"{_where(path, 1)}: the CSV file has an empty header line", EXIT_INPUT)
    return header


def _records(make: Callable[..., Record], columns: list[list[Any]], lines: Sequence[int]) -> Batch:
    """The rows of typed ``columns`` as records (``make``: a ``record_maker``)."""
    return lines, list(map(make, lines, *columns))


class _CsvRows:
    """The rows of one piece being read: cells, line numbers, and bad rows in their places
    (only with ``bad_rows``; without, the first bad row is the error that stops the reading)."""

    __slots__ = ("make", "path", "bad_rows", "cells", "lines", "bad")

    def __init__(self, make: Callable[..., Record], path: str, bad_rows: bool) -> None:
        self.make = make
        self.path = path
        self.bad_rows = bad_rows
        self.cells: list[list[str]] = []
        self.lines: list[int] = []
        self.bad: list[tuple[int, int, BadRow]] = []  # (rows before it, line, BadRow)

    def add_bad(self, line: int, bad: BadRow) -> CliError | None:
        """Keep a bad row in its place; without ``bad_rows``, the error to raise instead."""
        if not self.bad_rows:
            return _reject(self.path, line, bad)
        self.bad.append((len(self.cells), line, bad))
        return None

    def add_undecodable(self, undecodable: deque[tuple[int, BadRow]], upto: float) -> CliError | None:
        """``add_bad`` for the lines that were not UTF-8, up to line ``upto``."""
        while undecodable and undecodable[0][0] <= upto:
            error = self.add_bad(*undecodable.popleft())
            if error is not None:
                return error
        return None

    def batch(self) -> Batch:
        """The rows read, as records and bad rows in the file's order; then empty again."""
        cells, lines, bad = self.cells, self.lines, self.bad
        items: list[Any] = list(map(self.make, lines, *map(convert_column, zip(*cells)))) if cells else []
        if bad:
            for before, line, row in reversed(bad):  # from the end, so that positions hold
                lines.insert(before, line)
                items.insert(before, row)
        self.cells, self.lines, self.bad = [], [], []
        return lines, items


def _read_csv(
    texts: Iterable[str],
    path: str,
    bad_rows: bool,
    undecodable: deque[tuple[int, BadRow]],
    header: list[str] | None = None,
    line_no: int = 0,
) -> Iterator[Batch]:
    """The batches of CSV text (``line_no`` lines before it; ``header``: read already)."""
    ends = [line_no]
    reader = csv.reader(_lines(texts, ends))
    if header is None:
        header = _csv_header(reader, path, bad_rows, undecodable)
        if header is None:
            return
    width = len(header)
    rows = _CsvRows(record_maker(header), path, bad_rows)
    error: CliError | None = None
    done = False
    while not done:
        # a piece's rows: the loop that runs for every row has no yield in it (PyPy's JIT
        # compiles such a loop far better)
        cells_of, lines_of = rows.cells, rows.lines
        try:
            for cells in reader:
                n = line_no + reader.line_num
                if undecodable and undecodable[0][0] <= n:
                    error = rows.add_undecodable(undecodable, n)
                    if error is not None:
                        break
                if len(cells) == width:
                    cells_of.append(cells)
                    lines_of.append(n)
                elif cells:
                    bad = BadRow(cells, f"{len(cells)} cells, but the header has {width} columns")
                    error = rows.add_bad(n, bad)
                    if error is not None:
                        break
                if n >= ends[0]:  # the end of a piece: what has been read goes on
                    break
            else:
                error = rows.add_undecodable(undecodable, float("inf"))
                done = True
        except csv.Error as e:
            n = line_no + reader.line_num
            error = rows.add_undecodable(undecodable, n) or rows.add_bad(n, BadRow(None, f"bad CSV: {e}"))
        yield rows.batch()
        if error is not None:
            raise error


def _read_csv_arrow(pieces: Iterator[bytes], path: str, bad_rows: bool) -> Iterator[Batch]:
    """CSV parsed by pyarrow while the pieces are plain rows; from the first that is not, on
    by ``_read_csv``."""
    from flowcep.cli_support.arrowcsv import typed_columns

    undecodable: deque[tuple[int, BadRow]] = deque()
    first = next(pieces, None)
    if first is None:
        return
    cut = first.find(b"\n") + 1 or len(first)
    head: str | None = None
    if b'"' not in first[:cut]:  # (a header with quotes might go on over lines: the csv module reads it)
        try:
            head = first[:cut].decode("utf-8")
        except UnicodeDecodeError:
            pass
    if head is None:
        texts = _decoded(chain([first], pieces), path, 0, undecodable)
        yield from _read_csv(texts, path, bad_rows, undecodable)
        return
    if head.startswith("\ufeff"):
        head = head[1:]  # byte-order mark
    header = _csv_header(csv.reader([head]), path, bad_rows, undecodable)
    if header is None:
        return
    line_no = 1
    make = record_maker(header)
    rest = chain([first[cut:]], pieces)
    for piece in rest:
        if not piece:
            continue
        columns = typed_columns(piece, len(header))
        if columns is None:
            texts = _decoded(chain([piece], rest), path, line_no, undecodable)
            yield from _read_csv(texts, path, bad_rows, undecodable, header, line_no)
            return
        count = len(columns[0])
        yield _records(make, columns, range(line_no + 1, line_no + 1 + count))
        line_no += count


# ----------------------------------------------------------------------------- JSON lines


def _read_jsonl(
    texts: Iterable[str], path: str, bad_rows: bool, undecodable: deque[tuple[int, BadRow]]
) -> Iterator[Batch]:
    loads = json.loads
    line_no = 0
    for text in texts:
        lines: list[int] = []
        items: list[Any] = []
        for line in io.StringIO(text, newline="\n"):
            line_no += 1
            bad: BadRow | None = None
            if undecodable and undecodable[0][0] == line_no:
                bad = undecodable.popleft()[1]
            elif not line.strip():
                continue
            else:
                try:
                    obj = loads(line)
                except json.JSONDecodeError as e:
                    bad = BadRow(line.rstrip("\r\n"), f"not valid JSON ({e.msg}, column {e.colno})")
                else:
                    if type(obj) is dict:
                        record = Record(obj)
                        set_source_line(record, line_no)
                        lines.append(line_no)
                        items.append(record)
                        continue
                    bad = BadRow(obj, f"expected a JSON object per line, got {type(obj).__name__}")
            if not bad_rows:
                yield lines, items
                raise _reject(path, line_no, bad)
            lines.append(line_no)
            items.append(bad)
        yield lines, items


# ----------------------------------------------------------------------------- Parquet


def _read_parquet(path: str, progress: ReadProgress) -> Iterator[Batch]:
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
    make = record_maker(pf.schema_arrow.names)
    for batch in pf.iter_batches(batch_size=8192):
        columns = [column.to_pylist() for column in batch.columns]
        yield _records(make, columns, range(row + 1, row + 1 + batch.num_rows))
        row += batch.num_rows
        progress.done = row
