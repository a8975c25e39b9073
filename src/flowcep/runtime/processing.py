"""Processing time in the operator: each element is matched at the clock's time when it arrives;
with a comparator, elements wait per millisecond until the clock has passed it, as Flink's
processing-time timer does. Functions of the operator, which calls them in processing time."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from flowcep.runtime.keystate import KeyState, consumed, spill, unspill
from flowcep.runtime.output import STAGE_KEY, Output, exc_text

if TYPE_CHECKING:
    from flowcep.runtime.operator import CepOperator


def take_element(op: CepOperator, event: Any, out: list[Output]) -> None:
    """Match ``event`` now (with a comparator: buffer it until its millisecond has passed)."""
    now = op._clock.now()
    key_by = op._key_by
    if key_by is None:
        key = None
    else:
        try:
            key = key_by(event)
            hash(key)
        except Exception as exc:
            op._bad(event, None, now, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, exc, out)
            return
    ks = op._keys.get(key)
    if ks is None:
        ks = op._new_key(key)
    if op._sort_key is not None:
        # buffered before the release of earlier milliseconds (it is due at now + 1 only),
        # so that an exception there does not lose it, as in event time
        op._buffer(ks, event, now)
        fire(op, now, out)
        return
    try:
        op._advance(ks, now, out)
        ks.buffer.advance_time(now)
        op._feed_event(ks, event, now, out)
    finally:
        if ks.state.is_empty() and op._keys.get(key) is ks:
            del op._keys[key]


def fire(op: CepOperator, now: int | None, out: list[Output]) -> None:
    """Release comparator-buffered elements whose timer (``ms + 1``) is due at ``now`` (None:
    all of them)."""
    sched = op._sched
    if op._fast:
        dues = sched.dues
        if not dues or (now is not None and dues[0] > now):
            return
    else:
        first = sched.first_due()  # (the reference: no time that no key is due at any more)
        if first is None or (now is not None and first > now):
            return
    due = sched.pop_due(now, op._next_seq)
    done = 0
    try:
        for ks in due:
            drain(op, ks, now, out)
            done += 1
    except BaseException:
        for ks in due[done + 1 :]:
            op._schedule(ks)
        op._resume = True
        raise


def drain(op: CepOperator, ks: KeyState, now: int | None, out: list[Output]) -> None:
    """Process the key's elements of the milliseconds before ``now`` (None: all)."""
    # in the lists alone while it runs (a rare path: processing time with a comparator)
    times, pending = spill(ks)
    n = len(times) if now is None else bisect_left(times, now)  # (the element at now waits)
    done = 0
    try:
        while done < n:
            op._fire_time(ks, times[done], pending, done, out)
            done += 1
    except BaseException:
        if done < n and consumed(pending[done]):
            done += 1
        raise
    finally:
        if done:
            ks.buffer.advance_time(times[done - 1])
            del times[:done]
            del pending[:done]
        unspill(ks)
        op._settle(ks)
