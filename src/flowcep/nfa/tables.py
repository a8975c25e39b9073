"""Decision tables: each state's depth-first decision search unrolled into a generated function.

A decision depends only on which conditions hold. The depth-first search of ``NFA._decide``
(with the PROCEED searches for final states after each TAKE) is unrolled here, once per state:
every condition it may evaluate becomes an ``if`` of a generated function, in the order Flink
evaluates them, and every way through ends in a decision made now. Per event the hot path runs
the function instead of the search. For a state whose conditions read no partial match the
function is ``decide(event)`` and its decision holds for every run in the state; otherwise it is
``decide(event, ctx)``, called per run with the run's context. Searches that branch too much or
loop (PROCEED cycles) are left to ``NFA._decide``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flowcep.nfa.codegen import generated
from flowcep.nfa.compiled import (
    IGNORE_CODE,
    PROCEED_CODE,
    TAKE_CODE,
    CompiledState,
    Decision,
    Transition,
    unchanged,
)
from flowcep.nfa.conditions import And, Atom, Not, TrueCond
from flowcep.pattern.exceptions import ConditionError

Table = Callable[..., Decision]


def decision_table(
    states: dict[str, CompiledState], state: CompiledState, with_context: bool
) -> Table | None:
    """``state``'s decision as a generated function (see the module docstring), or None: decide
    by searching. ``with_context``: the decision may read the run's partial match."""
    unrolled = _Unrolled(states, state, with_context)
    try:
        unrolled.search(2, (), state, 0, (), {})
    except _TooBig:
        return None
    if not unrolled.evaluators:
        decision = unrolled.decisions[0]
        return (lambda event, ctx: decision) if with_context else (lambda event: decision)
    names: dict[str, Any] = {"pages": tuple(unrolled.pages), "ConditionError": ConditionError}
    for k, evaluator in enumerate(unrolled.evaluators):
        names[f"f{k}"] = evaluator
    for n, decision in enumerate(unrolled.decisions):
        names[f"d{n}"] = decision  # (a branch returns d<n>: a load, not a subscript)
    code = "\n".join(
        [
            "def decide(event, ctx):" if with_context else "def decide(event):",
            "    try:",
            *unrolled.lines,  # (the first sets i, the condition evaluated, before it is read)
            "    except Exception as exc:",
            "        raise ConditionError(pages[i], event, exc) from exc",
        ]
    )
    # generated from the compiled states, no user text; shared by equal patterns' NFAs
    table: Table = generated(code, "decide", names)
    return table


def reaches_iterative(states: dict[str, CompiledState], name: str) -> bool:
    """Whether deciding for a run in state ``name`` can call an iterative condition: on any
    edge of a state the decision graph reaches through PROCEED edges, or on a PROCEED edge of
    the search for a final state after one of their TAKE edges (Flink's
    ``findFinalStateAfterProceed``, which evaluates with the run's context too). Such a
    decision is made per run, never shared by the runs of a state."""
    return next(iterative_transitions(states, name), None) is not None


def iterative_transitions(states: dict[str, CompiledState], name: str) -> Iterator[Transition]:
    """The transitions with an iterative condition that deciding in state ``name`` may evaluate
    (see ``reaches_iterative``)."""
    for current in _proceed_closure(states, name):
        for t in current.transitions:
            if t.iterative:
                yield t
        for t in current.transitions:
            if t.action == TAKE_CODE:
                for st in _proceed_closure(states, t.target):
                    for u in st.transitions:
                        if u.action == PROCEED_CODE and u.iterative:
                            yield u


def _proceed_closure(states: dict[str, CompiledState], name: str) -> list[CompiledState]:
    """``name``'s state and every state reachable from it through PROCEED edges."""
    seen: dict[str, CompiledState] = {}
    stack = [name]
    while stack:
        current = states[stack.pop()]
        if current.name in seen:
            continue
        seen[current.name] = current
        stack.extend(t.target for t in current.transitions if t.action == PROCEED_CODE)
    return list(seen.values())


def table_starts_nothing(table: Callable[[Any], Decision]) -> Callable[[Any], bool]:
    """``NFA._starts_nothing`` for one start state whose decision is ``table(event)``."""

    def starts_nothing(event: Any) -> bool:
        try:
            return not table(event).edges
        except Exception:
            return False  # the event takes the normal path, where the error surfaces

    return starts_nothing


