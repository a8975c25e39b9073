"""What ``select``, ``flat_select`` and ``process`` do with a match or a timed-out partial match:
the one wiring of user functions to the operator's outputs, for the pull API and the connectors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from flowcep.runtime.functions import (
    Collector,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
    find_method,
    resolve_callable,
)
from flowcep.runtime.output import Output

KINDS: Final = ("select", "flat_select", "process")

Sink = Callable[[Any], Any]
# a handler's arguments: the operator's output, where main results go, where timeout results go
Handler = Callable[[Output, Sink, Sink], None]


def process_methods(fn: Any) -> tuple[Callable[..., Any], Callable[..., Any] | None]:
    """A process function's ``process_match`` (or ``fn`` itself, a plain ``fn(match, ctx, out)``)
    and its ``process_timed_out_match`` (None: it has none)."""
    process_match = find_method(fn, "process_match", "processMatch", PatternProcessFunction)
    if process_match is None:
        if not callable(fn):
            raise TypeError(f"process needs a PatternProcessFunction or a callable, got {fn!r}")
        process_match = fn
    timed_out = find_method(
        fn, "process_timed_out_match", "processTimedOutMatch", TimedOutPartialMatchHandler
    )
    return process_match, timed_out


def handles_timeouts(kind: str, fn: Any, timeout_fn: Any) -> bool:
    """Whether the results need timed-out partial matches (else the operator need not make them)."""
    if kind == "process":
        return process_methods(fn)[1] is not None
    return timeout_fn is not None


def wire(kind: str, fn: Any, timeout_fn: Any, context: Any) -> tuple[Handler, Handler | None]:
    """The handlers of matches and of timed-out partial matches (None: those are dropped).

    ``select``: ``fn(match)`` is a main result, ``timeout_fn(match, timestamp)`` a timeout result.
    ``flat_select``: ``fn(match, out)`` and ``timeout_fn(match, timestamp, out)`` collect them.
    ``process``: ``process_match(match, context, out)``; ``process_timed_out_match(match,
    context)`` emits through ``context``, which the caller points at the output's key and time.
    """
    if kind == "select":
        select = resolve_callable(fn, "select")

        def on_match(o: Output, main: Sink, side: Sink) -> None:
            main(select(o.value))

        if timeout_fn is None:
            return on_match, None
        timeout = resolve_callable(timeout_fn, "timeout")

        def on_timeout(o: Output, main: Sink, side: Sink) -> None:
            side(timeout(o.value, o.timestamp))

        return on_match, on_timeout
    if kind == "flat_select":
        flat = resolve_callable(fn, "flat_select", "flatSelect")

        def on_flat_match(o: Output, main: Sink, side: Sink) -> None:
            flat(o.value, Collector(main))

        if timeout_fn is None:
            return on_flat_match, None
        flat_timeout = resolve_callable(timeout_fn, "timeout")

        def on_flat_timeout(o: Output, main: Sink, side: Sink) -> None:
            flat_timeout(o.value, o.timestamp, Collector(side))

        return on_flat_match, on_flat_timeout
    if kind != "process":
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    process_match, timed_out = process_methods(fn)

    def on_process_match(o: Output, main: Sink, side: Sink) -> None:
        process_match(o.value, context, Collector(main))

    if timed_out is None:
        return on_process_match, None

    def on_process_timeout(o: Output, main: Sink, side: Sink) -> None:
        timed_out(o.value, context)

    return on_process_match, on_process_timeout
