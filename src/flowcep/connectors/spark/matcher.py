"""The per-worker matcher: one compiled operator per Python worker, and the rows it emits.

A ``Matcher`` is built on the driver, pickled into the Spark job and unpickled once per Python
worker process. It compiles the pattern there once (``operator()``), and every key group of every
task reuses that operator: batch resets it per key, streaming restores each group's snapshot
into it. It also turns the operator's outputs into result rows, in one of four modes:

* ``default``: tuples of :data:`INTERNAL_FIELDS` (times as epoch ms; the driver side projects
  them to timestamps);
* ``select1`` / ``select3``: dicts made from the user's ``select(match)`` /
  ``select(kind, key, events)``;
* ``format``: tuples made by a ``formatter(kind, key_text, timestamp, value, reason)`` given
  by the caller (the command line has its own record shape; the connector does not know it);
  over an event hierarchy, ``formatter(..., reason, level)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pyspark.sql import Row

from flowcep.connectors.jsontext import row_encoder
from flowcep.connectors.selecting import select_arity as select_arity  # (its import path here)
from flowcep.hierarchy import Hierarchy, HierarchyPlan
from flowcep.hierarchy.engines import chosen_engine, hierarchy_operator
from flowcep.hierarchy.event import ComplexEvent, plain_match
from flowcep.hierarchy.layouts import snapshot_engine
from flowcep.runtime.gctuning import tuned_gc
from flowcep.runtime.snapshot import HEADER
from flowcep.runtime.timestamps import LONG_MIN

from .values import dumps, event_class, item_reader, result_class

_item = tuple.__getitem__  # an event's item without Row.__getitem__ (Python code)
_NO_KEY = object()
# what a worker makes for itself (never pickled with the matcher)
_CACHES = (
    "_op",
    "_other_ops",
    "_header_engines",
    "_opened",
    "_bounded",
    "event_class",
    "_encode_event",
    "_step_text",
)

#: The output of :func:`detect` without ``select``.
DEFAULT_OUTPUT_SCHEMA = (
    "key string, kind string, timestamp timestamp, first_ts timestamp, last_ts timestamp, events string"
)
# what the Python side emits for the default schema; times become timestamps in a projection after it
INTERNAL_SCHEMA = "key string, kind string, timestamp long, first_ts long, last_ts long, events string"
INTERNAL_FIELDS = ["key", "kind", "timestamp", "first_ts", "last_ts", "events"]
#: The output of :func:`detect` over an event hierarchy without ``select``: each result's level
#: (complex event type; null for late and invalid raw rows) after the key.
LEVELS_OUTPUT_SCHEMA = (
    "key string, level string, kind string, timestamp timestamp, first_ts timestamp, last_ts timestamp, "
    "events string"
)
LEVELS_INTERNAL_SCHEMA = (
    "key string, level string, kind string, timestamp long, first_ts long, last_ts long, events string"
)

MODES = ("default", "select1", "select3", "format")
# the gauges a streaming query with ``observe`` reports, from rows of this kind (never output)
STATS_KIND = "stats"
GAUGES = ("partial_matches", "buffered_events", "keys", "shared_buffer_entries")
ON_INVALID = ("output", "raise")


class InvalidRowError(ValueError):
    """A row with a null key or a null/unparsable timestamp, with ``on_error="raise"``."""


class Matcher:
    """Everything a worker needs to run the pattern over rows (no Spark state of its own).

    Events are tuples of the input's columns plus the event time (ms) as a last, unnamed item,
    seen through :func:`event_class`: ``e.amount``, ``e["amount"]``, ``e.asDict()``.

    ``pattern`` may be an event hierarchy (``flowcep.hierarchy.Hierarchy`` or its plan): the
    operator is then ``hierarchy_operator(pattern, engine=engine)`` (``HierarchyOperator`` or
    ``OnePassHierarchy``), whose ``emit`` levels come out, each result with its level.
    """

    def __init__(
        self,
        pattern: Any,
        *,
        user_fields: list[str],
        key_names: list[str] | None,
        timestamp: str,
        mode: str,
        select: Callable[..., Any] | None,
        output_fields: list[str],
        on_invalid: str,
        recursive: bool,
        emit: list[str] | None = None,
        evaluator: str = "nfa",
        partial_match_limit: Any = None,
        gauges: bool = False,
        engine: str = "auto",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if on_invalid not in ON_INVALID:
            raise ValueError(f"on_invalid must be 'output' or 'raise', got {on_invalid!r}")
        self.pattern = pattern
        self.user_fields = tuple(user_fields)
        self.key_names = key_names
        self.key_positions = [user_fields.index(k) for k in key_names] if key_names is not None else None
        self.timestamp = timestamp
        self.ts_index = user_fields.index(timestamp)
        self.mode = mode
        self.select = select
        self.output_fields = output_fields
        self.on_invalid = on_invalid
        self.recursive = recursive
        self.levels = is_hierarchy(pattern)
        if emit is not None and not self.levels:
            raise ValueError("emit names the levels of an event hierarchy: it goes with a Hierarchy only")
        self.emit_levels = emit
        # a hierarchy's engine, "levels" or "one_pass" ("auto" resolved here, on the driver)
        self.engine = chosen_engine(pattern, engine) if self.levels else None
        self.evaluator = evaluator  # batch: "nfa", or a bounded evaluator (docs/bounded.md)
        self.partial_match_limit = partial_match_limit  # a PartialMatchLimit or None
        self.gauges = gauges  # streaming with observe: a stats row per bucket run (see gauge_row)
        self._init_caches()

    def _init_caches(self) -> None:
        self._op: Any = None
        self._other_ops: dict[str, Any] = {}  # a hierarchy's operators of the other engine (restore)
        self._header_engines: dict[bytes, str] = {}  # the other engine's snapshot headers
        self._opened = False  # whether open_task ran (an operator made later is opened then)
        self._bounded: Any = None
        self.event_class = event_class(self.user_fields)
        # an event's JSON object without the dict (its last item, the event time, left out)
        self._encode_event = None if self.recursive else row_encoder(self.user_fields, 1)
        self._step_text: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in _CACHES:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_caches()

    # -- the operator: one per worker process, compiled once

    def key_of(self) -> Callable[[Any], Any] | None:
        """The operator's key function: one column's value, a tuple of several, or None."""
        positions = self.key_positions
        if positions is None:
            return None
        if len(positions) == 1:
            return item_reader(positions[0]).__get__  # type: ignore[no-any-return]
        readers = [item_reader(i).__get__ for i in positions]
        return lambda e: tuple([r(e) for r in readers])

    def operator(self) -> Any:
        """This worker's operator, empty (its state is the caller's to restore or fill)."""
        op = self._op
        if op is None and self.levels:
            op = self._op = self._hierarchy_operator(self.engine)
        elif op is None:
            from flowcep.runtime import CepOperator

            # no generated watermark: the connector drives event time (Spark's watermark, or
            # the end of a key's rows in batch)
            op = self._op = CepOperator(
                self.pattern,
                key_by=self.key_of(),
                out_of_orderness=None,
                on_error="raise" if self.on_invalid == "raise" else "side_output",
                partial_match_limit=self.partial_match_limit,
            )
        else:
            op.reset()
        return op

    def _hierarchy_operator(self, engine: Any) -> Any:
        return hierarchy_operator(
            self.pattern,
            engine=engine,
            key_by=self.key_of(),
            timestamp=_event_time,
            out_of_orderness=None,  # the connector drives event time (see CepOperator below)
            emit=self.emit_levels,
            on_error="raise" if self.on_invalid == "raise" else "side_output",
        )

    def restored(self, op: Any, snapshot: bytes) -> Any:
        """``op`` (from ``operator()``) holding ``snapshot``, or, for an event hierarchy's snapshot
        taken by the other engine (a checkpoint written before the choice of engine, or under
        another ``engine=``), an operator of that engine holding it: the state continues on the
        engine that wrote it, with the same results. ``SnapshotError`` for anything else."""
        from flowcep.runtime.snapshot import SnapshotError

        # the other engine's header, once seen, goes there directly (a bucket that keeps state
        # stays on the engine that wrote it, micro-batch after micro-batch)
        engine = self._header_engines.get(snapshot[:HEADER]) if self._other_ops else None
        if engine is None:
            try:
                op.restore(snapshot)
                return op
            except SnapshotError:
                engine = snapshot_engine(snapshot) if self.levels else None
                if engine is None or engine == self.engine:
                    raise
            self._header_engines[snapshot[:HEADER]] = engine
        other = self._other_ops.get(engine)
        if other is None:
            other = self._other_ops[engine] = self._hierarchy_operator(engine)
            if self._opened:
                self._open(other)
        other.restore(snapshot)
        return other

    def processor(self, op: Any) -> Callable[[Any, int], list[Any]]:
        """``process(event, ms)`` for ``op``: a hierarchy reads the event time from the event
        itself (its last item), for its levels' intervals too."""
        if self.levels:
            process = op.process_element
            return lambda event, ms: process(event)  # type: ignore[no-any-return]
        return op.process_element  # type: ignore[no-any-return]

    @property
    def internal_schema(self) -> str:
        """The schema of the rows the default mode emits (times as epoch ms)."""
        return LEVELS_INTERNAL_SCHEMA if self.levels else INTERNAL_SCHEMA

    def gauge_row(self, op: Any, out: list[Any]) -> None:
        """The operator's gauges as a row of kind ``stats`` (``detect``'s ``observe`` sums them
        into the query progress and leaves the row out of the results)."""
        stats = op.stats()
        doc: dict[str, Any] = {g: stats[g] for g in GAUGES}
        if stats["max_event_time"] > stats["watermark"] > LONG_MIN:
            doc["watermark_lag_ms"] = stats["max_event_time"] - stats["watermark"]
        out.append((None, STATS_KIND, None, None, None, dumps(doc)))

    # -- a task's lifecycle: the pattern's rich conditions, opened once per Spark task

    def open_task(self) -> None:
        """Open the pattern's ``RichIterativeCondition``s (every level's, for an event hierarchy)
        for this task, with a ``RuntimeContext`` naming the task's partition and giving the key
        of the element a condition runs on (``get_current_key()``, where the operator tracks it)."""
        self._open(self.operator())
        for other in self._other_ops.values():
            self._open(other)
        self._opened = True

    def _open(self, op: Any) -> None:
        from pyspark import TaskContext

        from flowcep.runtime import RuntimeContext

        task = TaskContext.get()
        index = task.partitionId() if task is not None else 0
        keyed = op if hasattr(op, "current_key") else None
        op.open(
            RuntimeContext(
                op.stats, keyed=keyed, task_name=f"flowcep (Spark partition {index})", subtask_index=index
            )
        )

    def close_task(self) -> None:
        """Close what ``open_task`` opened."""
        for op in [self._op, *self._other_ops.values()]:
            if op is not None:
                op.close()
        self._opened = False

    # -- batch: one key's events, sorted by time; then the end of input

    def run_key(self, key: tuple[Any, ...], events: list[Row], out: list[Any]) -> None:
        """One key's rows through the operator (or a bounded evaluator), then the end of input;
        with the collector's thresholds raised for that key and put back after (see
        ``flowcep.runtime.gctuning``: the key's state is young objects without cycles)."""
        with tuned_gc():
            self._run_key(key, events, out)

    def _run_key(self, key: tuple[Any, ...], events: list[Row], out: list[Any]) -> None:
        if self.evaluator != "nfa" and self.run_key_bounded(key, events, out):
            return
        op = self.operator()
        bad_key = self.key_positions is not None and None in key
        emit = self.emit
        # (an event hierarchy's or a rule set's operator has no such call: one by one below)
        history = getattr(op, "process_key_history", None)
        if history is not None and not bad_key:
            # rows sort nulls first: the rows without an event time are reported first, then the
            # key's history goes through the operator at once (no buffering: nothing is late)
            times = [_item(e, -1) for e in events]
            skip = times.count(None)
            for e in events[:skip]:
                self.invalid(key, e, None, out)
            if skip:
                events, times = events[skip:], times[skip:]
            emit(history(events, times), out)
            return
        process = self.processor(op)
        for e in events:
            ms = _item(e, -1)
            if ms is None or bad_key:
                self.invalid(key, e, ms, out)
                continue
            outputs = process(e, ms)
            if outputs:
                emit(outputs, out)
        emit(op.flush(), out)

    def run_key_bounded(self, key: tuple[Any, ...], events: list[Row], out: list[Any]) -> bool:
        """``run_key`` through the bounded evaluator (or the planner's choice); False, with
        nothing emitted, when the NFA must run instead: a null key, or a condition that raised
        (the operator then reports the row as usual)."""
        from flowcep.bounded import compile_bounded, plan, run_plan
        from flowcep.pattern import ConditionError
        from flowcep.runtime.output import MATCH, make_output

        if self.key_positions is not None and None in key:
            return False
        valid = [e for e in events if _item(e, -1) is not None]
        times = [_item(e, -1) for e in valid]
        if self._bounded is None:
            self._bounded = compile_bounded(self.pattern)
        try:
            chosen = plan(self.pattern, valid, times, self.evaluator, self._bounded)
            if chosen.evaluator == "nfa":
                return False
            matches = run_plan(chosen, self.pattern, valid, times)
        except ConditionError:
            return False
        for e in events:
            if _item(e, -1) is None:  # rows sort nulls first: no match is lost by reporting them now
                self.invalid(key, e, None, out)
        positions = self.key_positions
        op_key = None if positions is None else key[0] if len(positions) == 1 else key
        self.emit([make_output(MATCH, op_key, m, times[last]) for last, m in matches], out)
        return True

    # -- results

    def row_key(self, row: Any) -> tuple[Any, ...]:
        """The key columns' values of a row, as a tuple (``()`` without key columns)."""
        positions = self.key_positions
        return () if positions is None else tuple(row[i] for i in positions)

    def invalid(self, key: tuple[Any, ...], row: Any, ms: int | None, out: list[Any]) -> None:
        """Report a row without a usable key or event time (or raise, with ``on_error="raise"``)."""
        if self.key_names is not None and None in key:
            reason = f"the key column(s) {', '.join(self.key_names)} are null"
        elif row[self.ts_index] is None:
            reason = f"the timestamp column {self.timestamp} is null"
        else:
            reason = f"the timestamp {row[self.ts_index]!r} in column {self.timestamp} cannot be parsed"
        if self.on_invalid == "raise":
            raise InvalidRowError(f"flowcep: invalid row: {reason}: {row!r}")
        self._result(self._key_text(key), "invalid", ms, {"invalid": [row]}, ms, ms, out, reason)

    def emit(self, outputs: Iterable[Any], out: list[Any]) -> None:
        """The operator's outputs as result rows, appended to ``out``."""
        if self.levels:
            self._emit_levels(outputs, out)
            return
        key_text = self._operator_key_text
        default = self.mode == "default"
        match_row = self._match_row
        last_key: Any = _NO_KEY
        text = None
        for o in outputs:
            kind = o.kind
            value = o.value
            if o.key is not last_key:  # outputs come in runs of one key
                last_key = o.key
                text = key_text(last_key)
            if kind == "match" or kind == "timeout":
                if default:  # the common case, written out
                    first, last, doc = match_row(value)
                    out.append((text, kind, o.timestamp, first, last, doc))
                else:
                    times = [_item(e, -1) for events in value.values() for e in events]
                    first = min(times) if times else None
                    last = max(times) if times else None
                    self._result(text, kind, o.timestamp, value, first, last, out)
            elif kind == "late":
                ms = _item(value, -1)
                self._result(text, "late", o.timestamp, {"late": [value]}, ms, ms, out)
            elif kind == "dropped":  # a partial match the limit dropped (runtime/limits.py)
                match = value.match
                times = [_item(e, -1) for events in match.values() for e in events]
                self._result(text, "dropped", o.timestamp, match, min(times), max(times), out)
            else:  # a bad record: a condition raised on the row
                record = getattr(value, "record", value)
                step = getattr(value, "step", None)
                error = getattr(value, "error", str(value))
                reason = f"pattern step {step!r}: {error}" if step is not None else str(error)
                ms = record[-1] if isinstance(record, Row) else None
                self._result(text, "invalid", o.timestamp, {"invalid": [record]}, ms, ms, out, reason)

    def _emit_levels(self, outputs: Iterable[Any], out: list[Any]) -> None:
        """A hierarchy's outputs (``LevelOutput``) as result rows: a match's events are its
        complex event as plain values (``ComplexEvent.as_dict``), a timeout's its partial match,
        with each complex constituent so."""
        for o in outputs:
            kind = o.kind
            value = o.value
            level = o.level or None  # "" (raw events): null
            text = self._operator_key_text(o.key)
            if kind == "match":
                self._level_result(text, level, kind, o.timestamp, value, value.start, value.end, out)
            elif kind == "timeout":
                spans = [_span(e) for events in value.values() for e in events]
                first = min(s for s, _ in spans) if spans else None
                last = max(e for _, e in spans) if spans else None
                self._level_result(text, level, kind, o.timestamp, value, first, last, out)
            elif kind == "late":  # a raw row, or a complex event late at a level
                first, last = _span(value)
                self._level_result(text, level, kind, o.timestamp, {"late": [value]}, first, last, out)
            else:  # a bad record: an extractor or a condition raised on the row
                record = getattr(value, "record", value)
                step = getattr(value, "step", None)
                error = getattr(value, "error", str(value))
                reason = f"pattern step {step!r}: {error}" if step is not None else str(error)
                ms = record[-1] if isinstance(record, Row) else None
                self._result(text, "invalid", o.timestamp, {"invalid": [record]}, ms, ms, out, reason, level)

    def _level_result(
        self,
        key: str | None,
        level: str | None,
        kind: str,
        ts: int | None,
        value: Any,
        first: int | None,
        last: int | None,
        out: list[Any],
    ) -> None:
        """One result of a hierarchy: ``value`` is a complex event (match), a partial match
        (timeout) or ``{"late": [event]}``; the default output holds it as plain values."""
        if self.mode != "default":
            self._result(key, kind, ts, value, first, last, out, None, level)
            return
        row = self.row_dict
        doc = value.as_dict(row) if type(value) is ComplexEvent else plain_match(value, row)
        out.append((key, level, kind, ts, first, last, dumps(doc)))

    def _operator_key_text(self, key: Any) -> str | None:
        # the operator's key: None (no key columns), a value (one column) or a tuple (several)
        positions = self.key_positions
        if positions is None:
            return None
        return self._key_text((key,) if len(positions) == 1 else key)

    def _key_text(self, key: tuple[Any, ...]) -> str | None:
        if self.key_names is None:
            return None
        if len(key) == 1:
            k = key[0]
            return k if k is None or isinstance(k, str) else dumps(k) if isinstance(k, Row | dict) else str(k)
        return dumps([k.asDict(True) if isinstance(k, Row) else k for k in key])

    def row_dict(self, e: Any) -> Any:
        """An event as a dict of its columns (what the JSON output holds)."""
        if isinstance(e, self.event_class) and not self.recursive:
            return dict(zip(self.user_fields, e))  # what asDict() gives, without its Python loop
        return e.asDict(self.recursive) if isinstance(e, Row) else e

    def _match_row(self, value: dict[str, list[Any]]) -> tuple[int | None, int | None, str]:
        """A match's (or partial match's) first and last event time and its ``events`` text, in
        one pass over its events (the default output's columns)."""
        encode = self._encode_event
        if encode is None:
            times = [_item(e, -1) for events in value.values() for e in events]
            return (min(times) if times else None), (max(times) if times else None), self.events_json(value)
        steps = self._step_text
        cls = self.event_class
        first = last = None
        parts = []
        for step, events in value.items():
            head = steps.get(step)
            if head is None:
                head = steps[step] = dumps(step) + ": ["
            texts = []
            for e in events:
                t = _item(e, -1)
                if first is None or t < first:
                    first = t
                if last is None or t > last:
                    last = t
                texts.append(encode(e) if type(e) is cls else dumps(self.row_dict(e)))
            parts.append(head + ", ".join(texts) + "]")
        return first, last, "{" + ", ".join(parts) + "}"

    def events_json(self, value: dict[str, list[Any]], reason: str | None = None) -> str:
        """The JSON text of ``{step: [row dict]}`` (plus ``"reason"``): the ``events`` column."""
        if reason is None and self._encode_event is not None:
            # the usual case: each event by the encoder generated for its columns (the same
            # text as the dicts through dumps, in half the time)
            return self._match_row(value)[2]
        doc: dict[str, Any] = self.events_dict(value)
        if reason is not None:
            doc["reason"] = reason
        return dumps(doc)

    def events_dict(self, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        row = self.row_dict
        return {step: [row(e) for e in events] for step, events in value.items()}

    def _result(
        self,
        key: str | None,
        kind: str,
        ts: int | None,
        value: dict[str, list[Any]],
        first: int | None,
        last: int | None,
        out: list[Any],
        reason: str | None = None,
        level: str | None = None,
    ) -> None:
        mode = self.mode
        if mode == "default" and self.levels:
            out.append((key, level, kind, ts, first, last, self.events_json(value, reason)))
        elif mode == "default":
            out.append((key, kind, ts, first, last, self.events_json(value, reason)))
        elif mode == "format" and self.levels:  # the formatter gets the level too ("": raw rows)
            assert self.select is not None
            out.append(self.select(self, kind, key, ts, value, reason, level or ""))
        elif mode == "format":
            assert self.select is not None
            out.append(self.select(self, kind, key, ts, value, reason))
        else:
            select = self.select
            assert select is not None
            if mode == "select1":
                if kind != "match":
                    return
                result = select(value)
            else:
                result = select(kind, key, value)
            self._selected(result, out)

    def _selected(self, result: Any, out: list[Any]) -> None:
        if result is None:
            return
        if isinstance(result, list):
            for r in result:
                self._selected(r, out)
        elif isinstance(result, Row):
            fields = getattr(result, "__fields__", None)
            out.append(result.asDict(True) if fields else dict(zip(self.output_fields, result, strict=False)))
        elif isinstance(result, dict):
            out.append(result)
        elif isinstance(result, tuple):
            out.append(dict(zip(self.output_fields, result, strict=False)))
        else:
            out.append({self.output_fields[0]: result})

    @property
    def tuples(self) -> bool:
        """Whether result rows are tuples in schema order (else dicts by field name)."""
        return self.mode in ("default", "format")

    def as_rows(self, out: list[Any]) -> Iterator[Row]:
        """Results as ``Row``s (what transformWithState returns)."""
        if self.tuples:
            # Row subclasses made at C speed, whose asDict() (which pyspark calls on each) is flat
            make = result_class(tuple(self.output_fields))
            new = tuple.__new__
            return (new(make, t) for t in out)
        return (Row(**d) for d in out)


def _event_time(event: Any) -> Any:
    """An event's time in ms: its last item (what the connector appends to the user's columns)."""
    return _item(event, -1)


def _span(event: Any) -> tuple[int, int]:
    """A complex event's interval, or a raw event's time twice."""
    if type(event) is ComplexEvent:
        return event.start, event.end
    ms: int = _item(event, -1)
    return ms, ms


def is_hierarchy(pattern: Any) -> bool:
    """Whether ``pattern`` is an event hierarchy (a ``Hierarchy`` or its checked plan)."""
    return isinstance(pattern, (Hierarchy, HierarchyPlan))
