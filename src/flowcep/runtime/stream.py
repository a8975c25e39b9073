"""``CEP.pattern(events, pattern)`` -> ``PatternStream`` -> lazy result streams.

The result of ``select``/``flat_select``/``process`` is a single-pass iterator: iterating it pulls
input events through a ``CepOperator`` only as far as needed, so an unbounded generator works
and memory stays bounded by the pattern's window. Side outputs (late data, timed-out matches,
bad records, the function's own ``ctx.output``) are collected while iterating and read with
``result.get_side_output(tag)``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from flowcep.pattern import Pattern, to_millis
from flowcep.runtime.bounded import bounded_outputs, check_evaluator, nfa_only
from flowcep.runtime.context import RuntimeContext
from flowcep.runtime.functions import (
    Context,
    OutputTag,
    call_close,
    call_open,
    split_select_args,
)
from flowcep.runtime.handlers import Handler, handles_timeouts, wire
from flowcep.runtime.limits import PartialMatchLimit
from flowcep.runtime.operator import CepOperator
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.output import BAD_RECORD, DROPPED, LATE, MATCH, TIMEOUT, BadRecordError, Output
from flowcep.runtime.quiet import TICK, TimedFeed
from flowcep.runtime.timestamps import wall_clock_millis

if TYPE_CHECKING:
    from flowcep.runtime.multistream import PatternSetStream

LATE_DATA = OutputTag("late-data")
TIMED_OUT = OutputTag("timed-out")
BAD_RECORDS = OutputTag("bad-records")
DROPPED_PARTIAL_MATCHES = OutputTag("dropped-partial-matches")


class CEP:
    """Entry point, as Flink's ``CEP`` class: ``CEP.pattern(events, pattern, ...)``.

    Built-in side outputs: ``CEP.LATE_DATA`` (late events), ``CEP.TIMED_OUT`` (default tag of
    ``select``/``flat_select`` timeout results), ``CEP.BAD_RECORDS`` (``BadRecord`` values, with
    ``on_error="side_output"``), ``CEP.DROPPED_PARTIAL_MATCHES`` (``DroppedPartialMatch`` values
    of the partial-match limit).
    """

    LATE_DATA: ClassVar[OutputTag] = LATE_DATA
    TIMED_OUT: ClassVar[OutputTag] = TIMED_OUT
    BAD_RECORDS: ClassVar[OutputTag] = BAD_RECORDS
    DROPPED_PARTIAL_MATCHES: ClassVar[OutputTag] = DROPPED_PARTIAL_MATCHES

    @staticmethod
    def pattern(
        events: Iterable[Any],
        pattern: Pattern,
        *,
        key_by: Callable[[Any], Hashable] | str | None = None,
        timestamp: Callable[[Any], int] | str | None = None,
        out_of_orderness: Any = 0,
        comparator: Any = None,
        processing_time: bool = False,
        clock: Callable[[], int] | None = None,
        on_error: str = "raise",
        evaluator: str = "nfa",
        max_partial_matches_per_key: int | None = None,
        max_partial_matches: int | None = None,
        on_partial_match_limit: str | None = None,
        job_parameters: Mapping[str, Any] | None = None,
        quiet_timeouts: bool = False,
    ) -> PatternStream:
        """Detect ``pattern`` in ``events`` (any iterable, possibly unbounded); see ``CepOperator``.

        ``key_by`` and ``timestamp`` are functions of the event, or field names (``key_by="user"``:
        ``event["user"]`` for a dict, else ``event.user``).

        ``evaluator``: ``"nfa"`` (the default), or for a finite, sized collection ``"optiseq"``,
        ``"tree"`` or ``"auto"`` (the planner's choice): the bounded-data evaluators of
        docs/bounded.md, which give the same matches on the patterns they serve.

        ``max_partial_matches_per_key`` / ``max_partial_matches`` (per operator) bound the partial
        matches; ``on_partial_match_limit`` is what happens past them: ``"drop_oldest"`` (the
        default), ``"drop_newest"`` or ``"fail"`` (see ``flowcep.runtime.limits``). Dropped ones
        go to the side output ``CEP.DROPPED_PARTIAL_MATCHES``. None: Flink's unbounded state.

        ``job_parameters``: what ``RuntimeContext.get_job_parameter(name)`` gives the functions'
        and rich conditions' ``open(context)`` (Flink's global job parameters).

        ``quiet_timeouts`` (processing time, beyond Flink): a partial match times out at start +
        window even when no element arrives; the input is then read in a thread of its own
        (``flowcep.runtime.quiet``). Flink, and the default, time out only when an element
        arrives."""
        if not isinstance(pattern, Pattern):
            raise TypeError(f"CEP.pattern needs a Pattern, got {pattern!r}")
        check_evaluator(evaluator, events, pattern)
        options = OperatorOptions(
            key_by=key_by,
            timestamp=timestamp,
            out_of_orderness=out_of_orderness,
            comparator=comparator,
            processing_time=processing_time,
            clock=clock,
            on_error=on_error,
            partial_match_limit=PartialMatchLimit.of(
                max_partial_matches_per_key, max_partial_matches, on_partial_match_limit
            ),
            quiet_timeouts=quiet_timeouts,
        )
        return PatternStream(events, pattern, options, evaluator=evaluator, job_parameters=job_parameters)

    @staticmethod
    def patterns(
        items: Iterable[Any],
        patterns: Any = (),
        *,
        key_by: Callable[[Any], Hashable] | str | None = None,
        timestamp: Callable[[Any], int] | str | None = None,
        out_of_orderness: Any = 0,
        comparator: Any = None,
        processing_time: bool = False,
        clock: Callable[[], int] | None = None,
        on_error: str = "raise",
        is_control: Callable[[Any], bool] | None = None,
        loader: Callable[[Any], Any] | None = None,
    ) -> PatternSetStream:
        """Named, versioned patterns over ``items``, a stream of events and control records that
        add, replace and remove patterns between elements (``MultiPatternOperator``; see
        ``flowcep.runtime.multistream``). ``patterns``: name -> ``(version, Pattern)``, or
        ``PatternUpdate``s. A control record is a ``PatternUpdate``, or an item for which
        ``is_control(item)`` holds, loaded by ``loader(item)`` (default: a JSON rule record).
        The other keywords are ``CEP.pattern``'s. Yields ``PatternOutput``s lazily."""
        from flowcep.runtime.multistream import PatternSetStream

        options = OperatorOptions(
            key_by=key_by,
            timestamp=timestamp,
            out_of_orderness=out_of_orderness,
            comparator=comparator,
            processing_time=processing_time,
            clock=clock,
            on_error=on_error,
        )
        return PatternSetStream(items, patterns, options, is_control, loader)


