"""The entry point: ``detect(df, pattern, key=..., timestamp=...)``, batch or streaming."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from flowcep.runtime.bounded import batch_evaluator

from .batch import build_batch
from .matcher import (
    GAUGES,
    INTERNAL_SCHEMA,
    LEVELS_INTERNAL_SCHEMA,
    STATS_KIND,
    Matcher,
    is_hierarchy,
    select_arity,
)
from .streaming import DEFAULT_BUCKETS, build_stream
from .values import HIDDEN_COLUMNS, NEWEST_MS, duration_ms, timestamp_ms


def detect(
    df: DataFrame,
    pattern: Any,
    *,
    key: str | Sequence[str] | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str = 0,
    select: Callable[..., Any] | None = None,
    output_schema: T.StructType | str | None = None,
    on_error: str | None = None,
    on_invalid: str | None = None,
    state_ttl: int | timedelta | str | None = None,
    buckets: int = DEFAULT_BUCKETS,
    observe: str | None = None,
    emit: Sequence[str] | None = None,
    evaluator: str = "nfa",
    max_partial_matches_per_key: int | None = None,
    max_partial_matches: int | None = None,
    on_partial_match_limit: str | None = None,
    engine: str | None = None,
) -> DataFrame:
    """Run ``pattern`` over ``df`` per ``key`` in ``timestamp`` order; a DataFrame of results.

    ``pattern`` may be an event hierarchy (``flowcep.hierarchy.Hierarchy``): every level runs in
    the same pass, and the output (:data:`LEVELS_OUTPUT_SCHEMA`) has each result's ``level``
    after the key; ``emit`` names the levels whose matches and timeouts come out (default: the
    top levels). A match's ``events`` is its complex event (``type``, ``start``, ``end``,
    ``attributes``, ``match``); with ``select``, ``select(match)`` gets the ``ComplexEvent``.
    ``engine`` (hierarchies only) is ``hierarchy_operator``'s: ``"auto"`` (the default: the
    one-pass engine for a hierarchy of its class, else the levels), ``"levels"`` or
    ``"one_pass"``; a streaming bucket restored from a snapshot of the other engine stays on it.

    Works on batch and streaming DataFrames. Without ``select`` the output has
    :data:`DEFAULT_OUTPUT_SCHEMA`: ``key``, ``kind`` (``match``, ``timeout``, ``late``,
    ``invalid``), ``timestamp``, ``first_ts``, ``last_ts`` and ``events``, a JSON object mapping
    each pattern step to its rows. With ``select`` (and ``output_schema``), ``select(match)``
    makes the rows of matches, or ``select(kind, key, events)`` those of every result.
    ``on_error``: ``"side_output"`` (rows without a usable key or time, and rows a condition
    raised on, come out as kind ``invalid``) or ``"raise"`` (the job fails); ``on_invalid``
    (``"output"``/``"raise"``) is its older name.
    ``out_of_orderness`` is the watermark delay (ms, ``timedelta`` or ``"10 seconds"``),
    ``state_ttl`` (streaming) drops a key's state once Spark's watermark is that far past the
    key's latest event, ``buckets`` (streaming) is how many state-store groups the keys are
    hashed into (fixed for the life of a checkpoint). ``observe`` (default output only) names
    Spark observed metrics counting each kind of result: a streaming query reports them per
    micro-batch in its progress (``query.lastProgress["observedMetrics"][observe]``).
    ``evaluator`` (batch only): ``"nfa"`` (the default), or ``"optiseq"``, ``"tree"`` or
    ``"auto"``, the bounded-data evaluators of docs/bounded.md, run on each key's rows. They give
    no timed-out partial matches: with a window and an output that carries timeouts (the
    default output, a 3-argument ``select``), ``"auto"`` runs the NFA and the others are an
    error; ``select(match)`` carries matches only.
    micro-batch in its progress (``query.lastProgress["observedMetrics"][observe]``), and with
    them the gauges of the state the micro-batch ran (summed over the buckets it touched:
    ``partial_matches``, ``buffered_events``, ``keys``, ``shared_buffer_entries``; the largest
    ``watermark_lag_ms``, a bucket's latest event time minus its watermark).
    ``max_partial_matches_per_key`` / ``max_partial_matches`` and ``on_partial_match_limit``
    bound the partial matches as ``CEP.pattern`` does (``flowcep.runtime.limits``); dropped ones
    come out as kind ``dropped``. An operator here holds one key at a time in batch and one
    bucket of keys in streaming: ``max_partial_matches`` bounds that.
    """
    from flowcep.runtime.limits import PartialMatchLimit

    limit = PartialMatchLimit.of(max_partial_matches_per_key, max_partial_matches, on_partial_match_limit)
    if limit is not None and is_hierarchy(pattern):
        raise ValueError("partial-match limits work with one pattern, not an event hierarchy")
    if engine is not None and not is_hierarchy(pattern):
        raise ValueError("engine chooses an event hierarchy's engine: it goes with a Hierarchy only")
    invalid = bad_input_choice(on_error, on_invalid)
    if (select is None) != (output_schema is None):
        raise ValueError("select and output_schema go together: give both or neither")
    if select is not None and not callable(select):
        raise TypeError(f"select must be callable, got {select!r}")
    key_names, delay, ttl = checked_options(df, key, timestamp, out_of_orderness, state_ttl, buckets)
    if observe is not None and select is not None:
        raise ValueError("observe counts the default output's kinds: it does not go with select")
    levels = list(emit) if emit is not None else None
    mode = "default" if select is None else "select1" if select_arity(select) == 1 else "select3"
    evaluator = batch_evaluator(
        evaluator,
        pattern,
        streaming=df.isStreaming,
        timeouts_out=mode != "select1",
        limited=limit is not None,
    )
    if select is None:
        gauges = observe is not None and df.isStreaming and not is_hierarchy(pattern)
        internal = LEVELS_INTERNAL_SCHEMA if is_hierarchy(pattern) else INTERNAL_SCHEMA
        out = build(
            df,
            pattern,
            key_names,
            timestamp,
            delay,
            ttl,
            invalid,
            "default",
            None,
            internal,
            buckets,
            levels,
            evaluator,
            limit,
            gauges,
            engine or "auto",
        )
        return out if observe is None else observed(out, observe)
    assert output_schema is not None  # given with select (checked above)
    return build(
        df,
        pattern,
        key_names,
        timestamp,
        delay,
        ttl,
        invalid,
        mode,
        select,
        output_schema,
        buckets,
        levels,
        evaluator,
        limit,
        engine=engine or "auto",
    )


def observed(out: DataFrame, name: str) -> DataFrame:
    """``out`` with Spark observed metrics ``name``: the results of each kind and the gauges of
    the state (per micro-batch); the gauge rows (kind ``stats``) are left out of the results."""
    kind = F.col("kind")
    # count (not sum) of a when: 0, never null, in a micro-batch without results
    counts = [
        F.count(F.when(kind == k, 1)).alias(k) for k in ("match", "timeout", "late", "invalid", "dropped")
    ]
    results = F.count(F.when(kind != STATS_KIND, 1)).alias("results")

    def gauge(field: str) -> Column:
        return F.get_json_object(F.when(kind == STATS_KIND, F.col("events")), f"$.{field}").cast("long")

    gauges = [F.coalesce(F.sum(gauge(g)), F.lit(0)).alias(g) for g in GAUGES]
    lag = F.coalesce(F.max(gauge("watermark_lag_ms")), F.lit(0)).alias("watermark_lag_ms")
    return out.observe(name, results, *counts, *gauges, lag).filter(kind != STATS_KIND)


def checked_options(
    df: DataFrame,
    key: str | Sequence[str] | None,
    timestamp: str,
    out_of_orderness: int | timedelta | str,
    state_ttl: int | timedelta | str | None,
    buckets: int,
) -> tuple[list[str] | None, int, int | None]:
    """The key columns, the delay and the state TTL (ms) of a ``detect``-like call, checked
    against ``df`` (errors name the option)."""
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise ValueError(f"buckets must be a positive int, got {buckets!r}")
    delay = duration_ms(out_of_orderness, "out_of_orderness")
    ttl = duration_ms(state_ttl, "state_ttl") if state_ttl is not None else None
    if ttl is not None and ttl <= 0:
        raise ValueError("state_ttl must be positive")
    key_names = [key] if isinstance(key, str) else list(key) if key is not None else None
    if key_names == []:
        raise ValueError("key must name at least one column (or be None for one global key)")
    check_columns(df, key_names, timestamp)
    return key_names, delay, ttl


def bad_input_choice(on_error: str | None, on_invalid: str | None) -> str:
    """``"output"`` or ``"raise"``, from ``on_error`` (the runtime's and PyFlink's name:
    ``"side_output"`` or ``"raise"``) or ``on_invalid`` (this connector's older name: ``"output"``
    or ``"raise"``)."""
    if on_error is not None and on_invalid is not None:
        raise ValueError("give on_error or on_invalid (its older name), not both")
    if on_invalid is not None:
        if on_invalid not in ("output", "raise"):
            raise ValueError(f"on_invalid must be 'output' or 'raise', got {on_invalid!r}")
        return on_invalid
    if on_error is None or on_error == "side_output":
        return "output"
    if on_error == "raise":
        return "raise"
    raise ValueError(f"on_error must be 'side_output' or 'raise', got {on_error!r}")


def check_columns(df: DataFrame, key_names: list[str] | None, timestamp: str) -> None:
    """The key and timestamp columns exist, and no column has a name the connector uses."""
    columns = list(df.columns)
    for hidden in HIDDEN_COLUMNS:
        if hidden in columns:
            raise ValueError(f"the input has a column named {hidden}, which flowcep uses internally")
    if timestamp not in columns:
        raise ValueError(f"no timestamp column {timestamp!r} in the input (columns: {', '.join(columns)})")
    for k in key_names or ():
        if k not in columns:
            raise ValueError(f"no key column {k!r} in the input (columns: {', '.join(columns)})")


def _struct(schema: T.StructType | str) -> T.StructType:
    parsed = T._parse_datatype_string(schema) if isinstance(schema, str) else schema  # noqa: SLF001
    if not isinstance(parsed, T.StructType):
        raise TypeError(f"output_schema must be a StructType or a DDL string of fields, got {schema!r}")
    return parsed


def build(
    df: DataFrame,
    pattern: Any,
    key_names: list[str] | None,
    timestamp: str,
    delay: int,
    ttl: int | None,
    on_invalid: str,
    mode: str,
    select: Callable[..., Any] | None,
    schema: T.StructType | str,
    buckets: int = DEFAULT_BUCKETS,
    emit: list[str] | None = None,
    evaluator: str = "nfa",
    partial_match_limit: Any = None,
    gauges: bool = False,
    engine: str = "auto",
) -> DataFrame:
    """The result DataFrame of ``df`` in one of the :class:`Matcher`'s modes (``engine``: an
    event hierarchy's, see ``flowcep.hierarchy.hierarchy_operator``)."""
    from flowcep.nfa import NFACompiler

    # an illegal pattern or hierarchy fails here, not on a worker
    if is_hierarchy(pattern):
        from flowcep.hierarchy.engines import hierarchy_operator

        pattern = pattern.build()
        # (checks the engine's name, the hierarchy's fit with it and the emitted levels)
        hierarchy_operator(pattern, engine=engine, timestamp=lambda e: 0, emit=emit)
    else:
        NFACompiler.compile(pattern)
    out_schema = _struct(schema)
    user_fields = list(df.columns)
    nested = (T.StructType, T.ArrayType, T.MapType)
    matcher = Matcher(
        pattern,
        user_fields=user_fields,
        key_names=key_names,
        timestamp=timestamp,
        mode=mode,
        select=select,
        output_fields=list(out_schema.fieldNames()),
        on_invalid=on_invalid,
        recursive=any(isinstance(f.dataType, nested) for f in df.schema.fields),
        emit=emit,
        evaluator=evaluator,
        partial_match_limit=partial_match_limit,
        gauges=gauges,
        engine=engine,
    )
    ms = timestamp_ms(df.schema[timestamp].dataType, timestamp)
    if df.isStreaming:
        out = build_stream(df, ms, matcher, key_names, delay, ttl, buckets, out_schema)
    else:
        out = build_batch(df, ms, matcher, key_names, out_schema)
    if mode == "default":
        # a result released by the end of input (final watermark 2**63-1) has a null timestamp
        end = F.when(F.col("timestamp") <= NEWEST_MS, F.col("timestamp"))
        level = ["level"] if is_hierarchy(pattern) else []
        out = out.select(
            "key",
            *level,
            "kind",
            F.timestamp_millis(end).alias("timestamp"),
            F.timestamp_millis("first_ts").alias("first_ts"),
            F.timestamp_millis("last_ts").alias("last_ts"),
            "events",
        )
    return out
