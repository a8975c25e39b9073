"""Batch: every key's rows, sorted by event time, through the worker's operator, then flushed."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .matcher import Matcher
from .values import SEQ_COLUMN as _SEQ
from .values import TS_MS_COLUMN as _MS
from .values import py_converter, quote, read_columns

_OUTPUT_CHUNK = 4096  # rows per Arrow batch written back to Spark


def build_batch(
    df: DataFrame, ms: Column, matcher: Matcher, key_names: list[str] | None, out_schema: T.StructType
) -> DataFrame:
    """``repartition(key)`` + ``sortWithinPartitions(key, time)`` + ``mapInArrow``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # the input order breaks ties in event time, as far as Spark defines one
    prepared = df.withColumn(_SEQ, F.monotonically_increasing_id()).withColumn(_MS, ms)
    if key_names is None:
        prepared = prepared.repartition(1).sortWithinPartitions(F.col(_MS).asc_nulls_first(), _SEQ)
    else:
        # Two partitions per core, by number: the matching is CPU work in Python, and adaptive
        # execution would otherwise merge the partitions by their size in bytes (3 tasks for 2
        # cores here, the last one running alone)
        partitions = 2 * df.sparkSession.sparkContext.defaultParallelism
        prepared = prepared.repartition(partitions, *key_names).sortWithinPartitions(
            *key_names, F.col(_MS).asc_nulls_first(), _SEQ
        )
    prepared = prepared.select(*[F.col(quote(c)) for c in df.columns], F.col(_MS))
    columns = list(df.columns)
    runner = BatchRunner(
        matcher,
        [columns.index(k) for k in key_names] if key_names is not None else [],
        to_arrow_schema(out_schema, timezone="UTC"),
        [py_converter(f.dataType) for f in df.schema.fields] + [None],
    )
    return prepared.mapInArrow(runner, out_schema)


class BatchRunner:
    """``mapInArrow`` function: partitions arrive sorted by key, then event time."""

    def __init__(
        self, matcher: Matcher, key_positions: list[int], arrow_schema: Any, converters: list[Any]
    ) -> None:
        self.matcher = matcher
        self.key_positions = key_positions
        self.arrow_schema = arrow_schema
        self.converters = converters  # per input column: None or a function

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        self.matcher.open_task()
        try:
            yield from self._run(batches)
        finally:
            self.matcher.close_task()

    def _run(self, batches: Iterator[Any]) -> Iterator[Any]:
        m = self.matcher
        make = functools.partial(tuple.__new__, m.event_class)
        positions = self.key_positions
        single = positions[0] if len(positions) == 1 else None
        converters = self.converters
        out: list[Any] = []
        key: tuple[Any, ...] | None = None
        events: list[Any] = []
        started = False
        for batch in batches:
            columns = read_columns(batch, converters)
            for values in zip(*columns, strict=True):
                if single is not None:
                    k: tuple[Any, ...] = (values[single],)
                else:
                    k = tuple(values[i] for i in positions)
                if k != key or not started:
                    if started:
                        m.run_key(key, events, out)  # type: ignore[arg-type]
                    key, events, started = k, [], True
                events.append(make(values))
            if len(out) >= _OUTPUT_CHUNK:
                yield self._batch(out)
                out = []
        if started:
            m.run_key(key, events, out)  # type: ignore[arg-type]
        if out:
            yield self._batch(out)

    def _batch(self, out: list[Any]) -> Any:
        import pyarrow as pa

        schema = self.arrow_schema
        if self.matcher.tuples:
            columns = list(zip(*out, strict=True))
            arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
            return pa.RecordBatch.from_arrays(arrays, schema=schema)
        return pa.RecordBatch.from_pylist(out, schema=schema)
