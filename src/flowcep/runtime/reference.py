"""The operator's firing written plainly: the reference its per-element path is held to.

``CepOperator`` writes checks out where a call would do (whether anything is due, whether a key
must be advanced, how a key is scheduled again, the one-key firing, its head's first timestamp).
``ReferenceOperator`` is the operator with a firing that calls each check where it is defined
(and ``fast_paths_enabled`` False); property tests run random patterns and streams through both
and compare. (A subclass, not a flag that the per-element path would read at every turn.)
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from flowcep.runtime.keystate import KeyState, Several, consumed, spill, unspill
from flowcep.runtime.operator import CepOperator
from flowcep.runtime.output import Output


class ReferenceOperator(CepOperator):
    """``CepOperator`` firing through the references of its written-out checks."""

    __slots__ = ()
    FAST_PATHS = False

    def _fire(self, watermark: int, out: list[Output]) -> None:
        """``_fire``: every key due at ``watermark``, in Flink's timer order."""
        sched = self._sched
        if not sched.is_due(watermark):
            return
        self._fire_keys(sched.pop_due(watermark, self._next_seq, as_ints=False), watermark, out)
        if self._pathless is not None:
            self._pathless.advance_time(watermark)

    def _fire_key(self, ks: KeyState, watermark: int, out: list[Output]) -> None:
        """``_fire_key``: each buffered timestamp up to ``watermark`` in order, then the watermark."""
        state = ks.state
        timers = ks.timers
        due = ks.first_due(False)  # (for a firing that stops: _stopped_firing)
        del timers[: bisect_right(timers, watermark)]
        if state is None:
            self._fire_idle_key(ks)
            return
        times, pending = spill(ks)
        n = bisect_right(times, watermark)
        done = 0
        try:
            while done < n:
                self._fire_time(ks, times[done], pending, done, out)
                done += 1
            self._advance(ks, watermark, out)
            del timers[: bisect_right(timers, watermark)]
        except BaseException:
            if done < n and consumed(pending[done]):
                done += 1
            self._stopped_firing(ks, due, watermark)
            raise
        finally:
            del times[:done]
            del pending[:done]
            unspill(ks)
            self._forget_counters(ks, watermark)
            state.new_start_partial_match = False
            self._settle(ks)

    def _fire_time(self, ks: KeyState, t: int, pending: list[Any], at: int, out: list[Output]) -> None:
        """``_fire_time``: advance the key to ``t``, then process its elements there."""
        self._advance(ks, t, out)
        elements = pending[at]
        if type(elements) is not Several:
            elements = pending[at] = Several((elements,))
        self._feed(ks, elements, t, out)
