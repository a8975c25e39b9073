"""When each key is due: the operator's timers, as a heap of due times and the keys due at each.

A key is scheduled at one due time, its ``due`` field (``NOT_DUE``: not scheduled). The schedule
lists it at that time, in the order keys were scheduled there; a key listed at a time is due then
only if its ``due`` still says so (a key scheduled again, earlier, stays listed at the later time:
no entry object per listing, one allocation per scheduling less). Many keys often share a due time
(one event per key and ms): they leave together, without a heap operation each.
"""

from __future__ import annotations

import heapq
import operator as _op
import sys
from typing import Final

from flowcep.runtime.keystate import NOT_DUE, KeyState

_SEQ: Final = _op.attrgetter("seq")  # a key's order of first appearance
# how pop_due sorts the keys of one due time by ``seq``: PyPy sorts a list of machine ints several
# times faster than a list by a key function, CPython slower (docs/runtime.md §8)
SORT_AS_INTS: Final = sys.implementation.name == "pypy"


class Schedule:
    """The due times (``dues``, a heap, possibly with times no key is due at any more) and the keys
    listed at each (``due_keys``). The operator's hot loop reads both directly."""

    __slots__ = ("dues", "due_keys")

    def __init__(self) -> None:
        self.dues: list[int] = []
        self.due_keys: dict[int, list[KeyState]] = {}

    def push(self, ks: KeyState, due: int) -> None:
        """Schedule ``ks`` at ``due`` (it leaves any later time it is listed at)."""
        entries = self.due_keys.get(due)
        if entries is None:
            self.due_keys[due] = [ks]
            heapq.heappush(self.dues, due)
        else:
            entries.append(ks)
        ks.due = due

    def first_due(self) -> int | None:
        """The earliest time a key is due at (None: none); drops the times no key is due at."""
        dues = self.dues
        due_keys = self.due_keys
        while dues:
            due = dues[0]
            for ks in due_keys[due]:
                if ks.due == due:
                    return due
            heapq.heappop(dues)
            del due_keys[due]
        return None

    def is_due(self, at: int) -> bool:
        """Whether any key is due at or before ``at``: the reference of the operator's inlined
        test ``dues and dues[0] <= at``, which may also be true for a time no key is due at any
        more (popping it then yields no key)."""
        first = self.first_due()
        return first is not None and first <= at

    def pop_due(self, limit: int | None, seq_limit: int, as_ints: bool = SORT_AS_INTS) -> list[KeyState]:
        """The keys due at ``limit`` (None: all), off the schedule, in Flink's timer order: by the
        key's earliest due timer, ties by first appearance (``seq``, each below ``seq_limit``).
        A key is scheduled at that timer, so the order is that of ``(due, seq)`` pairs: the heap
        gives the due times in order, and the keys of each are sorted by ``seq``."""
        dues = self.dues
        due_keys = self.due_keys
        due: list[KeyState] = []
        while dues and (limit is None or dues[0] <= limit):
            at = heapq.heappop(dues)
            listed = due_keys.pop(at)
            if as_ints and len(listed) > 1:
                keys = due_by_seq(listed, at, seq_limit)
            else:
                keys = due_at(listed, at)
                if len(keys) > 1:
                    keys.sort(key=_SEQ)
            if due:
                due += keys
            else:
                due = keys
        return due

    def _check(self, scheduled: list[KeyState]) -> None:
        """Assert that ``scheduled`` (the keys with a due time) are listed at their due times, and
        that the heap holds exactly the listed times."""
        dues = self.dues
        assert sorted(dues) == sorted(self.due_keys), "heap and listed times differ"
        assert all(
            dues[i] <= dues[c] for i in range(len(dues)) for c in (2 * i + 1, 2 * i + 2) if c < len(dues)
        )
        for ks in scheduled:
            assert any(k is ks for k in self.due_keys.get(ks.due, ())), (
                f"key {ks.key!r} not listed at {ks.due}"
            )


def due_at(listed: list[KeyState], at: int) -> list[KeyState]:
    """The keys ``listed`` at ``at`` that are due then, in listed order, each once (a key
    listed twice at one time leaves once: its ``due`` is reset)."""
    keys = []
    for ks in listed:
        if ks.due == at:
            ks.due = NOT_DUE
            keys.append(ks)
    return keys


def due_by_seq(listed: list[KeyState], at: int, seq_limit: int) -> list[KeyState]:
    """The keys ``listed`` at ``at`` that are due then (each once, ``due`` reset), sorted by
    ``seq`` (each below ``seq_limit``), as a new list: by sorting ints that hold a key's ``seq``
    and its place in ``listed``, made in the pass that checks ``due`` (with 100,000 keys a second
    pass to read ``seq`` is a second cache miss per key), while they fit in 62 bits (on PyPy a
    machine int); else by ``list.sort`` with a key function."""
    shift = len(listed).bit_length()
    if seq_limit << shift >= 1 << 62:
        keys = due_at(listed, at)
        keys.sort(key=_SEQ)
        return keys
    codes = []
    for i, ks in enumerate(listed):
        if ks.due == at:
            ks.due = NOT_DUE
            codes.append(ks.seq << shift | i)
    codes.sort()
    mask = (1 << shift) - 1
    return [listed[code & mask] for code in codes]
