"""What the operator holds for one key, and the key's queue of buffered elements.

The queue is kept in the key's own fields, not in an object of its own: with ordered input a key
mostly buffers one timestamp, and with many keys every other object touched per element is a
cache miss (docs/runtime.md §8). The operator's hot loop reads and writes those fields directly;
the functions here are the queue's other operations and its reference (``KeyState._check``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Final

from flowcep.runtime.timestamps import LONG_MIN
from flowcep.sharedbuffer import SharedBuffer

# A key's ``due`` when it is not scheduled: no element or timer is due at LONG_MIN (an element
# there is late). An int, not None: PyPy keeps a field that only ever held ints unboxed. Compared
# with ``is``, cheaper on CPython than ``==``: the field holds this very object when not scheduled.
NOT_DUE: Final = LONG_MIN
UNKNOWN: Final = object()  # a key's ``deadline`` when it must be computed again
EMPTY: Final = object()  # a key's ``head`` when it buffers nothing
# the buffer of a key that holds nothing but window timers (``state`` None): never used
NO_BUFFER: Final = SharedBuffer()


class Several(list):  # type: ignore[type-arg]
    """The elements a key buffered at one timestamp, when there are more than one: a lone
    element is buffered as itself (most timestamps hold one), with no list of its own. Private to
    the runtime, so an event is never one; empty once its elements were consumed by a firing that
    failed."""

    __slots__ = ()


class KeyState:
    """Everything the operator holds for one key. ``state`` None: the key holds nothing but
    window timers (its NFA state went, the timers stay registered, as in Flink's CepOperator).

    The element queue: the buffered elements by timestamp, in arrival order within one; those of
    one timestamp are the element itself or ``Several`` of them. The first timestamp's are
    ``head`` at ``head_ts``; the later ones, ascending, are ``times`` with their elements in
    ``pending`` (lists, not a dict by timestamp: no hashing; made when first needed). Invariant
    (``_check``), between the operator's calls:

    * ``head`` is ``EMPTY`` exactly when nothing is buffered: then no timestamp is listed;
    * ``times`` and ``pending`` are both None or lists of one length;
    * ``head_ts`` < ``times[0]`` < ``times[1]`` < ...;
    * a timestamp's elements are an element or a non-empty ``Several``;
    * ``timers`` (window timers) are strictly ascending.
    """

    __slots__ = (
        "key",
        "seq",
        "state",
        "buffer",
        "head",
        "head_ts",
        "times",
        "pending",
        "due",
        "timers",
        "deadline",
    )

    def __init__(self, key: Any, seq: int, state: Any, buffer: SharedBuffer) -> None:
        self.key = key
        self.seq = seq  # order of first appearance, the cross-key tie-breaker
        self.state = state
        self.buffer = buffer
        self.head: Any = EMPTY
        self.head_ts = 0
        self.times: list[int] | None = None
        self.pending: list[Any] | None = None
        self.due = NOT_DUE  # when the key is scheduled (flowcep.runtime.schedule)
        # window timers, ascending: Flink 2.3 registers one at ts + window after an element at ts
        # (> 0) started a partial match; a key is only advanced when one of its timers fires,
        # and the timers outlive the key's state
        self.timers: list[int] = []
        # the NFA's next timeout (None: none), UNKNOWN once runs changed since it was computed
        self.deadline: Any = UNKNOWN

    def first_due(self, processing_time: bool) -> int | None:
        """When the key must next fire: its first buffered timestamp (in processing time, the
        millisecond after it: that timer fires once the clock passed it) or, in event time, its
        first window timer if that is earlier; None: never."""
        first = None if self.head is EMPTY else self.head_ts
        if processing_time:
            # processing-time timeouts are not timer driven: only buffered elements are due
            return None if first is None else first + 1
        timers = self.timers
        if timers and (first is None or timers[0] < first):
            return timers[0]
        return first

    def _check(self) -> None:
        """Assert the queue's invariant (see the class docstring)."""
        times, pending = self.times, self.pending
        assert (times is None) == (pending is None), "times and pending are made together"
        listed = list(times or ())
        if self.head is EMPTY:
            assert not listed, f"timestamps {listed} listed without a head"
        else:
            assert all(a < b for a, b in zip([self.head_ts, *listed], listed)), "timestamps not ascending"
            assert len(listed) == len(pending or ()), "times and pending differ in length"
            for elements in [self.head, *(pending or ())]:
                assert type(elements) is not Several or elements, "an empty Several is buffered"
        timers = self.timers
        assert all(a < b for a, b in zip(timers, timers[1:])), f"window timers {timers} not ascending"


def consumed(elements: Any) -> bool:
    """Whether buffered ``elements`` (a lone element or ``Several``) were all consumed."""
    return type(elements) is Several and not elements


def as_list(elements: Any) -> list[Any]:
    """Buffered ``elements`` (a lone element or ``Several``) as a list of their own."""
    return list(elements) if type(elements) is Several else [elements]


def lists(ks: KeyState) -> tuple[list[int], list[Any]]:
    """The key's ``times`` and ``pending``, made if it has none yet."""
    times = ks.times
    pending = ks.pending
    if times is None or pending is None:
        times = ks.times = []
        pending = ks.pending = []
    return times, pending


def spill(ks: KeyState) -> tuple[list[int], list[Any]]:
    """Move the key's head to the front of its lists: the key's buffered elements are then all
    in the lists it returns, ``times`` and ``pending``, until ``unspill``."""
    times, pending = lists(ks)
    if ks.head is not EMPTY:
        times.insert(0, ks.head_ts)
        pending.insert(0, ks.head)
        ks.head = EMPTY
    return times, pending


def unspill(ks: KeyState) -> None:
    """Make the first of the key's listed timestamps its head (the key has no head)."""
    times = ks.times
    pending = ks.pending
    if times and pending:
        ks.head_ts = times[0]
        ks.head = pending[0]
        del times[:1]
        del pending[:1]


def buffered(ks: KeyState) -> list[tuple[int, Any]]:
    """The key's buffered timestamps and their elements (as in ``pending``), in order."""
    if ks.head is EMPTY:
        return []
    first = [(ks.head_ts, ks.head)]
    return first + list(zip(ks.times, ks.pending)) if ks.times and ks.pending else first


def add(pending: list[Any], at: int, event: Any) -> None:
    """Buffer ``event`` beside the elements of a key's ``at``-th listed timestamp."""
    elements = pending[at]
    if type(elements) is Several:
        elements.append(event)
    else:
        pending[at] = Several((elements, event))


def insert(ks: KeyState, event: Any, ts: int) -> bool:
    """Buffer ``event`` at ``ts``, wherever ``ts`` falls among the key's timestamps; whether
    ``ts`` is a timestamp the key did not buffer before (the operator then schedules it)."""
    head = ks.head
    if head is EMPTY:
        ks.head = event
        ks.head_ts = ts
        return True
    if ts == ks.head_ts:
        if type(head) is Several:
            head.append(event)
        else:
            ks.head = Several((head, event))
        return False
    times, pending = lists(ks)
    if ts < ks.head_ts:
        # the element is the new head; the old one goes first in the lists
        times.insert(0, ks.head_ts)
        pending.insert(0, head)
        ks.head = event
        ks.head_ts = ts
        return True
    at = bisect_left(times, ts)
    if at < len(times) and times[at] == ts:
        add(pending, at, event)
        return False
    times.insert(at, ts)
    pending.insert(at, event)
    return True


def restore_queue(ks: KeyState, queue: list[tuple[int, list[Any]]]) -> None:
    """Fill the key's empty queue from ``(timestamp, elements)`` pairs, ascending."""
    if queue:
        ks.times = [t for t, _ in queue]
        ks.pending = [elements[0] if len(elements) == 1 else Several(elements) for _, elements in queue]
        unspill(ks)


def count_through(times: list[int], t: int) -> int:
    """How many of the sorted ``times`` are at most ``t``: with ordered input at most the first
    (``bisect_right`` only otherwise: it is a loop in pure Python on PyPy)."""
    if len(times) < 2 or times[1] > t:
        return 1 if times and times[0] <= t else 0
    return bisect_right(times, t)