def generated_starts_nothing(
    states: dict[str, CompiledState], state: CompiledState
) -> Callable[[Any], bool] | None:
    """``table_starts_nothing`` for start state ``state``, whose decision reads no partial match,
    as one generated function: the state's search unrolled as for its table, each branch
    returning whether its decision has no edges (one call per event less: with many keys most
    events meet a key without runs). None: the search is too big to unroll."""
    unrolled = unrolled_decision(states, state, "", "return nothing{}")
    if unrolled is None:
        return None
    lines, evaluators, _, decisions = unrolled
    names: dict[str, Any] = {f"f{k}": evaluator for k, evaluator in enumerate(evaluators)}
    names.update({f"nothing{n}": not decision.edges for n, decision in enumerate(decisions)})
    code = "\n".join(
        [
            "def starts_nothing(event):",
            "    try:",
            *lines,
            "    except Exception:",
            "        return False  # the event takes the normal path, where the error surfaces",
        ]
    )
    # generated from the compiled states, no user text
    starts_nothing: Callable[[Any], bool] = generated(code, "starts_nothing", names)
    return starts_nothing


class _TooBig(Exception):
    """The unrolled search would be too large (or loops): decide by searching instead."""


# the search's next transition: (stack, state, index after it, transition)
_Step = tuple[tuple[CompiledState, ...], CompiledState, int, Transition]


class _Unrolled:
    """``NFA._decide``'s search for one state, unrolled into the lines of a generated function.

    ``search`` follows the depth-first search of ``_decide``: a transition without a
    condition is applied, one with a condition becomes ``if f<k>(event):`` (an iterative one
    ``if f<k>(event, ctx):``) with the search continued on both sides, unless the branch taken
    so far already tells the condition's value (``_known_value``). Once the search is done, the
    PROCEED search for a final state after each TAKE edge (``NFA._find_final_state_after_proceed``)
    is unrolled the same way; at the end of every branch the decision is made and the line
    returns it.
    """

    MAX_CONDITIONS = 64
    MAX_STEPS = 2000

    def __init__(
        self,
        states: dict[str, CompiledState],
        state: CompiledState,
        with_context: bool,
        prefix: str = "",
        leaf: str = "return d{}",
    ) -> None:
        self.states = states
        self.state = state
        # how the lines name condition k (``{prefix}f{k}``) and end a branch with decision n
        # (``leaf.format(n)``): a generated step (flowcep.nfa.stepgen) inlines them
        self.prefix = prefix
        self.leaf = leaf
        # whether the function gets the run's context (its decision may read the partial match)
        self.with_context = with_context
        self.lines: list[str] = []
        self.evaluators: list[Any] = []
        self.pages: list[str] = []
        self.decisions: list[Decision] = []
        self.steps = 0

    def _next(self, stack: tuple[CompiledState, ...], st: CompiledState | None, k: int) -> _Step | None:
        """The search's next transition, None at its end (``st`` None: pop the next state off
        the stack)."""
        while True:
            self.steps += 1
            if self.steps > self.MAX_STEPS:
                raise _TooBig
            if st is None:
                if not stack:
                    return None
                st, stack, k = stack[-1], stack[:-1], 0
            if k < len(st.transitions):
                return stack, st, k + 1, st.transitions[k]
            st = None

    def _condition(self, depth: int, transition: Transition) -> None:
        if len(self.evaluators) >= self.MAX_CONDITIONS or (transition.iterative and not self.with_context):
            # too many branches, or an iterative condition found only after a TAKE (the final
            # search): the state's decision is shared by all its runs, this one is not
            raise _TooBig
        k = len(self.evaluators)
        self.evaluators.append(transition.evaluator)
        self.pages.append(transition.page)
        pad = "    " * depth
        f = f"{self.prefix}f{k}"
        call = f"{f}(event, ctx)" if transition.iterative else f"{f}(event)"  # iterative: the run's context
        self.lines += [f"{pad}i = {k}", f"{pad}if {call}:"]

    def search(
        self,
        depth: int,
        stack: tuple[CompiledState, ...],
        st: CompiledState | None,
        k: int,
        edges: tuple[Transition, ...],
        known: dict[int, bool],
    ) -> None:
        """Continue the search in state ``st`` at transition ``k`` (``st`` None: pop the stack);
        ``known``: the user conditions whose value the branch taken so far tells."""
        while True:
            step = self._next(stack, st, k)
            if step is None:
                self.finals(depth, edges, 0, (), known)
                return
            stack, st, k, transition = step
            cond = transition.condition
            held_stack: tuple[CompiledState, ...]
            if transition.action == PROCEED_CODE:
                held_stack, held_edges = (*stack, self.states[transition.target]), edges
            else:
                held_stack, held_edges = stack, (*edges, transition)
            holds = True if transition.evaluator is None else _known_value(cond, known)
            if holds is True:
                stack, edges = held_stack, held_edges
                continue
            if holds is False:
                continue
            self._condition(depth, transition)
            self.search(depth + 1, held_stack, st, k, held_edges, _learn(cond, True, known))
            self.lines.append("    " * depth + "else:")
            self.search(depth + 1, stack, st, k, edges, _learn(cond, False, known))
            return

    def finals(
        self,
        depth: int,
        edges: tuple[Transition, ...],
        j: int,
        found: tuple[str | None, ...],
        known: dict[int, bool],
    ) -> None:
        """The final state after PROCEED for each TAKE edge from ``j`` on, then the decision."""
        while j < len(edges) and edges[j].action != TAKE_CODE:
            found = (*found, None)
            j += 1
        if j == len(edges):
            self.decide(depth, edges, found)
            return
        self.final_search(depth, edges, j, found, (), self.states[edges[j].target], 0, known)

    def final_search(
        self,
        depth: int,
        edges: tuple[Transition, ...],
        j: int,
        found: tuple[str | None, ...],
        stack: tuple[CompiledState, ...],
        st: CompiledState | None,
        k: int,
        known: dict[int, bool],
    ) -> None:
        """Continue the PROCEED search for edge ``j``'s final state in ``st`` at transition ``k``."""
        while True:
            step = self._next(stack, st, k)
            if step is None:
                self.finals(depth, edges, j + 1, (*found, None), known)
                return
            stack, st, k, transition = step
            if transition.action != PROCEED_CODE:
                continue
            cond = transition.condition
            target = self.states[transition.target]
            holds = True if transition.evaluator is None else _known_value(cond, known)
            if holds is False:
                continue
            if holds is None:
                self._condition(depth, transition)
                taken = _learn(cond, True, known)
                if target.is_final:
                    self.finals(depth + 1, edges, j + 1, (*found, target.name), taken)
                else:
                    self.final_search(depth + 1, edges, j, found, (*stack, target), st, k, taken)
                self.lines.append("    " * depth + "else:")
                self.final_search(depth + 1, edges, j, found, stack, st, k, _learn(cond, False, known))
                return
            if target.is_final:
                self.finals(depth, edges, j + 1, (*found, target.name), known)
                return
            stack = (*stack, target)

    def decide(self, depth: int, edges: tuple[Transition, ...], finals: tuple[str | None, ...]) -> None:
        name = self.state.name
        takes = sum(1 for t in edges if t.action == TAKE_CODE)
        ignores = sum(1 for t in edges if t.action == IGNORE_CODE and t.target != name)
        self.lines.append("    " * depth + self.leaf.format(len(self.decisions)))
        as_list = list(edges)
        self.decisions.append(
            # the decision's plans (for a full buffer, for a PathlessBuffer), compiled on first use
            Decision(
                as_list,
                takes,
                ignores,
                list(finals) if takes else None,
                unchanged(self.state, as_list),
                [None, None],
            )
        )


