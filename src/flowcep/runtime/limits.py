"""Bounded partial matches: a limit per key and per operator, and what happens past it.

Flink CEP keeps every partial match until its window ends; with long windows and frequent
starts that is state without bound. A ``PartialMatchLimit`` caps the partial matches (the runs
that took a first event, what ``stats()["partial_matches"]`` counts) of each key and of the
whole operator. Past the limit, the policy decides:

* ``"drop_oldest"``: the partial matches with the earliest start go (per operator: the earliest
  of all keys);
* ``"drop_newest"``: the partial matches with the latest start go, those that just started
  (per operator: of the key whose element went past the limit);
* ``"fail"``: ``PartialMatchLimitError``, as a Flink job fails.

A dropped partial match releases its shared-buffer entries as a timed-out one does, is counted
(``stats()["dropped_partial_matches"]``) and goes out as ``Output(kind="dropped")`` with a
``DroppedPartialMatch`` (``CEP.DROPPED_PARTIAL_MATCHES`` in the pull API). Without a limit the
operator has no ``Limiter`` and does what Flink does.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

import attrs

from flowcep.nfa.computation_state import NO_START
from flowcep.nfa.context import own_match
from flowcep.runtime.keystate import EMPTY, NOT_DUE, UNKNOWN
from flowcep.runtime.output import DROPPED, make_output

if TYPE_CHECKING:
    from flowcep.runtime.keystate import KeyState
    from flowcep.runtime.output import Output

POLICIES: Final = ("drop_oldest", "drop_newest", "fail")
PER_KEY: Final = "key"
PER_OPERATOR: Final = "operator"


def _check_bound(_: Any, attribute: Any, value: Any) -> None:
    if value is None:
        return
    if type(value) is not int or value < 1:
        raise ValueError(
            f"the partial-match limit {attribute.name} must be a positive int or None, got {value!r}"
        )


def _check_policy(_: Any, __: Any, policy: Any) -> None:
    if policy not in POLICIES:
        raise ValueError(f"the partial-match limit's policy must be one of {POLICIES}, got {policy!r}")


@attrs.frozen(slots=True)
class PartialMatchLimit:
    """At most ``per_key`` partial matches per key and ``per_operator`` in all (None: no bound),
    and the ``policy`` past them: ``"drop_oldest"``, ``"drop_newest"`` or ``"fail"``."""

    per_key: int | None = attrs.field(default=None, validator=_check_bound)
    per_operator: int | None = attrs.field(default=None, validator=_check_bound)
    policy: str = attrs.field(default="drop_oldest", validator=_check_policy)

    @property
    def bounded(self) -> bool:
        """Whether it bounds anything."""
        return self.per_key is not None or self.per_operator is not None

    @classmethod
    def of(
        cls, per_key: int | None, per_operator: int | None, policy: str | None
    ) -> PartialMatchLimit | None:
        """The limit of these settings (a policy alone bounds nothing: None)."""
        limit = cls(per_key, per_operator, "drop_oldest" if policy is None else policy)
        return limit if limit.bounded else None


@attrs.frozen(slots=True)
class DroppedPartialMatch:
    """A partial match dropped by the limit: its ``key``, its events by step (``match``), the
    time of its first event, the time at which it was dropped and which limit dropped it
    (``"key"`` or ``"operator"``)."""

    key: Any
    match: dict[str, list[Any]]
    start_timestamp: int
    dropped_at: int
    limit: str


class PartialMatchLimitError(RuntimeError):
    """Past the partial-match limit with ``policy="fail"``: the key, its partial matches and
    the operator's, and the limit."""

    def __init__(self, key: Any, key_count: int, total: int, limit: PartialMatchLimit) -> None:
        self.key = key
        self.key_count = key_count
        self.total = total
        self.limit = limit
        which = (
            f"key {key!r} holds {key_count} partial matches, more than {limit.per_key}"
            if limit.per_key is not None and key_count > limit.per_key
            else f"the operator holds {total} partial matches, more than {limit.per_operator}"
        )
        super().__init__(f"partial-match limit exceeded: {which} (policy 'fail')")


_order = attrgetter("order")


def count_partial(state: Any) -> int:
    """The partial matches of a key's NFA state: its runs that took a first event."""
    runs = state.queue
    # start runs sort last: they are the heap's leaves, but not necessarily its last slots
    return len(runs) - list(map(_order, runs)).count(NO_START)


