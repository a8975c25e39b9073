"""The NFA's states as built for running: transitions with their conditions compiled to callables,
decisions, and the per-state slot through which ``NFA.process`` decides.

Built once per NFA from the compiler's ``State`` graph and never changed afterwards (except a
slot's per-call decision cache and a decision's plans, compiled on first use).
"""

from __future__ import annotations

from typing import Any

import attrs

from flowcep.nfa.conditions import Evaluator, compile_condition
from flowcep.nfa.names import original_name
from flowcep.nfa.state import IGNORE, PROCEED, TAKE, State, StateTransition, StateType

# a transition's action as a small int, compared with == on the search path
TAKE_CODE, IGNORE_CODE, PROCEED_CODE = 0, 1, 2
ACTION_CODE = {TAKE: TAKE_CODE, IGNORE: IGNORE_CODE, PROCEED: PROCEED_CODE}

# what a new run's state means for it: it lives on, it has matched, or it must stop the others;
# compared with ``is``
ALIVE, FINAL, STOP = "alive", "final", "stop"


@attrs.frozen(eq=False)
class Transition:
    """A compiled edge: its ``action`` code, its condition as ``evaluator`` (None: always true;
    called ``evaluator(event)``, or ``evaluator(event, ctx)`` when ``iterative``), its target's
    and source's state names, and ``page``, the step that a TAKE stores the event under (the
    source's name without its internal suffix). ``condition`` is the compiler's condition node,
    which the decision-table builder reasons about."""

    action: int
    evaluator: Evaluator | None
    target: str
    source: str
    page: str
    iterative: bool
    condition: Any

    @classmethod
    def of(cls, transition: StateTransition) -> Transition:
        evaluator, iterative = compile_condition(transition.condition)
        return cls(
            ACTION_CODE[transition.action],
            evaluator,
            transition.target.name,
            transition.source.name,
            original_name(transition.source.name),
            iterative,
            transition.condition,
        )


class CompiledState:
    """A state ready for the hot path: its type as flags and its transitions compiled, in the
    order of the compiler's state (``iterative``: some condition reads the partial match)."""

    __slots__ = ("name", "is_start", "is_final", "is_stop", "is_pending", "transitions", "iterative", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.name = state.name
        self.is_start = state.state_type is StateType.Start
        self.is_final = state.state_type is StateType.Final
        self.is_stop = state.state_type is StateType.Stop
        self.is_pending = state.state_type is StateType.Pending
        self.transitions = tuple(Transition.of(t) for t in state.transitions)
        self.iterative = any(t.iterative for t in self.transitions)


class Decision:
    """What the conditions decided for a run (Flink's decision graph plus, per TAKE edge, its
    ``findFinalStateAfterProceed``).

    ``edges``: the TAKE and IGNORE transitions that hold, in Flink's order; ``takes`` and
    ``ignores``: how many TAKE edges and IGNORE edges to other states; ``finals[i]``: the final
    state reached by PROCEED after taking ``edges[i]`` (None when no TAKE); ``unchanged``: the
    run survives as it is (it only ignores the event on its own state, or it is a start run that
    nothing starts); ``plans``: the decision's plans, for a full buffer and for a
    ``PathlessBuffer``, compiled on first use (``flowcep.nfa.plans``), or None for a decision made
    by searching, which ``NFA._compute_next_states`` applies.
    """

    __slots__ = ("edges", "takes", "ignores", "finals", "unchanged", "plans")

    def __init__(
        self,
        edges: list[Transition],
        takes: int,
        ignores: int,
        finals: list[str | None] | None,
        unchanged: bool,
        plans: list[Any] | None,
    ) -> None:
        self.edges = edges
        self.takes = takes
        self.ignores = ignores
        self.finals = finals
        self.unchanged = unchanged
        self.plans = plans

    def __repr__(self) -> str:
        edges = ", ".join(f"{t.action}->{t.target}" for t in self.edges)
        return f"Decision([{edges}], takes={self.takes}, ignores={self.ignores}, finals={self.finals})"


def unchanged(state: CompiledState, edges: list[Transition]) -> bool:
    """Whether a run in ``state`` survives a decision with ``edges`` as it is: it only ignores
    the event on its own state, or it is a start run that nothing starts."""
    return (not edges and state.is_start) or (
        len(edges) == 1 and edges[0].action == IGNORE_CODE and edges[0].target == state.name
    )


class DecisionSlot:
    """How ``NFA.process`` decides for the runs in one state: by its generated ``table``
    (``decide(event)``, or ``decide(event, ctx)`` when the decision reads the run's partial match,
    ``per_run``) or, without one, by searching; a decision shared by the state's runs is kept for
    the call that made it (the call's ``epoch``). ``guarded``: a per-run state whose iterative
    conditions are all run guards (``flowcep.nfa.guards``), whose decision is shared when no
    guard read the run. ``run_table``: the table of a per-run state that is not guarded, which
    ``process`` calls for each run first of all (None otherwise). ``expires``: a run in the state
    times out when its window ends (not a start state, whose runs stay, nor a pending one, whose
    runs complete then)."""

    __slots__ = ("state", "table", "per_run", "epoch", "decision", "guarded", "run_table", "expires")

    def __init__(self, state: CompiledState, table: Any, per_run: bool) -> None:
        self.state = state
        self.table = table
        self.per_run = per_run
        self.epoch = 0  # no call yet
        self.decision: Decision | None = None
        self.guarded = False
        self.run_table: Any = None
        self.expires = not state.is_start and not state.is_pending
