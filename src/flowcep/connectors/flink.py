"""flowcep inside PyFlink DataStream jobs: ``CEP.pattern(keyed_stream, pattern)``.

PyFlink has no CEP API; this module gives it Flink CEP's, backed by flowcep's embedded
``CepOperator``. The pattern runs in a ``KeyedProcessFunction`` that mirrors Flink's Java
``CepOperator``:

- event time (the default): record timestamps come from the stream
  (``assign_timestamps_and_watermarks``); a record with ``timestamp <= current watermark`` is
  late and goes to the late-data side output; the others are buffered per key under an
  event-time timer. When the watermark passes a key's timer, the key's buffered records up to the
  watermark run through the NFA in timestamp order and time advances to the watermark, as in
  Flink's ``CepOperator.onEventTime``; a timer is kept at the key's next deadline (next buffered
  timestamp or ``within`` timeout), so timed-out partial matches are reported without waiting
  for more input. A timer is registered per buffered timestamp, as Flink does
  (``batch_timers=True``: one pending timer per key; the same results);
- processing time: each record is matched when it arrives (with a comparator, records are
  buffered for one millisecond, on processing-time timers, as Flink does).

Each key's operator state (NFA runs, shared buffer, buffered records) lives in Flink keyed state
(one ``ValueState`` of ``PICKLED_BYTE_ARRAY``), so it is checkpointed, restored and rescaled by
Flink. While a key is in PyFlink's state cache the live operator object is reused and is
serialised only when PyFlink writes the cache back (end of bundle, eviction): tune
``python.state.cache-size`` and ``python.fn-execution.bundle.size`` (see docs/porting-guide.md).

Results: ``select`` / ``flat_select`` / ``process`` return a PyFlink ``DataStream`` whose
``get_side_output(tag)`` gives late data (``CEP.LATE_DATA`` unless ``side_output_late_data(tag)``
was set), timed-out partial matches of ``select``/``flat_select`` with a timeout function
(``CEP.TIMED_OUT`` unless a tag is given) and the ``ctx.output(tag, value)`` of a
``PatternProcessFunction``. Tags are PyFlink ``OutputTag`` objects; flowcep's own ``OutputTag``
is accepted too (same name, pickled values).
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

try:
    from pyflink.common import Types
    from pyflink.common.typeinfo import TypeInformation
    from pyflink.datastream import DataStream, KeyedStream
    from pyflink.datastream.functions import KeyedProcessFunction
    from pyflink.datastream.output_tag import OutputTag
    from pyflink.datastream.state import ValueStateDescriptor
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "flowcep.connectors.flink needs PyFlink: pip install 'flowcep[flink]' (apache-flink==2.3.*); "
        "it cannot share an environment with the spark extra, see docs/porting-guide.md"
    ) from exc

from flowcep.connectors.flink_counters import FlinkCounters
from flowcep.pattern import Pattern
from flowcep.runtime import (
    LONG_MIN,
    BadRecordError,
    CepOperator,
    Output,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
)
from flowcep.runtime import OutputTag as FlowcepOutputTag
from flowcep.runtime.functions import resolve_callable, split_select_args
from flowcep.runtime.handlers import handles_timeouts, process_methods, wire
from flowcep.runtime.limits import PartialMatchLimit
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.output import BAD_RECORD, DROPPED, LATE, MATCH, TIMEOUT

__all__ = [
    "CEP",
    "OutputTag",
    "PatternProcessFunction",
    "PatternStream",
    "ResultStream",
    "TimedOutPartialMatchHandler",
]

STATE_NAME = "flowcep-operator"
_STATE_VERSION = 1
# Keys whose live state the function keeps itself, beside PyFlink's state cache: reading a key's
# state back from PyFlink costs a round trip to the JVM and a restore once PyFlink's cache
# (python.state.cache-size, 1000 by default) is smaller than the active keys, and each record
# and each timer of a key needs its state (docs/porting-guide.md, Performance). Read when the
# job is built (the function carries it to the workers).
LIVE_KEYS = 10_000

LATE_DATA = OutputTag("late-data")
TIMED_OUT = OutputTag("timed-out")
BAD_RECORDS = OutputTag("bad-records")
DROPPED_PARTIAL_MATCHES = OutputTag("dropped-partial-matches")
# the counters the function registers in Flink's metric group (numLateRecords is Flink's name)
METRICS = ("numMatches", "numTimeouts", "numLateRecords", "numBadRecords", "numDroppedPartialMatches")

_NO_TIMESTAMP = (
    "flowcep: a record reached the event-time CEP operator without a timestamp; call "
    "assign_timestamps_and_watermarks(...) on the input stream, or use in_processing_time()"
)


def _worker_tag(tag: OutputTag) -> OutputTag:
    """The tag as the Python worker needs it: its id only (a typed tag may hold Java objects)."""
    return OutputTag(tag.tag_id)


def _flink_tag(tag: Any) -> OutputTag:
    """A PyFlink ``OutputTag`` for a PyFlink or flowcep tag."""
    if isinstance(tag, OutputTag):
        return tag
    if isinstance(tag, FlowcepOutputTag):
        type_info = tag.type_info if isinstance(tag.type_info, TypeInformation) else None
        return OutputTag(tag.name, type_info)
    raise TypeError(f"expected an OutputTag (pyflink or flowcep), got {tag!r}")


class CEP:
    """Entry point, as Flink's ``CEP`` class: ``CEP.pattern(input, pattern[, comparator])``.

    Built-in side outputs (PyFlink tags of pickled values): ``CEP.LATE_DATA``,
    ``CEP.TIMED_OUT`` (default tag of ``select``/``flat_select`` timeout results),
    ``CEP.BAD_RECORDS`` (``BadRecord`` values, with ``on_error="side_output"``) and
    ``CEP.DROPPED_PARTIAL_MATCHES`` (``DroppedPartialMatch`` values of the partial-match limit).
    """

    LATE_DATA: ClassVar[OutputTag] = LATE_DATA
    TIMED_OUT: ClassVar[OutputTag] = TIMED_OUT
    BAD_RECORDS: ClassVar[OutputTag] = BAD_RECORDS
    DROPPED_PARTIAL_MATCHES: ClassVar[OutputTag] = DROPPED_PARTIAL_MATCHES

    @staticmethod
    def pattern(
        input: DataStream,  # noqa: A002 - Flink's parameter name
        pattern: Pattern,
        comparator: Any = None,
        *,
        processing_time: bool = False,
        on_error: str = "raise",
        batch_timers: bool = False,
        max_partial_matches_per_key: int | None = None,
        on_partial_match_limit: str | None = None,
    ) -> PatternStream:
        """Detect ``pattern`` in a PyFlink stream, per key of a ``KeyedStream``.

        A non-keyed ``DataStream`` is matched as a whole, by one parallel instance (as Flink
        does). ``comparator(a, b) -> int`` (or an object with ``compare``) orders records with
        equal timestamps. ``on_error``: ``"raise"`` fails the job on a record a condition
        cannot evaluate (Flink's behaviour), ``"side_output"`` sends it to ``CEP.BAD_RECORDS``.

        ``batch_timers`` (event time): keep one pending timer per key, at its earliest
        deadline, instead of one per buffered timestamp (Flink's way). Results are the same
        either way: each firing runs the key up to the watermark, as Flink's ``onEventTime``.
        Result records carry the time of the timer that released them (at most the match's
        ``ctx.timestamp()``).

        ``max_partial_matches_per_key`` bounds each key's partial matches and
        ``on_partial_match_limit`` says what happens past it (``"drop_oldest"``, the default,
        ``"drop_newest"`` or ``"fail"``: ``flowcep.runtime.limits``); dropped ones go to
        ``CEP.DROPPED_PARTIAL_MATCHES``. (Each key has an operator of its own here, so there is
        no bound per operator.)
        """
        if not isinstance(input, DataStream):
            raise TypeError(f"CEP.pattern needs a PyFlink DataStream or KeyedStream, got {input!r}")
        if not isinstance(pattern, Pattern):
            raise TypeError(f"CEP.pattern needs a Pattern, got {pattern!r}")
        # Flink supplies the watermarks: no generated one
        options = OperatorOptions(
            out_of_orderness=None,
            comparator=comparator,
            processing_time=processing_time,
            on_error=on_error,
            partial_match_limit=PartialMatchLimit.of(
                max_partial_matches_per_key, None, on_partial_match_limit
            ),
        )
        return PatternStream(input, pattern, options, LATE_DATA, bool(batch_timers))


class PatternStream:
    """A pattern over a PyFlink stream, not yet turned into results (Flink's ``PatternStream``)."""

    __slots__ = ("input", "pattern", "options", "late_data_tag", "batch_timers")

    def __init__(
        self,
        input: DataStream,  # noqa: A002 - Flink's parameter name
        pattern: Pattern,
        options: OperatorOptions,
        late_data_tag: OutputTag,
        batch_timers: bool = False,
    ) -> None:
        self.input = input
        self.pattern = pattern
        self.options = options
        self.late_data_tag = late_data_tag
        self.batch_timers = batch_timers

    @property
    def processing_time(self) -> bool:
        return self.options.processing_time

    def _with(self, **changes: Any) -> PatternStream:
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return PatternStream(**fields)

    # -------------------------------------------------------------- configuration

    def in_processing_time(self) -> PatternStream:
        """Match in processing time: records are matched when they arrive."""
        return self._with(options=attrs.evolve(self.options, processing_time=True))

    def in_event_time(self) -> PatternStream:
        """Match in event time (the default)."""
        return self._with(options=attrs.evolve(self.options, processing_time=False))

    def side_output_late_data(self, tag: Any) -> PatternStream:
        """Send late records to ``tag`` instead of ``CEP.LATE_DATA``."""
        return self._with(late_data_tag=_flink_tag(tag))

    # -------------------------------------------------------------- results

    def select(
        self, *args: Any, output_type: Any = None, timeout_fn: Any = None, timeout_tag: Any = None
    ) -> ResultStream:
        """``select(fn)``: ``fn(match)`` per match (or an object with ``select``).

        With ``timeout_fn(partial_match, timeout_timestamp)`` its results go to the side output
        ``timeout_tag`` (default ``CEP.TIMED_OUT``); Flink's ``select(tag, timeout_fn, fn)``
        also works. ``output_type`` is the PyFlink type of the results (default: pickled).
        """
        fn, timeout_fn, timeout_tag = _parse_select("select", args, timeout_fn, timeout_tag)
        return self._build(_Spec("select", fn, timeout_fn, timeout_tag), output_type, timeout_tag)

    def flat_select(
        self, *args: Any, output_type: Any = None, timeout_fn: Any = None, timeout_tag: Any = None
    ) -> ResultStream:
        """``flat_select(fn)``: ``fn(match, out)`` emits any number of results with ``out.collect(x)``.

        ``timeout_fn(partial_match, timeout_timestamp, out)`` collects into ``timeout_tag``
        (default ``CEP.TIMED_OUT``); Flink's ``flat_select(tag, timeout_fn, fn)`` also works.
        """
        fn, timeout_fn, timeout_tag = _parse_select("flat_select", args, timeout_fn, timeout_tag)
        return self._build(_Spec("flat_select", fn, timeout_fn, timeout_tag), output_type, timeout_tag)

    def process(self, fn: Any, output_type: Any = None) -> ResultStream:
        """``process(PatternProcessFunction)``; a plain ``fn(match, ctx, out)`` works too.

        If ``fn`` is also a ``TimedOutPartialMatchHandler`` (or defines
        ``process_timed_out_match``), timed-out partial matches go to it.
        """
        process_methods(fn)  # (a TypeError now for what is neither)
        return self._build(_Spec("process", fn, None, None), output_type)

    def _build(self, spec: _Spec, output_type: Any, timeout_tag: OutputTag | None = None) -> ResultStream:
        stream = self.input
        keyed = isinstance(stream, KeyedStream)
        if not keyed:
            stream = stream.key_by(_constant_key, key_type=Types.INT())
        function = _CepFunction(
            self.pattern,
            spec,
            options=self.options,
            late_data_tag=_worker_tag(self.late_data_tag),
            batch_timers=self.batch_timers,
        )
        result = stream.process(function, output_type=output_type)
        result.name("CepOperator")
        if not keyed:
            result.set_parallelism(1).set_max_parallelism(1)
        # PyFlink routes ``yield tag, value`` to side outputs only for operators with a side
        # output in the job graph (otherwise the pairs would leak into the main output), so the
        # tags this operator writes to are always registered.
        tags = [self.late_data_tag]
        if spec.timeout_tag is not None and timeout_tag is not None:
            tags.append(timeout_tag)
        if self.options.on_error == "side_output":
            tags.append(BAD_RECORDS)
        if self.options.partial_match_limit is not None:
            tags.append(DROPPED_PARTIAL_MATCHES)
        _register_side_outputs(result, tags)
        return ResultStream(result._j_data_stream)

    inProcessingTime = in_processing_time
    inEventTime = in_event_time
    sideOutputLateData = side_output_late_data
    flatSelect = flat_select


class ResultStream(DataStream):
    """The PyFlink ``DataStream`` of results; ``get_side_output`` also takes flowcep tags."""

    def get_side_output(self, output_tag: Any) -> DataStream:
        return super().get_side_output(_flink_tag(output_tag))

    getSideOutput = get_side_output


def _register_side_outputs(result: DataStream, tags: list[OutputTag]) -> None:
    j_stream = result._j_data_stream
    j_env = j_stream.getExecutionEnvironment()
    for tag in tags:
        j_env.addOperator(j_stream.getSideOutput(tag.get_java_output_tag()).getTransformation())


def _constant_key(_: Any) -> int:
    return 0


# ------------------------------------------------------------------ the function


class _Spec:
    """What to do with matches and timeouts: ``select``, ``flat_select`` or ``process``."""

    __slots__ = ("kind", "fn", "timeout_fn", "timeout_tag")

    def __init__(self, kind: str, fn: Any, timeout_fn: Any, timeout_tag: OutputTag | None) -> None:
        self.kind = kind
        self.fn = fn
        self.timeout_fn = timeout_fn
        self.timeout_tag = (
            _worker_tag(timeout_tag) if timeout_fn is not None and timeout_tag is not None else None
        )

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.kind, self.fn, self.timeout_fn, self.timeout_tag)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.kind, self.fn, self.timeout_fn, self.timeout_tag = state

    @property
    def timeout_handling(self) -> bool:
        return handles_timeouts(self.kind, self.fn, self.timeout_fn)


class _KeyState:
    """One key's operator, as kept in the ``ValueState``.

    Pickles to the operator's snapshot bytes (and, with ``batch_timers``, the key's earliest
    pending event-time timer); unpickled, it holds the bytes until the function restores them
    into an operator (``op``).
    """

    __slots__ = ("op", "data", "timer")

    def __init__(self, op: CepOperator | None = None, data: bytes | None = None) -> None:
        self.op = op
        self.data = data
        self.timer: int | None = None

    def __getstate__(self) -> tuple[int, bytes | None, int | None]:
        # a plain pickle (canonical=False): these bytes are only ever restored, never compared
        data = self.op.snapshot(canonical=False) if self.op is not None else self.data
        return (_STATE_VERSION, data, self.timer)

    def __setstate__(self, state: tuple[int, bytes | None, int | None]) -> None:
        version, data, timer = state
        if version != _STATE_VERSION:
            raise ValueError(f"flowcep: unknown connector state version {version}")
        self.op = None
        self.data = data
        self.timer = timer


class _Context:
    """``PatternProcessFunction.Context`` inside PyFlink: ``timestamp()``,
    ``current_processing_time()``, ``output(tag, value)``, ``get_current_key()``."""

    __slots__ = ("_timestamp", "_key", "_timer_service", "_out", "_tags")

    def __init__(self) -> None:
        self._timestamp: int | None = None
        self._key: Any = None
        self._timer_service: Any = None
        self._out: list[Any] = []
        self._tags: dict[str, OutputTag] = {}

    def timestamp(self) -> int | None:
        return self._timestamp

    def current_processing_time(self) -> int:
        return self._timer_service.current_processing_time()  # type: ignore[no-any-return]

    def output(self, tag: Any, value: Any) -> None:
        if isinstance(tag, FlowcepOutputTag):  # the worker needs the name only
            worker_tag = self._tags.get(tag.name)
            if worker_tag is None:
                worker_tag = self._tags[tag.name] = OutputTag(tag.name)
            tag = worker_tag
        elif not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag (pyflink or flowcep), got {tag!r}")
        self._out.append((tag, value))

    def get_current_key(self) -> Any:
        return self._key

    currentProcessingTime = current_processing_time
    getCurrentKey = get_current_key


class _CepFunction(KeyedProcessFunction):
    """The ``KeyedProcessFunction`` hosting one ``CepOperator`` per key (see the module doc)."""

    def __init__(
        self,
        pattern: Pattern,
        spec: _Spec,
        *,
        options: OperatorOptions,
        late_data_tag: OutputTag,
        batch_timers: bool = False,
    ) -> None:
        self.pattern = pattern
        self.spec = spec
        self.options = options
        self.processing_time = options.processing_time  # read per record
        self.late_data_tag = late_data_tag
        self.batch_timers = batch_timers
        self.live_keys = LIVE_KEYS

    # -------------------------------------------------------------- lifecycle

    def open(self, runtime_context: Any) -> None:
        self._now = LONG_MIN
        self._spare: CepOperator | None = None
        # every change is written to the ValueState too (what checkpoints hold); a restarted
        # task opens the function again, with an empty cache
        self._live: OrderedDict[Any, _KeyState] = OrderedDict()
        template = CepOperator.from_options(
            self.pattern,
            attrs.evolve(self.options, clock=self._clock),  # Flink's processing-time service
            timeout_handling=self.spec.timeout_handling,
        )
        self._template = template
        # the pattern's RichIterativeConditions: once per subtask (the keys' operators share them)
        template.open(runtime_context)
        self._state = runtime_context.get_state(ValueStateDescriptor(STATE_NAME, Types.PICKLED_BYTE_ARRAY()))
        self._context = _Context()
        self._counters = FlinkCounters(runtime_context.get_metrics_group(), METRICS)
        self._on_match, self._on_timeout = wire(
            self.spec.kind, self.spec.fn, self.spec.timeout_fn, self._context
        )
        _call_open(self.spec.fn, runtime_context)
        if self.spec.timeout_fn is not None and self.spec.timeout_fn is not self.spec.fn:
            _call_open(self.spec.timeout_fn, runtime_context)

    def close(self) -> None:
        for fn in {id(f): f for f in (self.spec.fn, self.spec.timeout_fn) if f is not None}.values():
            close = getattr(fn, "close", None)
            if callable(close):
                close()
        self._template.close()

    def _clock(self) -> int:
        return self._now

    def _operator(self, ks: _KeyState) -> CepOperator:
        if ks.data is None and self._spare is not None:
            # the operator of a key that emptied: it holds no state, and its clock is behind
            # Flink's (timers fire at or before the watermark), so it serves any new key
            op, self._spare = self._spare, None
            ks.op = op
            return op
        op = copy.copy(self._template)  # shares the compiled NFA; reset/restore give it its own state
        if ks.data is None:
            op.reset()
        else:
            op.restore(ks.data)
        ks.op = op
        ks.data = None
        return op

    # -------------------------------------------------------------- records and timers

    def process_element(self, value: Any, ctx: Any) -> Any:
        if self._counters.container is None:
            self._counters.bind()
        timer_service = ctx.timer_service()
        if self.processing_time:
            self._now = timer_service.current_processing_time()
            key = ctx.get_current_key()
            ks = self._lookup(key)
            stored = ks is not None
            if ks is None:
                ks = _KeyState()
            op = ks.op or self._operator(ks)
            outputs = self._run(op.process_element, value)
            deadline = op.next_deadline()
            if deadline is not None:
                timer_service.register_processing_time_timer(deadline)
        else:
            timestamp = ctx.timestamp()
            if timestamp is None or timestamp == LONG_MIN:
                raise ValueError(_NO_TIMESTAMP)
            if timestamp <= timer_service.current_watermark():
                self._counters.inc("numLateRecords")
                return ((self.late_data_tag, value),)
            key = ctx.get_current_key()
            ks = self._lookup(key)
            stored = ks is not None
            if ks is None:
                ks = _KeyState()
            op = ks.op or self._operator(ks)
            outputs = self._run(op.process_element, value, timestamp)
            # a record the operator kept needs a timer at its time (one it dropped, an inert
            # record of a key without state, needs none)
            if op.has_state():
                if not self.batch_timers:
                    timer_service.register_event_time_timer(timestamp)  # as Flink's CepOperator
                elif ks.timer is None or timestamp < ks.timer:
                    timer_service.register_event_time_timer(timestamp)
                    ks.timer = timestamp
        self._store(key, ks, op, stored)
        if outputs:
            return self._emit(outputs, ctx)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key = ctx.get_current_key()
        ks = self._lookup(key)
        if ks is None:
            return ()  # a timer left from a key whose state has been cleared
        op = ks.op or self._operator(ks)
        timer_service = ctx.timer_service()
        if self.processing_time:
            self._now = max(timestamp, timer_service.current_processing_time())
            outputs = self._run(op.process_watermark, timestamp)
            deadline = op.next_deadline()
            if deadline is not None:
                timer_service.register_processing_time_timer(deadline)
        else:
            # as Flink's CepOperator.onEventTime: everything buffered up to the current
            # watermark, then time advanced to it (a match that only the passing of time
            # releases carries the watermark as its timestamp)
            timer = ks.timer
            if timer is not None and timer <= timestamp:
                ks.timer = None
            watermark = max(timestamp, timer_service.current_watermark())
            deadline = op.next_deadline()
            if deadline is not None and deadline <= watermark:
                outputs = self._run(op.process_watermark, watermark)
                deadline = op.next_deadline()
            elif ks.timer == timer:
                # a timer with nothing due (another firing ran the key already): advancing would
                # change nothing but the operator's own watermark, so the state is not rewritten
                return ()
            else:
                outputs = []
            if deadline is not None and (ks.timer is None or deadline < ks.timer):
                timer_service.register_event_time_timer(deadline)
                if self.batch_timers:
                    ks.timer = deadline
        self._store(key, ks, op, True)
        if outputs:
            return self._emit(outputs, ctx)
        return ()

    def _lookup(self, key: Any) -> _KeyState | None:
        """The key's state: live if the function holds it, else from the ValueState."""
        live = self._live
        ks = live.get(key)
        if ks is None:
            return self._state.value()  # type: ignore[no-any-return]
        live.move_to_end(key)
        return ks

    def _store(self, key: Any, ks: _KeyState, op: CepOperator, stored: bool) -> None:
        """Write the key's state back, or clear it (if stored) once the operator holds nothing."""
        live = self._live
        if op.has_state():
            self._state.update(ks)
            if key not in live:
                live[key] = ks
                if len(live) > self.live_keys:
                    live.popitem(last=False)
        else:
            if stored:
                self._state.clear()
                live.pop(key, None)
            self._spare = op

    @staticmethod
    def _run(call: Callable[..., list[Output]], *args: Any) -> list[Output]:
        try:
            return call(*args)
        except BadRecordError as exc:  # a condition raised: fail the job, as Flink does
            raise RuntimeError(f"flowcep: {exc}") from exc

    # -------------------------------------------------------------- results

    def _emit(self, outputs: list[Output], ctx: Any) -> list[Any]:
        out: list[Any] = []
        context = self._context
        context._key = ctx.get_current_key()
        context._timer_service = ctx.timer_service()
        context._out = out
        on_match = self._on_match
        on_timeout = self._on_timeout
        main = out.append
        tag = self.spec.timeout_tag

        def side(value: Any) -> None:
            out.append((tag, value))

        matches = timeouts = 0
        for o in outputs:
            kind = o.kind
            if kind == MATCH:
                matches += 1
                context._timestamp = o.timestamp
                on_match(o, main, side)
            elif kind == TIMEOUT:
                timeouts += 1
                if on_timeout is not None:
                    context._timestamp = o.timestamp
                    on_timeout(o, main, side)
            elif kind == LATE:
                self._counters.inc("numLateRecords")
                out.append((self.late_data_tag, o.value))
            elif kind == BAD_RECORD:
                self._counters.inc("numBadRecords")
                out.append((BAD_RECORDS, o.value))
            elif kind == DROPPED:
                self._counters.inc("numDroppedPartialMatches")
                # (the key's own operator has no key function: the key is Flink's)
                out.append((DROPPED_PARTIAL_MATCHES, attrs.evolve(o.value, key=context._key)))
        if matches:
            self._counters.inc("numMatches", matches)
        if timeouts:
            self._counters.inc("numTimeouts", timeouts)
        return out


# ------------------------------------------------------------------ helpers


def _parse_select(
    name: str, args: tuple[Any, ...], timeout_fn: Any, timeout_tag: Any
) -> tuple[Any, Any, Any]:
    fn, timeout_fn, timeout_tag = split_select_args(
        name, args, timeout_fn, timeout_tag, (OutputTag, FlowcepOutputTag)
    )
    resolve_callable(fn, "select", "flat_select", "flatSelect")
    if timeout_fn is not None:
        resolve_callable(timeout_fn, "timeout")
    timeout_tag = TIMED_OUT if timeout_tag is None else _flink_tag(timeout_tag)
    return fn, timeout_fn, timeout_tag


def _call_open(fn: Any, runtime_context: Any) -> None:
    """Call ``fn.open`` if present, passing PyFlink's ``RuntimeContext`` if it takes one."""
    open_ = getattr(fn, "open", None)
    if open_ is None or not callable(open_) or isinstance(fn, type):
        return
    try:
        params = [
            p
            for p in inspect.signature(open_).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        open_(runtime_context)
        return
    if params:
        open_(runtime_context)
    else:
        open_()