@attrs.frozen(slots=True)
class PatternStream:
    """A pattern over a stream, not yet consumed (Flink's ``PatternStream``)."""

    events: Iterable[Any]
    pattern: Pattern
    options: OperatorOptions = OperatorOptions()
    late_data_tag: OutputTag = LATE_DATA
    evaluator: str = "nfa"
    dropped_tag: OutputTag = DROPPED_PARTIAL_MATCHES
    job_parameters: Mapping[str, Any] | None = None

    # -------------------------------------------------------------- configuration

    @property
    def processing_time(self) -> bool:
        return self.options.processing_time

    def in_processing_time(self) -> PatternStream:
        return attrs.evolve(self, options=attrs.evolve(self.options, processing_time=True))

    def in_event_time(self) -> PatternStream:
        return attrs.evolve(self, options=attrs.evolve(self.options, processing_time=False))

    def side_output_late_data(self, tag: OutputTag) -> PatternStream:
        """Send late events to ``tag`` instead of ``CEP.LATE_DATA``."""
        if not isinstance(tag, OutputTag):
            raise TypeError(f"side_output_late_data needs an OutputTag, got {tag!r}")
        return attrs.evolve(self, late_data_tag=tag)

    def side_output_dropped_partial_matches(self, tag: OutputTag) -> PatternStream:
        """Send partial matches dropped by the limit to ``tag`` instead of
        ``CEP.DROPPED_PARTIAL_MATCHES``."""
        if not isinstance(tag, OutputTag):
            raise TypeError(f"side_output_dropped_partial_matches needs an OutputTag, got {tag!r}")
        return attrs.evolve(self, dropped_tag=tag)

    # -------------------------------------------------------------- results

    def select(
        self, *args: Any, timeout_fn: Any = None, timeout_tag: OutputTag | None = None
    ) -> ResultStream:
        """``select(fn)``: ``fn(match)`` per match.

        With ``timeout_fn(partial_match, timeout_timestamp)`` its results go to the side output
        ``timeout_tag`` (default ``CEP.TIMED_OUT``); Flink's ``select(tag, timeout_fn, fn)`` also works.
        """
        fn, timeout_fn, timeout_tag = _parse_select("select", args, timeout_fn, timeout_tag)
        return ResultStream(self, "select", fn, timeout_fn, timeout_tag)

    def flat_select(
        self, *args: Any, timeout_fn: Any = None, timeout_tag: OutputTag | None = None
    ) -> ResultStream:
        """``flat_select(fn)``: ``fn(match, out)`` emits any number of results with ``out.collect(x)``.

        ``timeout_fn(partial_match, timeout_timestamp, out)`` collects into ``timeout_tag``
        (default ``CEP.TIMED_OUT``); Flink's ``flat_select(tag, timeout_fn, fn)`` also works.
        """
        fn, timeout_fn, timeout_tag = _parse_select("flat_select", args, timeout_fn, timeout_tag)
        return ResultStream(self, "flat_select", fn, timeout_fn, timeout_tag)

    def process(self, fn: Any) -> ResultStream:
        """``process(PatternProcessFunction)``; a plain ``fn(match, ctx, out)`` works too.

        If ``fn`` is also a ``TimedOutPartialMatchHandler`` (or defines
        ``process_timed_out_match``), timed-out partial matches go to it.
        """
        return ResultStream(self, "process", fn, None, TIMED_OUT)

    inProcessingTime = in_processing_time
    inEventTime = in_event_time
    sideOutputLateData = side_output_late_data
    flatSelect = flat_select