class Limiter:
    """Holds one operator to its ``PartialMatchLimit``: the partial matches of each key that has
    any (counted again after each change of the key's runs), their sum, and the drops.

    Under a per-operator ``drop_oldest`` it also keeps an index of each such key's oldest start,
    ``(start, seq)`` (``seq``: the key's first appearance, the tie-breaker): a heap with stale
    entries left in place, skipped when they come up and swept when they outnumber the live ones,
    so a drop finds the oldest partial match of all keys without visiting every key.
    """

    __slots__ = (
        "limit",
        "counts",
        "total",
        "dropped",
        "_per_key",
        "_per_operator",
        "_policy",
        "_window",
        "_heads",
        "_oldest",
    )

    def __init__(self, limit: PartialMatchLimit, window_timer: int = 0) -> None:
        """``window_timer``: the offset of the window timers the operator registers per new
        partial match (0: none, or timers that must all stay; see ``trim_timers``)."""
        self.limit = limit
        self._window = window_timer
        self._per_key = limit.per_key
        self._per_operator = limit.per_operator
        self._policy = limit.policy
        self.counts: dict[Any, int] = {}
        self.total = 0
        self.dropped = 0
        # the index of oldest starts (None when no per-operator drop_oldest needs it): each key's
        # current head, and a heap of (start, seq, key) holding those heads and stale ones
        self._heads: dict[Any, tuple[int, int]] = {}
        self._oldest: list[tuple[int, int, Any]] | None = (
            [] if limit.per_operator is not None and limit.policy == "drop_oldest" else None
        )

    def reset(self) -> None:
        """Forget every key's count (the operator dropped or replaced all state)."""
        self.counts = {}
        self.total = 0
        self._heads = {}
        if self._oldest is not None:
            self._oldest = []

    def forget(self, key: Any) -> None:
        """The key's state went."""
        self.total -= self.counts.pop(key, 0)
        self._heads.pop(key, None)

    def recount(self, ks: KeyState) -> int:
        """Count the key's partial matches again; return the count."""
        state = ks.state
        n = 0 if state is None else count_partial(state)
        counts = self.counts
        old = counts.get(ks.key, 0)
        if n:
            counts[ks.key] = n
        elif old:
            del counts[ks.key]
        self.total += n - old
        if self._oldest is not None:
            self._index(ks, n)
        return n

    def _index(self, ks: KeyState, n: int) -> None:
        """Record the key's oldest start (its runs' heap head: start runs sort last)."""
        heads = self._heads
        key = ks.key
        if not n:
            heads.pop(key, None)
            return
        head = (ks.state.queue[0].order[0], ks.seq)
        if heads.get(key) != head:
            heads[key] = head
            oldest = self._oldest
            assert oldest is not None  # (only called with the index)
            heapq.heappush(oldest, (head[0], head[1], key))
            if len(oldest) > 2 * len(heads) + 64:  # mostly stale: keep the live heads only
                self._oldest = [(start, seq, k) for k, (start, seq) in heads.items()]
                heapq.heapify(self._oldest)

    def _oldest_key(self, keys: dict[Any, KeyState]) -> KeyState | None:
        """The key whose oldest partial match started first (then: first seen), or None."""
        oldest = self._oldest
        assert oldest is not None
        heads = self._heads
        while oldest:
            start, seq, key = oldest[0]
            if heads.get(key) == (start, seq):
                # (left in place: the key's next head replaces it, or it stays true; a key with
                # partial matches holds state)
                return keys[key]
            heapq.heappop(oldest)
        return None

    def check(self, keys: dict[Any, KeyState], ks: KeyState, timestamp: int, out: list[Output]) -> None:
        """After the runs of ``ks`` changed at ``timestamp``: count them, and apply the policy
        to the key and then to the operator if either is past its limit."""
        n = self.recount(ks)
        per_key = self._per_key
        per_operator = self._per_operator
        over_key = per_key is not None and n > per_key
        over_operator = per_operator is not None and self.total > per_operator
        if not (over_key or over_operator):
            return
        if self._policy == "fail":
            raise PartialMatchLimitError(ks.key, n, self.total, self.limit)
        if over_key:
            self._drop(ks, n - per_key, timestamp, PER_KEY, out)  # type: ignore[operator]
        if per_operator is not None and self.total > per_operator:
            excess = self.total - per_operator
            if self._policy == "drop_newest":
                self._drop(ks, excess, timestamp, PER_OPERATOR, out)
            else:
                self._drop_oldest_of_all(keys, ks, excess, timestamp, out)

    def _drop(self, ks: KeyState, n: int, timestamp: int, which: str, out: list[Output]) -> None:
        """Drop ``n`` of the key's partial matches, by the policy."""
        state = ks.state
        if self._policy == "drop_oldest":
            # the heap's head is the earliest start (start runs sort last)
            self._release(ks, [state.poll() for _ in range(n)], timestamp, which, out)
            return
        partial = [run for run in state.queue if run.order is not NO_START]
        victims = heapq.nlargest(n + 1, partial, key=_order)
        survivor = victims.pop() if len(victims) > n else None  # the latest start left
        chosen = {id(run) for run in victims}
        state.remove_if(lambda run: id(run) in chosen)
        self._release(ks, victims, timestamp, which, out, survivor)

    def _drop_oldest_of_all(
        self, keys: dict[Any, KeyState], current: KeyState, n: int, timestamp: int, out: list[Output]
    ) -> None:
        """Drop the ``n`` partial matches of the earliest start among all keys (by start time,
        then by the key's first appearance), one at a time."""
        for _ in range(n):
            oldest = self._oldest_key(keys)
            if oldest is None:
                return
            self._release(oldest, [oldest.state.poll()], timestamp, PER_OPERATOR, out)
            if oldest is not current:
                settle_dropped(keys, oldest)

    def _release(
        self,
        ks: KeyState,
        victims: list[Any],
        timestamp: int,
        which: str,
        out: list[Output],
        survivor: Any = NO_START,
    ) -> None:
        """Release each dropped run's shared-buffer entries (as a timeout does) and emit it.

        ``survivor``: NO_START when the victims were the key's oldest partial matches, else the
        latest partial match left (None: none), the victims being the latest."""
        buffer = ks.buffer
        key = ks.key
        for run in victims:
            match = own_match(buffer, run)
            buffer.release_node(run.previous_entry, run.version)
            dropped = DroppedPartialMatch(key, match, run.order[0], timestamp, which)
            out.append(make_output(DROPPED, key, dropped, timestamp))
        self.dropped += len(victims)
        ks.deadline = UNKNOWN  # (the key's next timeout may have been a dropped run's)
        if self._window:
            if survivor is NO_START:
                trim_oldest_timers(ks, self._window)
            else:
                trim_newest_timers(ks, self._window, timestamp, victims, survivor)
        self.recount(ks)


