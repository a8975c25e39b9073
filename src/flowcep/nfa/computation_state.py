"""Runs (Flink's ``ComputationState``) and the per-key run queues (``NFAState``)."""

from __future__ import annotations

from typing import Any

from flowcep.nfa.heap import JavaPriorityQueue
from flowcep.sharedbuffer.dewey import DeweyNumber

# Runs without a start event (the start run) sort last, like Flink's Long.MAX_VALUE (written
# ~-(2**63): on PyPy 2**63 - 1 is a big-int object, slower to compare; see runtime.LONG_MAX).
NO_START = (~-(2**63), 2**31 - 1)
START_VERSION: DeweyNumber = (1,)  # a key's first start run's (versions are tuples, never changed)
_new = object.__new__


class ComputationState:
    """One partial match: where it is, its version, and what it took last.

    Five fields, so that PyPy keeps a run in one object (an instance of more than five keeps the
    rest in a second one). Flink's other fields follow from these: the start timestamp and
    start event from ``order`` (a run's start event id, whose first part is its timestamp), the
    previous timestamp from ``previous_entry`` (the node of the last event taken, whose id's
    first part is that event's timestamp), the state's name from ``slot``.
    """

    __slots__ = ("slot", "previous_entry", "version", "order", "match")

    def __init__(
        self,
        state: str,
        previous_entry: Any,
        version: DeweyNumber,
        start_event_id: Any,
    ) -> None:
        # the run's state: its name, or once the NFA has seen the run the state's _DecisionSlot
        # (how the NFA decides for runs in the state: a field read on the hot path instead of a
        # dict lookup by name; not pickled, a run belongs to the key states of one NFA)
        self.slot: Any = state
        self.previous_entry = previous_entry
        self.version = version
        # the start event's id, by which the run queue orders runs; start runs sort last
        self.order = NO_START if start_event_id is None else start_event_id
        # what iterative conditions see: the run's events by step, or how to build them from
        # the run it came from ((parent match, page, event) after a TAKE); None: extract it
        # from the shared buffer. Not pickled with the run: where the key's buffer records the
        # paths it is a cache; where it does not (PathlessBuffer) a snapshot keeps it apart
        # (NFA.run_matches).
        self.match: Any = None

    @classmethod
    def start(cls, state: str, version: DeweyNumber = START_VERSION) -> ComputationState:
        return cls(state, None, version, None)

    @property
    def state(self) -> str:
        """The name of the run's state."""
        slot = self.slot
        return slot if slot.__class__ is str else slot.state.name

    @property
    def start_event_id(self) -> Any:
        """The id of the run's first event; None for a start run."""
        order = self.order
        return None if order is NO_START else order

    @property
    def start_timestamp(self) -> int:
        """The timestamp of the run's first event; -1 for a start run."""
        order = self.order
        return -1 if order is NO_START else order[0]

    @property
    def previous_timestamp(self) -> int:
        """The timestamp of the last event the run took; -1 for a start run."""
        entry = self.previous_entry
        return -1 if entry is None else entry[0][0]

    def _key(self) -> tuple[Any, ...]:
        return (
            self.state,
            self.previous_entry,
            self.version,
            self.start_timestamp,
            self.previous_timestamp,
            self.start_event_id,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComputationState) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"ComputationState({self.state!r}, version={'.'.join(map(str, self.version))}, "
            f"start={self.start_event_id}, entry={self.previous_entry})"
        )

    def __getstate__(self) -> tuple[Any, ...]:
        return self._key()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        # Flink's six fields (the two timestamps follow from the others)
        self.slot, self.previous_entry, self.version, _, _, start_event_id = state
        self.order = NO_START if start_event_id is None else start_event_id
        self.match = None


# The completed-match queue of every key that holds none back: one shared queue that is never
# changed (the NFA replaces it before adding). Most keys never hold a match back, and an empty
# queue of their own would be two more objects per key for the garbage collector to walk.
NO_COMPLETED_MATCHES: JavaPriorityQueue = JavaPriorityQueue()


class NFAState(JavaPriorityQueue):
    """Partial and completed (held back by a skip strategy) runs of one key.

    The state is itself the queue of its partial runs (``partial_matches`` is the state): with
    many keys, one object per key less for the garbage collector to walk, which is much of the
    time then (docs/runtime.md §8).
    """

    __slots__ = ("completed_matches", "new_start_partial_match", "runs_changed", "unbound")

    def __init__(self, runs: list[ComputationState] | None = None) -> None:
        super().__init__(runs or ())
        # some run may be known by its state's name only (given here, or restored): the NFA finds
        # the runs' decision slots before it next reads them (runs it makes have theirs)
        self.unbound = bool(runs)
        self.completed_matches = NO_COMPLETED_MATCHES
        # Flink's flag: a start run took an event with a timestamp > 0 (the operator then
        # registers a window timer); the operator resets it, it is not part of snapshots
        self.new_start_partial_match = False
        # ``NFA.process`` changed the partial runs (the queue keeps its list); reset by the
        # operator, which keeps the key's next timeout until then; not part of snapshots
        self.runs_changed = False

    @classmethod
    def of_start_runs(cls, runs: list[ComputationState], unbound: bool = True) -> NFAState:
        """The state of a new key: ``runs``, start runs (their own list), which all sort equal,
        so that adding them one by one would leave them in this order. ``unbound`` False: the
        runs have their decision slots (the NFA made them)."""
        state = cls()
        state.queue = runs
        state.unbound = unbound
        return state

    @classmethod
    def of_start_run(cls, slot: Any) -> NFAState:
        """The state of a new key whose one start run (its version ``(1,)``) is in ``slot``'s
        state, a decision slot: ``of_start_runs`` of ``ComputationState.start``, made without
        their calls (with many keys, a new key's state is made for about one element in six)."""
        run = _new(ComputationState)
        run.slot = slot
        run.previous_entry = None
        run.version = START_VERSION
        run.order = NO_START
        run.match = None
        state = _new(cls)
        state.queue = [run]
        state.unbound = False
        state.completed_matches = NO_COMPLETED_MATCHES
        state.new_start_partial_match = False
        state.runs_changed = False
        return state

    @property
    def partial_matches(self) -> JavaPriorityQueue:
        """The partial runs, in Java's heap order: this queue (the hot path reads ``queue``)."""
        return self

    def runs(self) -> list[ComputationState]:
        """Every run: the partial ones in queue order, then those held back."""
        return [*self.queue, *self.completed_matches.queue]

    def is_empty(self) -> bool:
        """Only start runs are left, and nothing is held back."""
        if self.completed_matches.queue:
            return False
        # runs are ordered by start event and start runs come last: look at the head only
        runs = self.queue
        return not runs or runs[0].order is NO_START

    def partial_match_count(self) -> int:
        return sum(1 for run in self.queue if run.start_event_id is not None)

    def __getstate__(self) -> tuple[Any, ...]:  # type: ignore[override]
        completed = self.completed_matches
        return (self.queue, completed if completed.queue else None)

    def __setstate__(self, state: tuple[Any, ...]) -> None:  # type: ignore[override]
        self.queue, completed = state
        self.completed_matches = NO_COMPLETED_MATCHES if completed is None else completed
        self.new_start_partial_match = False
        self.runs_changed = False
        self.unbound = True

    def __repr__(self) -> str:
        return f"NFAState(partial={list(self.queue)}, completed={list(self.completed_matches)})"