def _known_value(cond: Any, known: dict[int, bool]) -> bool | None:
    """The value of ``cond`` for this event when the conditions evaluated on the way here tell
    it, else None. A user condition is keyed by identity: the compiler wraps one condition in
    several nodes (a followedBy step takes on ``c`` and ignores on ``not c``), and conditions
    are pure functions of the event, as the per-state decision cache already assumes. An ``and``
    whose left side is unknown stays unknown: Flink evaluates the left side first, and it may
    raise."""
    if cond is None or isinstance(cond, TrueCond):
        return True
    if isinstance(cond, Atom):
        return known.get(id(cond.condition))
    if isinstance(cond, Not):
        inner = _known_value(cond.inner, known)
        return None if inner is None else not inner
    if isinstance(cond, And):
        left = _known_value(cond.left, known)
        if left is not True:
            return left  # False, or None: unknown
        return _known_value(cond.right, known)
    return None


def _learn(cond: Any, value: bool, known: dict[int, bool]) -> dict[int, bool]:
    """``known`` plus what ``cond`` evaluating to ``value`` tells."""
    while isinstance(cond, Not):
        cond, value = cond.inner, not value
    if isinstance(cond, Atom):
        return {**known, id(cond.condition): value}
    if isinstance(cond, And) and value:
        return _learn(cond.right, True, _learn(cond.left, True, known))
    return known


def unrolled_decision(
    states: dict[str, CompiledState], state: CompiledState, prefix: str, leaf: str
) -> tuple[list[str], list[Any], list[str], list[Decision]] | None:
    """``decision_table``'s search for ``state`` (a decision that reads no partial match) as
    lines to inline: condition k is called ``{prefix}f{k}`` and sets ``i = k`` first, a branch
    ends in ``leaf.format(n)`` for decision n. Returns the lines (indented for depth 2), the
    evaluators, their pages and the decisions; None: decide by searching."""
    unrolled = _Unrolled(states, state, False, prefix, leaf)
    try:
        unrolled.search(2, (), state, 0, (), {})
    except _TooBig:
        return None
    return unrolled.lines, unrolled.evaluators, unrolled.pages, unrolled.decisions
