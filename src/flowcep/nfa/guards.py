"""Run guards: iterative conditions that a library built on the NFA adds to a pattern (never a
user's), which the NFA evaluates natively.

A guard reads the event and the run (its partial match) and nothing else, and nobody counts its
calls. So, in a state whose only iterative conditions are guards, a decision in which no guard
was evaluated (the simple conditions before it already failed) holds for every run in the state
for this event, and ``NFA.process`` shares it as it does a simple state's. A guard gets a
``GuardContext``, which says whether it was read, and gives the guard the run itself
(``run.match``: its partial match as the NFA carries it, see ``flowcep.nfa.context``).
"""

from __future__ import annotations

from typing import Any

from flowcep.nfa.compiled import CompiledState
from flowcep.nfa.computation_state import ComputationState
from flowcep.nfa.conditions import And, Atom, Not, TrueCond
from flowcep.nfa.context import ConditionContext
from flowcep.nfa.tables import iterative_transitions
from flowcep.pattern import IterativeCondition
from flowcep.sharedbuffer.sharedbuffer import SharedBuffer


class RunGuard(IterativeCondition):
    """Base of the guards (see the module docstring); ``filter(event, ctx)`` gets a
    ``GuardContext`` in a state whose iterative conditions are all guards, else a plain
    ``ConditionContext``, and must set ``ctx.consulted`` when it gets a ``GuardContext``."""

    __slots__ = ()


class GuardContext(ConditionContext):
    """A run's context for guards: ``run``, the run being decided; ``consulted``, set by a
    guard that read it, tells the NFA that the decision is this run's alone."""

    __slots__ = ("consulted", "run")

    def __init__(self, buffer: SharedBuffer, run: ComputationState, timestamp: int) -> None:
        # ConditionContext's fields set here, not by its __init__: one call less per run
        self._buffer = buffer
        self._run = run
        self._timestamp = timestamp
        self.consulted = False
        self.run = run  # (a field, not a property: read once per guard call)


def guards_only(states: dict[str, CompiledState], name: str) -> bool:
    """Whether every iterative condition a decision in state ``name`` may call is a guard
    (False when it calls none: such a state decides once for all its runs anyway)."""
    found = False
    for transition in iterative_transitions(states, name):
        found = True
        if not _only_guards(transition.condition):
            return False
    return found


def _only_guards(cond: Any) -> bool:
    """Whether each iterative user condition in a compiler condition tree is a guard."""
    if cond is None or isinstance(cond, TrueCond):
        return True
    if isinstance(cond, Not):
        return _only_guards(cond.inner)
    if isinstance(cond, And):
        return _only_guards(cond.left) and _only_guards(cond.right)
    if isinstance(cond, Atom):
        return _user_guards_only(cond.condition)
    return False


def _user_guards_only(condition: Any) -> bool:
    if isinstance(condition, RunGuard):
        return True
    nested = getattr(condition, "get_nested_conditions", None)
    if nested is not None:
        return all(_user_guards_only(inner) for inner in nested())
    _, iterative = condition.compile()
    return not iterative
