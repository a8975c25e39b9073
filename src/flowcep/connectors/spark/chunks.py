"""Streaming events in chunks: many events of one bucket in one row of the stateful operator.

PySpark's row-based ``transformWithState`` turns every cell of its input into a Python value
with its own Arrow scalar, one row at a time (``batch.column(i)[row].as_py()`` in pyspark's
worker), which costs more per event than matching it. So the connector puts a stateless
``mapInArrow`` step before the stateful one: it reads each Arrow batch a column at a time
(``to_pylist``, one C call per column), groups the events by bucket, and writes each bucket's
events as one pickled list of item tuples. ``transformWithState`` then reads two cells per
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

        held: dict[int, list[tuple[Any, ...]]] = {}
        count = 0
        for batch in batches:
            if not batch.num_rows:
                continue
            columns = read_columns(batch, converters)
            for bucket, event in zip(batch.column(items).to_pylist(), zip(*columns)):
                events = held.get(bucket)
                if events is None:
                    held[bucket] = [event]
                else:
                    events.append(event)
            count += batch.num_rows
            if count >= held_events:
                yield _batch(pa, held, chunk_events)
                held = {}
                count = 0
        if held:
            yield _batch(pa, held, chunk_events)

    return chunk


def _batch(pa: Any, held: dict[int, list[tuple[Any, ...]]], size: int) -> Any:
    buckets: list[int] = []
    blobs: list[bytes] = []
    for bucket, events in held.items():
        for start in range(0, len(events), size):
            buckets.append(bucket)
            blobs.append(chunk_blob(events[start : start + size]))
    return pa.RecordBatch.from_arrays(
        [pa.array(buckets, pa.int32()), pa.array(blobs, pa.binary())], names=["bucket", "events"]
    )


def chunk_blob(events: list[tuple[Any, ...]]) -> bytes:
    """The ``events`` cell of a chunk of ``events`` (item tuples)."""
    return pickle.dumps(events, pickle.HIGHEST_PROTOCOL)


def unchunk(blob: bytes) -> list[tuple[Any, ...]]:
    """A chunk's events, as item tuples in the order the chunking step read them."""
    events: list[tuple[Any, ...]] = pickle.loads(blob)  # noqa: S301 - written by chunk_blob()
    return events
