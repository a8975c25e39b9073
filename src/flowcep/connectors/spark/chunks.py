"""Streaming events in chunks: many events of one bucket in one row of the stateful operator.

PySpark's row-based ``transformWithState`` turns every cell of its input into a Python value
with its own Arrow scalar, one row at a time (``batch.column(i)[row].as_py()`` in pyspark's
worker), which costs more per event than matching it. So the connector puts a stateless
``mapInArrow`` step before the stateful one: it reads each Arrow batch a column at a time
(``to_pylist``, one C call per column) after sorting the rows by bucket in Arrow, and writes
each bucket's events as one pickled list of columns. ``transformWithState`` then reads two cells per
chunk instead of a few per event, and unpickles a whole chunk with one C call.

The values are the ones the batch path gives (``to_pylist``, then ``values.py_converter`` for
structs, arrays and maps of them, so that a struct is a ``Row`` in both). Within a bucket, events keep the
order in which the partition read them; across partitions Spark never promised an order, and
the operator orders events by time itself.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .values import read_columns

#: Events of one bucket in one chunk, at most (a chunk is one binary cell).
CHUNK_EVENTS = 4096
#: Events the chunking step holds before it writes its chunks (bounds its memory).
HELD_EVENTS = 65536

CHUNK_SCHEMA = "bucket int, events binary"

Chunker = Callable[[Iterator[Any]], Iterator[Any]]
Converter = Callable[[Any], Any]


def chunker(
    converters: Sequence[Converter | None],
    chunk_events: int = CHUNK_EVENTS,
    held_events: int = HELD_EVENTS,
) -> Chunker:
    """The ``mapInArrow`` function over batches whose first ``len(converters)`` columns are an
    event's items (the user's columns, then the event time) and whose next column is its
    bucket: rows of ``CHUNK_SCHEMA``, each with up to ``chunk_events`` events of one bucket,
    written whenever ``held_events`` events have been read and at the end. An item's converter
    (``values.py_converter``, as in batch) turns its ``to_pylist`` value into a ``Row``'s."""
    items = len(converters)

    def chunk(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # on the worker
        import pyarrow.compute as pc

        held: list[Any] = []
        count = 0
        for batch in batches:
            if not batch.num_rows:
                continue
            held.append(batch)
            count += batch.num_rows
            if count >= held_events:
                yield _chunks(pa, pc, held, items, converters, chunk_events)
                held = []
                count = 0
        if held:
            yield _chunks(pa, pc, held, items, converters, chunk_events)

    return chunk


def _chunks(
    pa: Any, pc: Any, batches: list[Any], items: int, converters: Sequence[Converter | None], size: int
) -> Any:
    """The chunks of the events of ``batches``: sorted by bucket in Arrow (a stable sort, so a
    bucket's events keep the order they were read in), then each bucket's run of rows written a
    column at a time, no Python work per event but reading the values."""
    table = pa.Table.from_batches(batches).combine_chunks()
    table = table.take(pc.sort_indices(table.column(items)))
    runs = pc.run_end_encode(table.column(items)).combine_chunks()
    columns = read_columns(table, converters)
    buckets: list[int] = []
    blobs: list[bytes] = []
    start = 0
    for end, bucket in zip(runs.run_ends.to_pylist(), runs.values.to_pylist()):
        for at in range(start, end, size):
            stop = min(at + size, end)
            buckets.append(bucket)
            blobs.append(columns_blob([c[at:stop] for c in columns]))
        start = end
    return pa.RecordBatch.from_arrays(
        [pa.array(buckets, pa.int32()), pa.array(blobs, pa.binary())], names=["bucket", "events"]
    )


def columns_blob(columns: list[list[Any]]) -> bytes:
    """The ``events`` cell of a chunk whose events' items are ``columns`` (one list per item)."""
    return pickle.dumps(columns, pickle.HIGHEST_PROTOCOL)


def chunk_blob(events: list[tuple[Any, ...]]) -> bytes:
    """The ``events`` cell of a chunk of ``events`` (item tuples, at least one)."""
    return columns_blob([list(c) for c in zip(*events)])


def unchunk(blob: bytes) -> list[tuple[Any, ...]]:
    """A chunk's events, as item tuples in the order the chunking step read them."""
    columns: list[list[Any]] = pickle.loads(blob)  # noqa: S301 - written by the chunking step
    return list(zip(*columns))
