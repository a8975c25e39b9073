"""A run's partial match: what iterative conditions see (``ConditionContext``), how it is built
from the chain that runs hand each other, and the event being processed (``EventHandle``)."""

from __future__ import annotations

from typing import Any

from flowcep.nfa.computation_state import ComputationState
from flowcep.pattern.context import ConditionContextBase
from flowcep.sharedbuffer.sharedbuffer import EventId, SharedBuffer

Match = dict[str, list[Any]]


class ConditionContext(ConditionContextBase):
    """What an iterative condition sees: the run's events so far, lazily (``NFA.use_clock``
    gives an NFA a subclass whose ``current_processing_time()`` is its operator's clock).

    ``NFA.process`` points one context at each run in turn (``run``): as Flink's, a context is
    valid in the condition call it is given to. The partial match it reads is cached on the run
    (``current_match``), which every context of the run shares."""

    __slots__ = ("_buffer", "_run", "_timestamp")

    def __init__(self, buffer: SharedBuffer, run: ComputationState, timestamp: int) -> None:
        self._buffer = buffer
        self._run = run
        self._timestamp = timestamp

    def get_events_for_pattern(self, name: str) -> list[Any]:
        run = self._run
        matched = run.match
        if matched.__class__ is not dict:
            matched = current_match(self._buffer, run)
        try:
            events: list[Any] = matched[name][:]  # (a copy: the run's own list stays as it is)
            return events
        except KeyError:
            if name is None:
                raise TypeError("The pattern name cannot be null.") from None
            return []

    def timestamp(self) -> int:
        return self._timestamp


def current_match(buffer: SharedBuffer, run: ComputationState) -> Match:
    """The run's events by step (Flink's ``extractCurrentMatches``), cached on the run."""
    match = run.match
    if match.__class__ is dict:
        return match
    match = run.match = built_match(buffer, run)
    return match


def own_match(buffer: SharedBuffer, run: ComputationState) -> Match:
    """The partial match of a run that leaves (emitted or timed out), in lists of its own."""
    match = run.match
    if match.__class__ is dict:
        # built before, maybe handed to other runs by IGNORE: copy
        copy = match.copy()
        for page, events in match.items():
            copy[page] = events[:]
        return copy
    return built_match(buffer, run)  # (no cache: the run leaves)


def built_match(buffer: SharedBuffer, run: ComputationState) -> Match:
    """The partial match of a run whose ``match`` is not built yet, built now, in lists of its own.

    A run's partial match never changes. A run made from another one by IGNORE has the same
    partial match, by TAKE that one plus the event: the NFA hands these over as a chain
    ``(parent match, page, event)`` (see ``NFA._compute_next_states``), one small tuple per TAKE,
    so that neither conditions of long runs nor emitted matches walk the shared buffer back
    to the start. A run restored from a snapshot of a full buffer has no chain (``None``): its
    match is extracted from the buffer, which gives the same path. (A key with a
    ``PathlessBuffer`` gets its runs' matches back from the snapshot, as dicts.)

    The chains of short runs, the usual ones, are read without a loop: one link on any match,
    two or three links on an empty one. ``chain_match`` is the reference for chains.
    """
    link = run.match
    if link is None:
        if run.previous_entry is None:
            return {}
        paths = buffer.extract_patterns(run.previous_entry, run.version)
        return buffer.materialize_match(paths[0]) if paths else {}
    parent, page, event = link
    if parent.__class__ is not tuple:  # one link
        if not parent:
            return {page: [event]}
        match: dict[str, list[Any]] = parent.copy()
        for step, events in parent.items():  # (a loop: a dict comprehension is a call)
            match[step] = events[:]
        events = match.get(page)
        if events is None:
            match[page] = [event]
        else:
            events.append(event)
        return match
    grandparent, page2, event2 = parent
    if grandparent.__class__ is not tuple:
        if not grandparent:  # two links on an empty match
            if page2 == page:
                return {page: [event2, event]}
            return {page2: [event2], page: [event]}
    else:
        origin, page3, event3 = grandparent
        if (
            origin.__class__ is not tuple
            and not origin
            and page3 != page2
            and page3 != page
            and page2 != page
        ):
            return {page3: [event3], page2: [event2], page: [event]}
    return chain_match(link)


def chain_match(link: tuple[Any, str, Any]) -> Match:
    """The partial match a chain ends in, in lists of its own: back to the match it starts at,
    then forward."""
    taken = []
    match: Any = link
    while type(match) is tuple:
        taken.append(match)
        match = match[0]
    # (most chains start at a start run's empty match: no copy to make)
    match = {page: events[:] for page, events in match.items()} if match else {}
    for _, page, event in reversed(taken):
        events = match.get(page)
        if events is None:
            match[page] = [event]
        else:
            events.append(event)
    return match  # type: ignore[no-any-return]


class EventHandle:
    """The event being processed; registered in the buffer on its first TAKE."""

    __slots__ = ("event", "timestamp", "event_id")

    def __init__(self, event: Any, timestamp: int) -> None:
        self.event = event
        self.timestamp = timestamp
        self.event_id: EventId | None = None