class ResultStream(Iterator[Any]):
    """The lazily computed main output; ``get_side_output(tag)`` reads a side output.

    Single pass. Items of a side output that is never read stay in memory until read.
    """

    def __init__(
        self, stream: PatternStream, kind: str, fn: Any, timeout_fn: Any, timeout_tag: OutputTag
    ) -> None:
        """The results of ``kind`` (``select``, ``flat_select`` or ``process``) with ``fn`` (and
        ``timeout_fn``, whose results go to the side output ``timeout_tag``)."""
        options = stream.options
        timeout_handling = handles_timeouts(kind, fn, timeout_fn)
        self._main: deque[Any] = deque()
        self._side: dict[OutputTag, deque[Any]] = {}
        self._context = Context(options.clock or wall_clock_millis, self._emit_side)
        on_match, on_timeout = wire(kind, fn, timeout_fn, self._context)
        self.operator = CepOperator.from_options(stream.pattern, options, timeout_handling=timeout_handling)
        self._source = stream.events
        self._iterator: Iterator[Any] | None = None
        self._function = fn
        # a timeout function of its own is opened and closed too (Flink's RichFunction)
        self._timeout_function = timeout_fn if timeout_fn is not None and timeout_fn is not fn else None
        self.runtime_context = RuntimeContext(self.operator.stats, stream.job_parameters, self.operator)
        self._late_tag = stream.late_data_tag
        self._dropped_tag = stream.dropped_tag
        self._finished = False
        self._error: BaseException | None = None
        self._on_match: Handler = on_match
        self._on_timeout: Handler | None = on_timeout
        self._timeout_sink = self._side_queue(timeout_tag).append
        self._evaluator = stream.evaluator
        if self._evaluator != "nfa" and nfa_only(
            self._evaluator,
            timeout_handling=timeout_handling,
            processing_time=options.processing_time,
            comparator=options.comparator,
            limited=options.partial_match_limit is not None,
        ):
            self._evaluator = "nfa"

    # -------------------------------------------------------------- iteration

    def __iter__(self) -> ResultStream:
        return self

    def __next__(self) -> Any:
        main = self._main
        while not main:
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if not self._pump():
                raise StopIteration
        return main.popleft()

    def get_side_output(self, tag: OutputTag) -> SideOutputStream:
        """The side output ``tag``, read lazily (pulling input as needed, buffering the main output)."""
        if not isinstance(tag, OutputTag):
            raise TypeError(f"get_side_output needs an OutputTag, got {tag!r}")
        return SideOutputStream(self, tag)

    getSideOutput = get_side_output

    def stats(self) -> dict[str, int]:
        """The operator's counters and gauges (see ``CepOperator.stats``)."""
        return self.operator.stats()

    # -------------------------------------------------------------- internals

    def _side_queue(self, tag: OutputTag) -> deque[Any]:
        queue = self._side.get(tag)
        if queue is None:
            queue = self._side[tag] = deque()
        return queue

    def _emit_side(self, tag: OutputTag, value: Any) -> None:
        self._side_queue(tag).append(value)

    def _pump(self) -> bool:
        """Feed input until something is emitted or the input ends; False once all is done."""
        if self._finished:
            return False
        iterator = self._iterator
        if iterator is None:
            self._open()
            if self._evaluator != "nfa" and self._run_bounded():
                return True
            iterator = self._iterator = self._input()
        process = self._process if self.operator.options.quiet_timeouts else self.operator.process_element
        try:
            for event in iterator:
                outputs = process(event)
                if outputs:
                    self._dispatch(outputs)
                    return True
            outputs = self.operator.flush()
        except BadRecordError as exc:
            self._finished = True
            self._error = exc
            self._dispatch(exc.outputs)
            self._close()
            return True
        self._finished = True
        self._dispatch(outputs)
        self._close()
        return True

    def _input(self) -> Iterator[Any]:
        """The source's iterator, or with quiet timeouts a ``TimedFeed`` of it."""
        op = self.operator
        if not op.options.quiet_timeouts:
            return iter(self._source)
        return TimedFeed(self._source, op.next_processing_timeout, op.options.clock or wall_clock_millis)

    def _process(self, event: Any) -> list[Output]:
        """An element of a ``TimedFeed``, or its ``TICK``: the timeouts due now."""
        if event is TICK:
            return self.operator.advance_processing_time()
        return self.operator.process_element(event)

    def _open(self) -> None:
        """Open the rich conditions, the function and the timeout function, once."""
        context = self.runtime_context
        self.operator.open(context)
        call_open(self._function, context)
        if self._timeout_function is not None:
            call_open(self._timeout_function, context)

    def _close(self) -> None:
        call_close(self._function)
        if self._timeout_function is not None:
            call_close(self._timeout_function)
        self.operator.close()

    def _run_bounded(self) -> bool:
        """The whole run through a bounded evaluator (runtime/bounded.py); False: use the NFA."""
        options = self.operator.options
        outputs = bounded_outputs(
            self._source,
            self.operator.pattern,
            self._evaluator,
            key_by=options.key_by,
            timestamp=options.timestamp,
            out_of_orderness=to_millis(options.out_of_orderness),
            clock=options.clock,
        )
        if outputs is None:
            return False
        self._finished = True
        self._dispatch(outputs)
        self._close()
        return True

    def _dispatch(self, outputs: list[Output]) -> None:
        ctx = self._context
        op = self.operator
        main = self._main.append
        for o in outputs:
            kind = o.kind
            if kind == MATCH:
                op.current_key = ctx.key = o.key
                ctx._timestamp = o.timestamp
                self._on_match(o, main, self._timeout_sink)
            elif kind == TIMEOUT:
                if self._on_timeout is not None:
                    op.current_key = ctx.key = o.key
                    ctx._timestamp = o.timestamp
                    self._on_timeout(o, main, self._timeout_sink)
            elif kind == LATE:
                self._side_queue(self._late_tag).append(o.value)
            elif kind == BAD_RECORD:
                self._side_queue(BAD_RECORDS).append(o.value)
            elif kind == DROPPED:
                self._side_queue(self._dropped_tag).append(o.value)


class SideOutputStream(Iterator[Any]):
    """One side output of a ``ResultStream``; iterating drains what has been collected so far,
    pulling more input when empty."""

    def __init__(self, result: ResultStream, tag: OutputTag) -> None:
        self._result = result
        self.tag = tag

    def __iter__(self) -> SideOutputStream:
        return self

    def __next__(self) -> Any:
        result = self._result
        queue = result._side_queue(self.tag)
        while not queue:
            if result._error is not None:
                error, result._error = result._error, None
                raise error
            if not result._pump():
                raise StopIteration
        return queue.popleft()


def _parse_select(
    name: str, args: tuple[Any, ...], timeout_fn: Any, timeout_tag: Any
) -> tuple[Any, Any, OutputTag]:
    fn, timeout_fn, timeout_tag = split_select_args(name, args, timeout_fn, timeout_tag, (OutputTag,))
    if timeout_tag is None:
        timeout_tag = TIMED_OUT
    elif not isinstance(timeout_tag, OutputTag):
        raise TypeError(f"timeout_tag must be an OutputTag, got {timeout_tag!r}")
    return fn, timeout_fn, timeout_tag
