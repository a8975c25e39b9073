"""User-function types of the PatternStream API (Flink's ``PatternProcessFunction`` family)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import attrs

Match = dict[str, list[Any]]


@attrs.frozen(slots=True)
class OutputTag:
    """Names a side output (Flink's ``OutputTag``); tags with the same name are the same output."""

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    type_info: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def id(self) -> str:
        return self.name

    def get_id(self) -> str:
        return self.name

    getId = get_id


class Collector:
    """Where ``flat_select`` and ``process`` functions put results: ``out.collect(value)``."""

    __slots__ = ("_sink",)

    def __init__(self, sink: Callable[[Any], Any]) -> None:
        self._sink = sink

    def collect(self, value: Any) -> None:
        self._sink(value)

    def close(self) -> None:
        """No-op, as Flink's collectors inside CEP functions."""


class Context:
    """What a process function sees besides the match (Flink's ``PatternProcessFunction.Context``).

    ``timestamp()`` is the match's time (for a timed-out partial match: the timeout time), ``key``
    the key of the match (None when the stream is not keyed), ``output(tag, value)`` emits to a
    side output.
    """

    __slots__ = ("key", "_timestamp", "_clock", "_side")

    def __init__(self, clock: Callable[[], int], side: Callable[[OutputTag, Any], None]) -> None:
        self.key: Any = None
        self._timestamp: int | None = None
        self._clock = clock
        self._side = side

    def timestamp(self) -> int | None:
        return self._timestamp

    def current_processing_time(self) -> int:
        return self._clock()

    def output(self, tag: OutputTag, value: Any) -> None:
        if not isinstance(tag, OutputTag):
            raise TypeError(f"output() needs an OutputTag, got {tag!r}")
        self._side(tag, value)

    def get_current_key(self) -> Any:
        return self.key

    currentProcessingTime = current_processing_time
    getCurrentKey = get_current_key


class PatternProcessFunction:
    """Override ``process_match(match, ctx, out)`` (or Flink's ``processMatch``).

    ``match`` maps each step name to its events, in pattern order; ``out.collect(x)`` emits to the
    main output. ``open()`` and ``close()`` are called at the start and the end of the stream.
    """

    def process_match(self, match: Match, ctx: Context, out: Collector) -> None:
        raise NotImplementedError("override process_match(match, ctx, out) (or processMatch)")

    def processMatch(self, match: Match, ctx: Context, out: Collector) -> None:  # noqa: N802 - Flink name
        self.process_match(match, ctx, out)

    def open(self, context: Any = None) -> None:
        """Called once before the first record, with the runtime context (the embedded
        runtime's ``RuntimeContext``, or PyFlink's)."""

    def close(self) -> None:
        """Called once after the last record."""


class TimedOutPartialMatchHandler:
    """Mixin: override ``process_timed_out_match(match, ctx)`` to receive timed-out partial matches.

    ``ctx.timestamp()`` is the timeout time; use ``ctx.output(tag, value)`` to emit them.
    """

    def process_timed_out_match(self, match: Match, ctx: Context) -> None:
        raise NotImplementedError("override process_timed_out_match(match, ctx) (or processTimedOutMatch)")

    def processTimedOutMatch(self, match: Match, ctx: Context) -> None:  # noqa: N802 - Flink name
        self.process_timed_out_match(match, ctx)


def resolve_method(obj: Any, snake: str, camel: str, base: type) -> Callable[..., Any] | None:
    """The user's implementation of ``snake`` or its camelCase alias, or None if neither is overridden."""
    for name in (snake, camel):
        impl = getattr(type(obj), name, None)
        if impl is not None and impl is not getattr(base, name, None):
            return getattr(obj, name)  # type: ignore[no-any-return]
    return None


def find_method(obj: Any, snake: str, camel: str, base: type) -> Callable[..., Any] | None:
    """``resolve_method`` for instances of ``base``; for other objects, any callable attribute
    named ``snake`` or ``camel`` (duck-typed user functions)."""
    if isinstance(obj, base):
        return resolve_method(obj, snake, camel, base)
    for name in (snake, camel):
        method = getattr(obj, name, None)
        if method is not None and callable(method):
            return method  # type: ignore[no-any-return]
    return None


def split_select_args(
    name: str, args: tuple[Any, ...], timeout_fn: Any, timeout_tag: Any, tag_types: tuple[type, ...]
) -> tuple[Any, Any, Any]:
    """``(fn, timeout_fn, timeout_tag)`` of ``select(fn)`` / ``flat_select(fn)`` (keywords for the
    timeout side) or of Flink's positional ``(output_tag, timeout_fn, fn)``; the tag may be None."""
    if len(args) == 1:
        return args[0], timeout_fn, timeout_tag
    if len(args) == 3 and isinstance(args[0], tag_types):
        if timeout_fn is not None or timeout_tag is not None:
            raise TypeError(f"{name}(tag, timeout_fn, fn) takes no timeout_fn/timeout_tag keywords")
        timeout_tag, timeout_fn, fn = args
        return fn, timeout_fn, timeout_tag
    raise TypeError(f"{name} takes (fn) or Flink's (output_tag, timeout_fn, fn), got {len(args)} arguments")


def resolve_callable(fn: Any, *names: str) -> Callable[..., Any]:
    """A plain callable, or the first of ``names`` an object defines (Flink function interfaces)."""
    for name in names:
        method = getattr(fn, name, None)
        if method is not None and callable(method):
            return method  # type: ignore[no-any-return]
    if callable(fn):
        return fn  # type: ignore[no-any-return]
    raise TypeError(f"expected a callable or an object with {' or '.join(names)}(), got {fn!r}")


def extractor(role: str, fn: Any) -> Callable[[Any], Any] | None:
    """``key_by`` or ``timestamp`` as a function of the event: a callable as it is, a field name
    as ``field_reader(name)``, None as None."""
    if fn is None or callable(fn):
        return fn
    if isinstance(fn, str):
        return field_reader(fn)
    raise TypeError(f"{role} must be a callable or a field name, got {fn!r}")


def field_reader(name: str) -> Callable[[Any], Any]:
    """A function that reads the field ``name`` of an event: its key ``name`` if the event is a
    dict (any ``Mapping``), else its attribute ``name``; ``LookupError`` if it has none."""

    def read(event: Any) -> Any:
        try:
            if isinstance(event, Mapping):
                return event[name]
            return getattr(event, name)
        except (KeyError, AttributeError):
            kind = "key" if isinstance(event, Mapping) else "attribute"
            raise LookupError(f"the event has no field {name!r} (no {kind} of that name)") from None

    read.__qualname__ = read.__name__ = f"field_reader({name!r})"
    return read


def call_open(fn: Any, context: Any = None) -> None:
    """Call ``fn.open`` if present, with or without the ``context`` argument."""
    open_ = getattr(fn, "open", None)
    if open_ is None or not callable(open_):
        return
    try:
        params = inspect.signature(open_).parameters.values()
    except (TypeError, ValueError):
        open_()
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if positional:
        open_(context)
    else:
        open_()


def call_close(fn: Any) -> None:
    close = getattr(fn, "close", None)
    if close is not None and callable(close):
        close()
