"""``of_type``: a step that matches complex events of a named type; and the check the hierarchy
adds to every step of a level that reads complex events (precedence and the nested window)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.hierarchy.event import ComplexEvent
from flowcep.nfa.guards import GuardContext, RunGuard
from flowcep.pattern import SimpleCondition


class OfType(SimpleCondition):
    """Accepts a ``ComplexEvent`` of type ``type_name`` for which ``condition`` (if any) holds."""

    __slots__ = ("type_name", "condition")

    def __init__(self, type_name: str, condition: Callable[[ComplexEvent], Any] | None = None) -> None:
        if not isinstance(type_name, str) or not type_name:
            raise TypeError(f"of_type needs the name of a complex event type, got {type_name!r}")
        if condition is not None and not callable(condition):
            raise TypeError(f"of_type's condition must be a callable of the complex event, got {condition!r}")
        self.type_name = type_name
        self.condition = condition

    def filter(self, value: Any) -> bool:
        if type(value) is not ComplexEvent or value.type != self.type_name:
            return False
        condition = self.condition
        return condition is None or bool(condition(value))

    def compile(self) -> tuple[Callable[..., Any], bool]:
        name = self.type_name
        condition = self.condition
        if condition is None:

            def of_type(value: Any) -> bool:
                return type(value) is ComplexEvent and value.type == name

        else:

            def of_type(value: Any) -> bool:
                return type(value) is ComplexEvent and value.type == name and bool(condition(value))

        return of_type, False

    def __repr__(self) -> str:
        return f"of_type({self.type_name!r}{'' if self.condition is None else ', ...'})"

    def __eq__(self, other: object) -> bool:
        return type(other) is OfType and (self.type_name, self.condition) == (
            other.type_name,
            other.condition,
        )

    def __hash__(self) -> int:
        return hash((self.type_name, id(self.condition)))


class IsRaw(SimpleCondition):
    """Put by the hierarchy before the condition of a raw step in a level that also reads complex
    events: such a step sees raw events only, so its condition never meets a complex event."""

    __slots__ = ()

    def filter(self, value: Any) -> bool:
        return type(value) is not ComplexEvent

    def __repr__(self) -> str:
        return "is_raw"


def of_type(type_name: str, condition: Callable[[ComplexEvent], Any] | None = None) -> OfType:
    """The condition of a step that matches complex events of type ``type_name``:
    ``.where(of_type("incident", lambda c: c.severity > 2))``."""
    return OfType(type_name, condition)


class Nested(RunGuard):
    """Added by the hierarchy to a step of a level that reads complex events: the event must
    start after every event already in the partial match ends (seed 004's sequence), and, with a
    window ``T``, end less than ``T`` after the partial match's first start (the nested window:
    a constituent's own window already holds at its level).

    The partial match's events are in time order along the pattern's steps (this check keeps
    them so, and raw steps before it come in timestamp order): the last step with events ends
    last, the first starts first. ``last``: the steps that may hold the partial match's last
    event, latest first (up to one that always has an event once the run is at this step);
    ``first``: the steps that may hold its first, in order.

    A run guard (``flowcep.nfa.guards``): the NFA shares a decision that did not reach this
    check among a state's runs. ``in_order``: the pattern has no group, so a run takes its
    events step after step and the event it took last is the last of the latest step that has
    events, and the event it took first is the first of the first step that has events; the
    check then reads those off the run's match chain (``run.match``: its last link, and its first
    when the chain starts empty) instead of building the partial match."""

    __slots__ = ("last", "first", "window", "interval", "in_order")

    def __init__(
        self,
        last: tuple[str, ...],
        first: tuple[str, ...],
        window: int | None,
        interval: Callable[[Any], tuple[int, int]],
        in_order: bool = False,
    ) -> None:
        self.last = last
        self.first = first
        self.window = window
        self.interval = interval
        self.in_order = in_order

    def filter(self, value: Any, ctx: Any) -> bool:
        interval = self.interval
        if ctx.__class__ is GuardContext:
            ctx.consulted = True
            match = ctx.run.match
            if self.in_order and type(match) is tuple:  # (parent, page, the event taken last)
                last = match[2]
                # (the intervals read in line: this is the hot path of a box step)
                last_end = last.end if type(last) is ComplexEvent else interval(last)[1]
                if last_end >= (value.start if type(value) is ComplexEvent else interval(value)[0]):
                    return False
                window = self.window
                if window is None:
                    return True
                # the event taken first: the chain's first link, if the chain starts empty
                first, parent = last, match[0]
                while type(parent) is tuple:
                    first, parent = parent[2], parent[0]
                if not parent:
                    end = value.end if type(value) is ComplexEvent else interval(value)[1]
                    return end - interval(first)[0] < window
        start, end = interval(value)
        get = ctx.get_events_for_pattern
        for name in self.last:
            events = get(name)
            if events:
                if interval(events[-1])[1] >= start:
                    return False
                break
        else:
            return self.window is None or end - start < self.window
        window = self.window
        if window is None:
            return True
        for name in self.first:
            events = get(name)
            if events:
                return end - interval(events[0])[0] < window
        return True  # not reached: some step has events

    def __repr__(self) -> str:
        return f"nested(window={self.window})"
