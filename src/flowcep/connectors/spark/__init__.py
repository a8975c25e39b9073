"""flowcep patterns on PySpark DataFrames: batch and Structured Streaming.

MATCH_RECOGNIZE queries run through :func:`match_recognize` (``sql``). The entry point, :func:`detect`, takes a DataFrame (batch or streaming), a flowcep ``Pattern``,
the key column(s) and the event-time column, and returns a DataFrame of results. Matching is
done by the embedded runtime (``flowcep.runtime.CepOperator``), compiled once per Python worker:

* batch (``batch``): the rows are partitioned by key and sorted by event time
  (``mapInArrow``); each key's rows go through the worker's operator, which is flushed at the
  end of the key and reset;
* streaming (``streaming``): the keys are hashed into buckets, ``groupBy(bucket)
  .transformWithState`` in ``EventTime`` mode; a bucket's operator snapshot is kept in a value
  state, and an event-time timer at its ``next_deadline()`` makes timeouts and pending
  ``not_followed_by`` matches fire when Spark's watermark passes, even if no row arrives.

The parts: ``values`` (event time, rows as events, JSON), ``matcher`` (the per-worker operator
and the result rows), ``batch``, ``streaming``, ``detect``. See docs/spark.md for the output
schema, the time semantics and the differences with the pure-Python runtime.
"""

from .detect import detect
from .matcher import DEFAULT_OUTPUT_SCHEMA, LEVELS_OUTPUT_SCHEMA, InvalidRowError
from .rules import RULES_OUTPUT_SCHEMA, detect_rules
from .sql import match_recognize
from .streaming import (
    DEFAULT_BUCKETS,
    PROVIDER_CONF,
    ROCKSDB_PROVIDER,
    SparkConfigError,
    StateFormatError,
    ensure_state_store,
)
from .values import duration_ms

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_OUTPUT_SCHEMA",
    "LEVELS_OUTPUT_SCHEMA",
    "PROVIDER_CONF",
    "RULES_OUTPUT_SCHEMA",
    "ROCKSDB_PROVIDER",
    "InvalidRowError",
    "SparkConfigError",
    "StateFormatError",
    "detect",
    "detect_rules",
    "duration_ms",
    "ensure_state_store",
    "match_recognize",
]
