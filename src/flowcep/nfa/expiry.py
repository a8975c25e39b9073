"""Timeouts of a sorted run queue: ``NFA.advance_time`` for the generated step's patterns.

``NFA.advance_time`` walks a key's runs, times out those whose window closed and adds the others
one by one to a new queue in Java's heap order. A queue whose runs are sorted by their start
events is what ordered input builds: a new run takes the newest event's id, a run that moves on
keeps its start, and ``advance_time`` adds the survivors in order, each sorting after the others.
There the runs that time out by the pattern's window are the queue's first ones, and the queue
of the others is the rest as it is: ``expiry``'s function cuts that prefix off instead, after
checking that the queue is sorted (in C: a list of the runs' start events against its sorted
copy), and leaves any other queue to ``NFA.advance_time``.

For the patterns of the generated step (``flowcep.nfa.stepgen.refusal``) with the pattern's
window only (no step windows) and no pending state (no ``not_followed_by`` at the end); anything
else gets None and keeps ``NFA.advance_time``, which stays the reference.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from flowcep.nfa.computation_state import NFAState
from flowcep.nfa.context import own_match
from flowcep.nfa.nfa import NFA
from flowcep.nfa.stepgen import refusal

# expire(buffer, state, timestamp): the timed-out partial matches and their times, in queue
# order, or None, with nothing done, where the queue is not of its kind
Expire = Callable[[Any, NFAState, int], "list[tuple[Any, int]] | None"]


def expiry(nfa: NFA) -> Expire | None:
    """``advance_time`` of ``nfa`` for a key that holds no match back, or None (see the module
    docstring)."""
    if (
        refusal(nfa) is not None
        or nfa.window_time <= 0
        or nfa.window_times
        or any(state.is_pending for state in nfa.states.values())
    ):
        return None
    window = nfa.window_time
    handle_timeout = nfa.handle_timeout

    def expire(buffer: Any, state: NFAState, timestamp: int) -> list[tuple[Any, int]] | None:
        """Time out the runs whose window closed by ``timestamp``, the queue's first ones; None,
        with nothing done, if the queue is not sorted by start event or one of those runs is in
        a start state (``NFA.advance_time`` keeps it) or not bound to its state yet."""
        runs = state.queue
        orders = [run.order for run in runs]
        # (a heap of two runs or fewer is sorted: its first is the least)
        if len(orders) > 2 and orders != sorted(orders):
            return None
        # the runs that started at or before timestamp - window: (start time, arrival) pairs
        # sort before (timestamp - window + 1,); start runs (NO_START) after everything
        n = bisect_left(orders, (timestamp - window + 1,))
        timed_out: list[tuple[Any, int]] = []
        if n:
            gone = runs[:n]
            for run in gone:
                slot = run.slot
                if slot.__class__ is str or slot.state.is_start:
                    return None
            del runs[:n]
            for run in gone:
                if handle_timeout:
                    timed_out.append((own_match(buffer, run), run.order[0] + window))
                buffer.release_node(run.previous_entry, run.version)
        buffer.advance_time(timestamp)
        return timed_out

    return expire
