"""NFA states and transitions (Flink's ``State`` and ``StateTransition``)."""

from __future__ import annotations

import enum
from typing import Any


class StateType(enum.Enum):
    Start = "Start"
    Normal = "Normal"
    Final = "Final"
    Stop = "Stop"
    Pending = "Pending"


class StateTransitionAction(enum.Enum):
    TAKE = "TAKE"  # consume the event, store it under the source's pattern name
    IGNORE = "IGNORE"  # drop the event, keep the run alive at the target
    PROCEED = "PROCEED"  # epsilon edge, evaluated on the current event


TAKE = StateTransitionAction.TAKE
IGNORE = StateTransitionAction.IGNORE
PROCEED = StateTransitionAction.PROCEED


class StateTransition:
    """An edge ``source --action[condition]--> target``.

    ``condition`` is a compiler condition node (``None`` means always true);
    the NFA turns it into a plain callable once, when it is built.
    """

    __slots__ = ("source", "action", "target", "condition")

    def __init__(self, source: State, action: StateTransitionAction, target: State, condition: Any) -> None:
        self.source = source
        self.action = action
        self.target = target
        self.condition = condition

    def __repr__(self) -> str:
        return f"StateTransition({self.action.value}, {self.source.name} -> {self.target.name}, {self.condition!r})"


class State:
    """A named NFA state with its outgoing transitions, in insertion order."""

    __slots__ = ("name", "state_type", "transitions")

    def __init__(self, name: str, state_type: StateType) -> None:
        self.name = name
        self.state_type = state_type
        self.transitions: list[StateTransition] = []

    def add_transition(self, action: StateTransitionAction, target: State, condition: Any) -> None:
        self.transitions.append(StateTransition(self, action, target, condition))

    def add_take(self, target: State | None, condition: Any) -> None:
        self.add_transition(TAKE, self if target is None else target, condition)

    def add_ignore(self, target: State | None, condition: Any) -> None:
        self.add_transition(IGNORE, self if target is None else target, condition)

    def add_proceed(self, target: State, condition: Any) -> None:
        self.add_transition(PROCEED, target, condition)

    def make_start(self) -> None:
        self.state_type = StateType.Start

    @property
    def is_start(self) -> bool:
        return self.state_type is StateType.Start

    @property
    def is_final(self) -> bool:
        return self.state_type is StateType.Final

    @property
    def is_stop(self) -> bool:
        return self.state_type is StateType.Stop

    @property
    def is_pending(self) -> bool:
        return self.state_type is StateType.Pending

    def __repr__(self) -> str:
        return f"State({self.name!r}, {self.state_type.value}, {len(self.transitions)} transitions)"