# Window timers of dropped partial matches go with them. A window timer (start + window) only
# advances the key to time out the partial matches of that start; where the window is the
# pattern's alone (no per-step windows) every partial match times out exactly at its own timer,
# so the timer of a dropped one would time out nothing. Kept, a key would hold a timer per start
# for a whole window: state without bound again. (The timer lists are changed in place: a
# firing of the key holds them.)


def trim_oldest_timers(ks: KeyState, window: int) -> None:
    """After dropping the key's oldest partial matches: its timers before the oldest left's go,
    all of them if none is left (and the element at work then registers none)."""
    state = ks.state
    runs = state.queue
    timers = ks.timers
    if not runs or runs[0].order is NO_START:
        timers.clear()
        state.new_start_partial_match = False
    elif timers:
        del timers[: bisect_left(timers, runs[0].order[0] + window)]


def trim_newest_timers(ks: KeyState, window: int, timestamp: int, victims: list[Any], survivor: Any) -> None:
    """After dropping the key's latest partial matches: their timers go, but for the start of
    the latest left (``survivor``, None: none); the element at ``timestamp`` registers none unless
    a partial match it started is left."""
    state = ks.state
    kept = None if survivor is None else survivor.order[0]
    timers = ks.timers
    for start in {run.order[0] for run in victims}:
        if start != kept:
            at = bisect_left(timers, start + window)
            if at < len(timers) and timers[at] == start + window:
                del timers[at]
    if kept is None or kept < timestamp:
        state.new_start_partial_match = False


def settle_dropped(keys: dict[Any, KeyState], ks: KeyState) -> None:
    """A key other than the one at work lost partial matches: its next timeout must be computed
    again, and if it now holds nothing at all (no runs, elements, timers or schedule) it goes,
    as the operator drops a key after firing (a key that is scheduled goes when it fires)."""
    ks.deadline = UNKNOWN
    state = ks.state
    if state.is_empty() and ks.head is EMPTY and ks.due is NOT_DUE and not ks.timers:
        if keys.get(ks.key) is ks:
            del keys[ks.key]
