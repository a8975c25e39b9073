"""A W1 matcher written by hand for W1 alone: the floor of what CPython can do for that pattern.

``w1_by_hand`` knows its pattern (``a`` -> ``b`` -> ``c``, followed_by, within 10 ms, no
skip) and nothing else: no NFA, no Dewey versions, no shared buffer, no snapshots, no
bad-record handling, one list per state.  It still does the work every engine must do per
event: call the user's key and timestamp extractors and conditions, buffer the event until the
watermark passes it, time runs out, and build the matches and timeouts it reports.
``check_same_results`` proves it finds exactly flowcep's matches and timeouts, so that its
speed is an honest ceiling.  Used by floor.py and by run.py's goals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from workloads import WORKLOADS, Event

from flowcep.runtime import CepOperator

WINDOW = 10  # ms, W1's within(10)

Match = dict[str, list[Event]]


def w1_by_hand(
    events: Iterable[Event],
    emit: Callable[[str, Match], None],
    key_by: Callable[[Event], Any] = lambda e: e.key,
    timestamp: Callable[[Event], int] = lambda e: e.ts,
    is_a: Callable[[Event], bool] = lambda e: e.name == "a",
    is_b: Callable[[Event], bool] = lambda e: e.name == "b",
    is_c: Callable[[Event], bool] = lambda e: e.name == "c",
) -> None:
    """W1 over ``events`` (ordered or not; out-of-orderness 0), reporting ``("match", m)`` and
    ``("timeout", partial)`` to ``emit``.  Per key: the events of the newest timestamp (not yet
    behind the watermark), the runs waiting for ``b`` as ``(start, a)`` and those waiting for
    ``c`` as ``(start, a, b)``, both in start order."""
    keys: dict[Any, list[Any]] = {}
    watermark = -(1 << 63)

    def step(state: list[Any], t: int, e: Event) -> None:
        wait_b, wait_c = state[1], state[2]
        # runs whose window closed time out before the event is seen (Flink's advance_time)
        while wait_b and t - wait_b[0][0] >= WINDOW:
            emit("timeout", {"a": [wait_b.pop(0)[1]]})
        while wait_c and t - wait_c[0][0] >= WINDOW:
            _, a, b = wait_c.pop(0)
            emit("timeout", {"a": [a], "b": [b]})
        if wait_c and is_c(e):
            for _, a, b in wait_c:
                emit("match", {"a": [a], "b": [b], "c": [e]})
            wait_c.clear()
        if wait_b and is_b(e):
            wait_c.extend((s, a, e) for s, a in wait_b)
            wait_b.clear()
        if is_a(e):
            wait_b.append((t, e))

    for e in events:
        key = key_by(e)
        t = timestamp(e)
        if t <= watermark:
            continue  # late: W1's streams have none
        state = keys.get(key)
        if state is None:
            state = keys[key] = [t, [], [], []]  # newest timestamp, wait_b, wait_c, its events
        if t > state[0]:
            # the watermark (t - 1) passes this key's buffered events: process them
            for pending in state[3]:
                step(state, state[0], pending)
            state[0] = t
            state[3] = [e]
        else:
            state[3].append(e)
        if t - 1 > watermark:
            watermark = t - 1  # one key in W1: no other key has events due
    for state in keys.values():  # end of input: the final watermark
        for pending in state[3]:
            step(state, state[0], pending)
        for _, a in state[1]:
            emit("timeout", {"a": [a]})
        for _, a, b in state[2]:
            emit("timeout", {"a": [a], "b": [b]})


def run_by_hand(events: list[Event]) -> dict[str, Any]:
    counts = {"match": 0, "timeout": 0}

    def emit(kind: str, m: Match) -> None:
        counts[kind] += 1

    start = time.perf_counter()
    w1_by_hand(events, emit)
    seconds = time.perf_counter() - start
    return {"matches": counts["match"], "timeouts": counts["timeout"], "events_per_s": len(events) / seconds}


def _ids(kind: str, m: Match) -> tuple[Any, ...]:
    return (kind, *(e.id for step in ("a", "b", "c") for e in m.get(step, [])))


def check_same_results(events: list[Event]) -> None:
    """The hand-written loop finds exactly flowcep's matches and timeouts (as multisets)."""
    mine: list[tuple[Any, ...]] = []
    w1_by_hand(events, lambda kind, m: mine.append(_ids(kind, m)))
    op = CepOperator(WORKLOADS["W1"].pattern(), key_by=lambda e: e.key, timestamp=lambda e: e.ts)
    theirs = [_ids(o.kind, o.value) for o in [*op.process_elements(events), *op.flush()]]
    if sorted(mine) != sorted(theirs):
        raise SystemExit("the hand-written W1 loop and flowcep disagree: the ceiling is not honest")
