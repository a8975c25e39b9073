"""Processing time in the operator: each element is matched at the clock's time when it arrives;
with a comparator, elements wait per millisecond until the clock has passed it, as Flink's
processing-time timer does (``CepOperator`` mixes this in)."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

from flowcep.runtime.keystate import KeyState, consumed, spill, unspill
from flowcep.runtime.output import STAGE_KEY, Output, exc_text

if TYPE_CHECKING:
    from flowcep.runtime.operator import CepOperator


class ProcessingTime:
    """The processing-time part of ``CepOperator``."""

    __slots__ = ()

    def _element_in_processing_time(self: CepOperator, event: Any, out: list[Output]) -> None:
        now = self._clock.now()
        key_by = self._key_by
        if key_by is None:
            key = None
        else:
            try:
                key = key_by(event)
                hash(key)
            except Exception as exc:
                self._bad(event, None, now, f"key extractor failed: {exc_text(exc)}", STAGE_KEY, exc, out)
                return
        ks = self._keys.get(key)
        if ks is None:
            ks = self._new_key(key)
        if self._sort_key is not None:
            # buffered before the release of earlier milliseconds (it is due at now + 1 only),
            # so that an exception there does not lose it, as in event time
            self._buffer(ks, event, now)
            self._fire_processing_time(now, out)
            return
        try:
            self._advance(ks, now, out)
            ks.buffer.advance_time(now)
            self._feed_event(ks, event, now, out)
        finally:
            if ks.state.is_empty() and self._keys.get(key) is ks:
                del self._keys[key]

    def _fire_processing_time(self: CepOperator, now: int | None, out: list[Output]) -> None:
        """Release comparator-buffered elements whose timer (``ms + 1``) is due at ``now`` (None:
        all of them)."""
        sched = self._sched
        if self._fast:
            dues = sched.dues
            if not dues or (now is not None and dues[0] > now):
                return
        else:
            first = sched.first_due()  # (the reference: no time that no key is due at any more)
            if first is None or (now is not None and first > now):
                return
        due = sched.pop_due(now, self._next_seq)
        done = 0
        try:
            for ks in due:
                self._drain_processing_time(ks, now, out)
                done += 1
        except BaseException:
            for ks in due[done + 1 :]:
                self._schedule(ks)
            self._resume = True
            raise

    def _drain_processing_time(self: CepOperator, ks: KeyState, now: int | None, out: list[Output]) -> None:
        """Process the key's elements of the milliseconds before ``now`` (None: all)."""
        # in the lists alone while it runs (a rare path: processing time with a comparator)
        times, pending = spill(ks)
        n = len(times) if now is None else bisect_left(times, now)  # (the element at now waits)
        done = 0
        try:
            while done < n:
                self._fire_time(ks, times[done], pending, done, out)
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
            self._settle(ks)
