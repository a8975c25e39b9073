"""``detect_rules(df, rules_dir, ...)``: a rule set read from a directory, changed while the query runs.

The buckets of keys hold one ``MultiPatternOperator`` snapshot each, in the same stateful
processor as ``detect``. Every call of a bucket reads the rule directory (``RuleDirectory``: only
changed files are parsed again) and restores the bucket's snapshot into that rule set
(``MultiPatternOperator.restore(data, patterns)``): changed rules are replaced, removed ones
removed, new ones added, the others keep their partial matches. docs/multi-pattern.md, section 5.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from flowcep.runtime.multipattern import MultiPatternOperator, PatternSet
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.ruledir import RuleDirectory
from flowcep.runtime.updates import Loader

from .batch import build_batch
from .detect import bad_input_choice, checked_options
from .matcher import INTERNAL_FIELDS, INTERNAL_SCHEMA, Matcher
from .streaming import DEFAULT_BUCKETS, build_stream
from .values import NEWEST_MS, timestamp_ms

__all__ = ["RULES_OUTPUT_SCHEMA", "detect_rules"]

#: The output of :func:`detect_rules`: ``detect``'s default output, and the rule's id and version.
RULES_OUTPUT_SCHEMA = (
    "key string, kind string, timestamp timestamp, first_ts timestamp, last_ts timestamp, events string, "
    "pattern string, version long"
)
_WIRE = INTERNAL_SCHEMA + ", pattern string, version long"


def detect_rules(
    df: DataFrame,
    rules: str | os.PathLike[str] | RuleDirectory,
    *,
    key: str | Sequence[str] | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str = 0,
    loader: Loader | None = None,
    on_error: str | None = None,
    state_ttl: int | timedelta | str | None = None,
    buckets: int = DEFAULT_BUCKETS,
) -> DataFrame:
    """Run the rules of a directory over ``df`` per ``key`` (see ``detect`` for the keywords).

    Each ``*.json`` file of ``rules`` is one rule record, loaded by ``loader`` (default: a JSON
    rule record, ``load_rule``). The directory is read again at every micro-batch; the rules'
    state is kept across rule changes and checkpoints. Output: :data:`RULES_OUTPUT_SCHEMA`
    (``pattern`` and ``version`` are null for late and invalid rows, which belong to no rule).
    """
    directory = rules if isinstance(rules, RuleDirectory) else RuleDirectory(rules, loader)
    directory.updates()  # a missing directory fails here, not on a worker (a broken file: a warning)
    invalid = bad_input_choice(on_error, None)
    key_names, delay, ttl = checked_options(df, key, timestamp, out_of_orderness, state_ttl, buckets)
    wire = T._parse_datatype_string(_WIRE)  # noqa: SLF001
    assert isinstance(wire, T.StructType)
    matcher = RuleMatcher(
        directory,
        user_fields=list(df.columns),
        key_names=key_names,
        timestamp=timestamp,
        mode="format",
        select=_default_row,
        output_fields=list(wire.fieldNames()),
        on_invalid=invalid,
        recursive=any(
            isinstance(f.dataType, (T.StructType, T.ArrayType, T.MapType)) for f in df.schema.fields
        ),
    )
    ms = timestamp_ms(df.schema[timestamp].dataType, timestamp)
    if df.isStreaming:
        out = build_stream(df, ms, matcher, key_names, delay, ttl, buckets, wire)
    else:
        out = build_batch(df, ms, matcher, key_names, wire)
    end = F.when(F.col("timestamp") <= NEWEST_MS, F.col("timestamp"))
    return out.select(
        "key",
        "kind",
        F.timestamp_millis(end).alias("timestamp"),
        F.timestamp_millis("first_ts").alias("first_ts"),
        F.timestamp_millis("last_ts").alias("last_ts"),
        "events",
        "pattern",
        "version",
    )


def _default_row(
    matcher: Matcher, kind: str, key: str | None, ts: int | None, value: Any, reason: str | None
) -> tuple[Any, ...]:
    """``detect``'s default row of a result (the ``format`` mode's formatter)."""
    times = [e[-1] for events in value.values() for e in events if e[-1] is not None]
    first = min(times) if times else None
    last = max(times) if times else None
    return (key, kind, ts, first, last, matcher.events_json(value, reason))


class RuleMatcher(Matcher):
    """The ``Matcher`` of a rule directory: its operator hosts the directory's rules, its rows
    carry the rule's id and version."""

    def __init__(self, rules: RuleDirectory, **kwargs: Any) -> None:
        super().__init__(None, **kwargs)
        self.rules = rules
        assert self.output_fields[: len(INTERNAL_FIELDS)] == INTERNAL_FIELDS

    def operator(self) -> Any:
        """This worker's operator, empty, hosting the directory's rules as they are now."""
        op = self._op
        if op is None:
            options = OperatorOptions(
                key_by=self.key_of(),
                out_of_orderness=None,
                on_error="raise" if self.on_invalid == "raise" else "side_output",
            )
            op = _RuleSetOperator.from_options(options, self.rules.updates())
            op.rules = self.rules
            self._op = op
        else:
            op.reset()
            op.sync(self.rules.updates())
        return op

    def emit(self, outputs: Any, out: list[Any]) -> None:
        for o in outputs:
            n = len(out)
            super().emit((o,), out)
            extra = (o.pattern, o.version)
            for i in range(n, len(out)):
                out[i] = (*out[i], *extra)

    def invalid(self, key: tuple[Any, ...], row: Any, ms: int | None, out: list[Any]) -> None:
        n = len(out)
        super().invalid(key, row, ms, out)
        for i in range(n, len(out)):
            out[i] = (*out[i], None, None)


class _RuleSetOperator(MultiPatternOperator):
    """A ``MultiPatternOperator`` whose ``restore`` moves to its rule directory's set."""

    rules: RuleDirectory

    def restore(self, data: bytes, patterns: PatternSet | None = None, *, registry: Any = None) -> None:
        super().restore(data, self.rules.updates() if patterns is None else patterns, registry=registry)
