"""The NFA: runs events through compiled states (Flink's ``NFA``).

``process`` feeds one event to every run of one key; ``advance_time`` times
runs out and releases matches held back by notFollowedBy or a skip strategy.
The control flow and the Dewey version arithmetic follow Flink 2.3 exactly;
the speed comes from precompiled transitions and from a fast path for runs
that only ignore the event (they survive unchanged, with no buffer work).

What is built lives beside this run loop: the compiled states and decisions in
``flowcep.nfa.compiled``, their decision tables in ``flowcep.nfa.tables``, the plans that
apply decisions in ``flowcep.nfa.plans``, and a run's partial match in ``flowcep.nfa.context``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.nfa.compiled import (
    ALIVE,
    FINAL,
    IGNORE_CODE,
    PROCEED_CODE,
    STOP,
    TAKE_CODE,
    CompiledState,
    Decision,
    DecisionSlot,
    Transition,
    unchanged,
)
from flowcep.nfa.computation_state import NO_COMPLETED_MATCHES, NO_START, ComputationState, NFAState
from flowcep.nfa.context import ConditionContext, EventHandle, Match, own_match
from flowcep.nfa.guards import GuardContext, guards_only
from flowcep.nfa.heap import JavaPriorityQueue
from flowcep.nfa.plans import NO_EVENTS, Plan, compile_plan, self_state
from flowcep.nfa.state import State
from flowcep.nfa.tables import (
    decision_table,
    generated_starts_nothing,
    reaches_iterative,
    table_starts_nothing,
)
from flowcep.pattern.aftermatch import SkipPastLastStrategy
from flowcep.pattern.exceptions import ConditionError, FlinkRuntimeException
from flowcep.sharedbuffer.dewey import increase
from flowcep.sharedbuffer.sharedbuffer import EventId, SharedBuffer

# the old names of what moved out of this module (patch flowcep.nfa.context.current_match and
# built_match, not a name here, to change how partial matches are built)
_EventHandle = EventHandle
_DecisionSlot = DecisionSlot

__all__ = ["NFA", "CompiledState", "ConditionContext", "Decision", "Match", "Transition"]


class NFA:
    """A compiled pattern: ``process`` and ``advance_time`` over one key's state."""

    def __init__(
        self,
        states: list[State],
        window_times: dict[str, int],
        window_time: int,
        handle_timeout: bool,
        skip_strategy: Any,
    ) -> None:
        self.window_time = window_time
        self.window_times = dict(window_times)
        self.handle_timeout = handle_timeout
        self.skip_strategy = skip_strategy
        self.raw_states = list(states)
        # later states with the same name replace earlier ones, as in Flink's state map
        latest = {state.name: state for state in states}
        self.states: dict[str, CompiledState] = {name: CompiledState(state) for name, state in latest.items()}
        for compiled in self.states.values():
            for t in compiled.transitions:
                if t.target not in self.states:
                    raise KeyError(f"a transition of {compiled.name!r} leads to no state: {t.target!r}")
        # whether a decision from a state can evaluate an iterative condition (through PROCEED edges)
        self._needs_context: dict[str, bool] = {
            name: reaches_iterative(self.states, name) for name in self.states
        }
        self._start_names = [s.name for s in self.states.values() if s.is_start]
        # starts_nothing() can judge an event without a run only if no start decision reads one
        self._simple_start = not any(self._needs_context[name] for name in self._start_names)
        # A looping group whose steps can all be skipped has a cycle of PROCEED edges; when its
        # conditions hold, Flink's depth-first search never ends.  flowcep stops and says so.
        self._proceed_budget = 1000 * (len(self.states) + 1)
        # False: every decision goes through _compute_next_states, the reference that the
        # decisions' generated plans (flowcep.nfa.plans) are tested against
        self.plans_enabled = True
        # False: advance_time re-adds every run that stays to a new queue, as Flink does, the
        # reference that its shortcuts for a queue in start order (_window_timeouts, and the
        # prefix of advance_time's general way) are tested against
        self.prefix_timeouts_enabled = True
        # the completed runs of one process call (a scratch queue, emptied by each call)
        self._potential = JavaPriorityQueue()
        self._handle = EventHandle(None, 0)  # process's event handle when no condition needed one
        # what iterative conditions see; use_clock gives it the operator's processing-time clock
        self.condition_context: type[ConditionContext] = ConditionContext
        # the context process() points at each run decided per run by a table, in turn
        self._context = ConditionContext(None, None, 0)  # type: ignore[arg-type]
        self._skips = bool(skip_strategy.is_skip_strategy())
        self._needs_paths = self.needs_paths()
        # what a new run's state means for it: it lives on, it has matched, or it must stop
        self._kinds = {
            name: FINAL if st.is_final else STOP if st.is_stop else ALIVE for name, st in self.states.items()
        }
        # each state's decision table (flowcep.nfa.tables): decide(event), or decide(event, ctx)
        # for a state whose decision reads the run's partial match; process() keeps a shared
        # decision in the slot for the call that made it (``_epoch`` counts calls)
        self._slots: dict[str, DecisionSlot] = {}
        for name, compiled in self.states.items():
            per_run = self._needs_context[name]
            self._slots[name] = slot = DecisionSlot(
                compiled, decision_table(self.states, compiled, per_run), per_run
            )
            slot.guarded = per_run and guards_only(self.states, name)
            if per_run and not slot.guarded:
                slot.run_table = slot.table
        self._epoch = 0
        # what starts_nothing() asks (only when no start decision reads a partial match): each
        # start state with its decision table (None: search)
        self._start_tables = [(name, self._slots[name].table) for name in self._start_names]
        # starts_nothing for the usual pattern, one start state with a table: the table alone
        # (with many keys most events meet a key without runs, so this call is on the hot path)
        self.starts_nothing: Callable[[Any], bool] = self._starts_nothing
        if self._simple_start and len(self._start_tables) == 1:
            [(start_name, start_table)] = self._start_tables
            if start_table is not None:
                self.starts_nothing = generated_starts_nothing(
                    self.states, self.states[start_name]
                ) or table_starts_nothing(start_table)
        # only the pattern's window times runs out (advance_time's shortcut: _window_timeouts)
        self._window_only = not self.window_times and window_time > 0
        if self._window_only:
            # only the pattern's window (the usual case; the operator asks after most steps)
            self.next_deadline = head_deadline(window_time)  # type: ignore[method-assign,assignment]

    def use_clock(self, clock: Callable[[], int] | None) -> None:
        """Conditions' ``ctx.current_processing_time()`` reads ``clock`` (None: the wall clock)."""
        context_class: type[ConditionContext] = ConditionContext.with_clock(clock)
        self.condition_context = context_class
        self._context = context_class(None, None, 0)  # type: ignore[arg-type]

    # -- state --------------------------------------------------------------
    def create_initial_state(self) -> NFAState:
        names = self._start_names
        if len(names) == 1:
            # the usual case without a loop (on PyPy a loop of one turn splits the trace; W5
            # makes a key's state for about one event in six)
            return NFAState.of_start_run(self._slots[names[0]])
        return NFAState.of_start_runs([ComputationState.start(name) for name in names])

    def next_deadline(self, state: NFAState) -> int | None:
        """The earliest time at which ``advance_time`` would time out a run (None: none would;
        ``head_deadline`` stands in for it when the pattern's window is the only one)."""
        window_time = self.window_time
        window_times = self.window_times
        if not window_times:
            # only the pattern's window: the queue's head has the earliest start (runs are
            # ordered by their start event, whose timestamp is the run's start timestamp)
            runs = state.queue
            if window_time <= 0 or not runs:
                return None
            order = runs[0].order
            if order is NO_START:
                return None
            return order[0] + window_time  # type: ignore[no-any-return]
        deadline: int | None = None
        for run in state.queue:
            if run.start_event_id is None:
                continue
            if window_time > 0:
                t = run.start_timestamp + window_time
                if deadline is None or t < deadline:
                    deadline = t
            w = window_times.get(run.state)
            if w is not None and w > 0:
                t = run.previous_timestamp + w
                if deadline is None or t < deadline:
                    deadline = t
        return deadline

    def _starts_nothing(self, event: Any) -> bool:
        """``starts_nothing(event)``: whether ``event`` leaves a key that holds only its start
        runs exactly as it is.

        True when the start states' decisions are simple (they cannot read a partial match)
        and no edge holds: no run starts and no start run changes its version, so processing
        the event would change nothing (seed 000's pre-filter). A condition that raises gives
        False: the event then takes the normal path and the error surfaces there.
        """
        if not self._simple_start:
            return False
        try:
            for name, table in self._start_tables:
                if table is not None:
                    edges = table(event).edges
                else:
                    handle = EventHandle(event, 0)
                    edges = self._decide(None, None, handle, self.states[name], None).edges  # type: ignore[arg-type]
                if edges:
                    return False
        except Exception:
            return False
        return True

    # -- process ------------------------------------------------------------
    def process(
        self,
        buffer: SharedBuffer,
        state: NFAState,
        event: Any,
        timestamp: int,
        skip_strategy: Any = None,
    ) -> list[Match]:
        """Feed one event; return the matches it completes (Flink's ``process``)."""
        # the event as runs store it: made for the first decision that needs it (most events
        # change no run and need none)
        handle: EventHandle | None = None
        # Phase 1 evaluates every condition before anything changes, so that a condition that
        # raises leaves the key's runs and buffer untouched.  Reading first and writing second
        # gives Flink's results: a run's conditions only read its own, unchanged, path.
        # Decisions of states whose conditions are all simple depend only on the event: each
        # state's slot keeps its decision for the call that made it (its epoch; no dict per call,
        # one lookup per run); the states whose decisions are made per run say so in their slot.
        epoch = self._epoch = self._epoch + 1
        final_cache: dict[str, Any] | None = None  # _decide's finals, per call
        runs = state.queue
        if state.unbound:
            self._bind(state)
        context = self._context  # what tables deciding per run get, pointed at each run
        context._buffer = buffer
        context._timestamp = timestamp
        # from the first run that changes on (runs[first]): each run and its decision, None
        # when the run survives unchanged (same version, same entry: Flink's lock + release of
        # the entry cancel out). One list, and no enumerate or zip: under PyPy a loop of a few
        # turns is entered from the caller's trace, which allocates each iterator it uses.
        changes: list[Any] | None = None
        first = 0
        decision: Any
        for run in runs:
            slot = run.slot
            run_table = slot.run_table
            if run_table is not None:  # the decision reads the run's partial match
                context._run = run
                decision = run_table(event, context)
            elif slot.epoch == epoch:
                decision = slot.decision
            elif slot.per_run:
                table = slot.table
                if table is not None:  # (a guarded state)
                    ctx = GuardContext(buffer, run, timestamp)
                    decision = table(event, ctx)
                    if not ctx.consulted:  # decided by simple conditions: for all runs
                        slot.decision = decision
                        slot.epoch = epoch
                else:
                    handle = handle or EventHandle(event, timestamp)
                    decision = self._decide(buffer, run, handle, slot.state, None)
            else:
                table = slot.table
                if table is not None:
                    decision = table(event)
                else:
                    handle = handle or EventHandle(event, timestamp)
                    if final_cache is None:
                        final_cache = {}
                    decision = self._decide(buffer, run, handle, slot.state, final_cache)
                slot.decision = decision
                slot.epoch = epoch
            if changes is None:
                if decision.unchanged:
                    first += 1
                    continue
                changes = [run, decision]
            else:
                changes.append(run)
                changes.append(None if decision.unchanged else decision)
        if changes is None:
            # every run survives unchanged: the queue would be rebuilt identical (re-adding a
            # valid heap in array order keeps its layout)
            return []
        if handle is None:
            # one handle per NFA for phase 2, which runs no user code (no re-entry): no
            # allocation per event
            handle = self._handle
            handle.event = event
            handle.timestamp = timestamp
            handle.event_id = None
        try:
            # Phase 2: apply. The unchanged runs before the first change keep their places; the
            # runs from there on are taken out (they are in ``changes``) and the state, a queue
            # itself, collects the new partial runs in the list it has (not a new one: with many
            # keys a new list outlives PyPy's nursery and costs the collector).
            kinds = self._kinds
            new_partial = state
            del runs[first:]
            state.runs_changed = True
            potential = self._potential
            potential.queue = []
            pathless = 0 if buffer.keeps_paths else 1  # which of a decision's plans
            use_plans = self.plans_enabled
            queue = state.queue  # (the plans add to it too: one list throughout)
            items = iter(changes)
            for run in items:
                planned_decision = next(items)
                if planned_decision is None:
                    # new_partial.add(run), whose sift-up seldom moves a run: runs come in the
                    # order of their start events, and so do the new runs of each
                    k = len(queue)
                    if k and run.order < queue[(k - 1) >> 1].order:
                        new_partial.add(run)
                    else:
                        queue.append(run)
                    continue
                plans = planned_decision.plans
                if plans is not None and use_plans:
                    # a precompiled decision: its plan does what follows, without loops
                    plan = plans[pathless]
                    if plan is None:
                        plan = plans[pathless] = self._plan(run.state, planned_decision, pathless == 0)
                    plan(run, handle, buffer, state, new_partial, potential)
                    continue
                next_runs = self._compute_next_states(buffer, state, run, handle, planned_decision)
                retain = []
                discard = False
                for new_run in next_runs:
                    kind = kinds[new_run.state]
                    if kind is ALIVE:
                        retain.append(new_run)
                    elif kind is FINAL:
                        potential.add(new_run)
                    else:
                        discard = True
                        buffer.release_node(new_run.previous_entry, new_run.version)
                if discard:
                    for new_run in retain:
                        buffer.release_node(new_run.previous_entry, new_run.version)
                else:
                    for new_run in retain:
                        new_partial.add(new_run)
            result: list[Match] = []
            if skip_strategy is None:
                skip, skips = self.skip_strategy, self._skips
            else:
                skip, skips = skip_strategy, skip_strategy.is_skip_strategy()
            if skips:
                if (
                    potential.queue
                    or state.completed_matches.queue
                    # nothing to emit, but a buffer without paths may not fit the strategy: check
                    or (pathless and (skip is not self.skip_strategy or self._needs_paths))
                ):
                    self._process_matches_by_skip_strategy(
                        buffer, state, skip, potential, new_partial, result
                    )
            elif potential.queue:
                for match in potential:
                    result.append(own_match(buffer, match))
                    if not pathless:  # (a PathlessBuffer holds no locks)
                        buffer.release_node(match.previous_entry, match.version)
            return result
        finally:
            # the event's own lock, taken when a run first stored it
            if handle.event_id is not None and buffer.keeps_paths:
                buffer.release_event(handle.event_id)

    def _bind(self, state: NFAState) -> None:
        """Give every run of ``state`` known by its state's name that state's decision slot
        (``process`` reads a run's slot without asking; restored runs and runs given to
        ``NFAState`` have names)."""
        slots = self._slots
        for run in state.runs():
            if run.slot.__class__ is str:
                run.slot = slots[run.slot]
        state.unbound = False

    def _plan(self, name: str, decision: Decision, keeps_paths: bool) -> Plan:
        """``decision``'s plan for runs in state ``name`` (see ``flowcep.nfa.plans``)."""
        return compile_plan(decision, name, self.states[name].is_start, self._kinds, keeps_paths, self._slots)

    def _decide(
        self,
        buffer: SharedBuffer,
        run: ComputationState,
        handle: EventHandle,
        current: CompiledState,
        final_cache: dict[str, Any] | None,
    ) -> Decision:
        """Flink's ``createDecisionGraph`` plus, per TAKE edge, ``findFinalStateAfterProceed``:
        the ``Decision`` for ``run`` in ``current``, without plans (``_compute_next_states``
        applies it; the decision tables' decisions carry their plans, see ``flowcep.nfa.plans``).
        """
        event = handle.event
        ctx = (
            self.condition_context(buffer, run, handle.timestamp)
            if self._needs_context[current.name]
            else None
        )
        edges: list[Transition] = []
        takes = 0
        ignores = 0
        stack = [current]
        states = self.states
        current_name = current.name
        budget = self._proceed_budget
        while stack:
            st = stack.pop()
            budget -= 1
            if budget < 0:
                _raise_proceed_loop(current_name, event)
            for transition in st.transitions:
                evaluator = transition.evaluator
                if evaluator is not None:
                    try:
                        ok = evaluator(event, ctx) if transition.iterative else evaluator(event)
                    except Exception as exc:
                        raise ConditionError(transition.page, event, exc) from exc
                    if not ok:
                        continue
                action = transition.action
                if action == PROCEED_CODE:
                    stack.append(states[transition.target])
                else:
                    if not (action == IGNORE_CODE and transition.target == current_name):
                        if action == IGNORE_CODE:
                            ignores += 1
                        else:
                            takes += 1
                    edges.append(transition)
        finals: list[str | None] | None = None
        if takes:
            finals = []
            needs_context = self._needs_context
            for edge in edges:
                if edge.action != TAKE_CODE:
                    finals.append(None)
                    continue
                target = edge.target
                cacheable = final_cache is not None and not needs_context[target]
                key = "\0final:" + target
                if cacheable and key in final_cache:  # type: ignore[operator]
                    finals.append(final_cache[key])  # type: ignore[index]
                    continue
                if ctx is None and needs_context[target]:
                    ctx = self.condition_context(buffer, run, handle.timestamp)
                final = self._find_final_state_after_proceed(ctx, target, event)
                if cacheable:
                    final_cache[key] = final  # type: ignore[index]
                finals.append(final)
        return Decision(edges, takes, ignores, finals, unchanged(current, edges), None)

    def _compute_next_states(
        self,
        buffer: SharedBuffer,
        state: NFAState,
        run: ComputationState,
        handle: EventHandle,
        decision: Decision,
    ) -> list[ComputationState]:
        """Flink's ``computeNextStates`` on a decision made beforehand (no conditions here).

        Every new run locks the node it points at; the old run's hold is released at the end.
        """
        edges, total_takes, total_ignores = decision.edges, decision.takes, decision.ignores
        finals = decision.finals or []  # (None only without TAKE edges)
        is_start = self.states[run.state].is_start
        take_branches_to_visit = total_take_to_skip = total_takes - 1 if total_takes else 0
        ignore_branches_to_visit = total_ignores
        result: list[ComputationState] = []
        version = run.version
        current_name = run.state
        previous_entry = run.previous_entry
        timestamp = handle.timestamp
        lock_node = buffer.lock_node
        slots = self._slots  # each new run gets its state's slot (process reads it)
        handed_over = False
        for i, edge in enumerate(edges):
            target = edge.target
            if edge.action == IGNORE_CODE:
                if is_start:
                    continue
                if target == current_name:  # Flink's isEquivalentState: same state name
                    new_version = increase(version, self_state(total_ignores, total_takes))
                else:
                    new_version = increase(version, total_take_to_skip + ignore_branches_to_visit) + (0,)
                    ignore_branches_to_visit -= 1
                new_run = ComputationState(target, previous_entry, new_version, run.start_event_id)
                new_run.slot = slots[target]
                result.append(new_run)
                if previous_entry is not None:
                    lock_node(previous_entry, new_version)
                new_run.match = run.match  # ignoring changes no partial match
            else:  # TAKE
                # the last TAKE stores the event under the run's own version: the run's lock on
                # its node passes to the new edge (Flink locks for the edge and releases the
                # run's lock at the end; the two cancel out)
                hand_over = take_branches_to_visit == 0 and previous_entry is not None
                current_version = increase(version, take_branches_to_visit)
                next_version = current_version + (0,)
                take_branches_to_visit -= 1
                event_id = handle.event_id
                if event_id is None:
                    event_id = handle.event_id = buffer.register_event(handle.event, timestamp)
                # stage=True: the node is locked for the new run (next_version) as it is stored
                new_entry = buffer.put(
                    edge.page, event_id, previous_entry, current_version, not hand_over, True
                )
                handed_over = handed_over or hand_over
                if is_start:
                    start_event_id: EventId | None = event_id
                    if timestamp > 0:
                        state.new_start_partial_match = True
                else:
                    start_event_id = run.start_event_id
                new_run = ComputationState(target, new_entry, next_version, start_event_id)
                new_run.slot = slots[target]
                result.append(new_run)
                # the partial match of the new run, lazily (see flowcep.nfa.context.current_match)
                if run.match is not None:
                    new_run.match = (run.match, edge.page, handle.event)
                elif previous_entry is None:
                    new_run.match = (NO_EVENTS, edge.page, handle.event)
                final = finals[i]
                if final is not None:
                    final_run = ComputationState(final, new_entry, next_version, start_event_id)
                    final_run.slot = slots[final]
                    final_run.match = new_run.match
                    result.append(final_run)
                    lock_node(new_entry, next_version)
        if is_start:
            start_version = increase(version, self_state(total_ignores, total_takes))
            start_run = ComputationState.start(current_name, start_version)
            start_run.slot = slots[current_name]
            result.append(start_run)
        if previous_entry is not None and not handed_over:
            buffer.release_node(previous_entry, version)
        return result

    def _find_final_state_after_proceed(self, ctx: Any, state_name: str, event: Any) -> str | None:
        states = self.states
        stack = [states[state_name]]
        budget = self._proceed_budget
        while stack:
            st = stack.pop()
            budget -= 1
            if budget < 0:
                _raise_proceed_loop(state_name, event)
            for transition in st.transitions:
                if transition.action != PROCEED_CODE:
                    continue
                evaluator = transition.evaluator
                if evaluator is not None:
                    try:
                        ok = evaluator(event, ctx) if transition.iterative else evaluator(event)
                    except Exception as exc:
                        raise ConditionError(transition.page, event, exc) from exc
                    if not ok:
                        continue
                target = states[transition.target]
                if target.is_final:
                    return target.name
                stack.append(target)
        return None

    # -- time ---------------------------------------------------------------
    def advance_time(
        self,
        buffer: SharedBuffer,
        state: NFAState,
        timestamp: int,
        skip_strategy: Any = None,
    ) -> tuple[list[Match], list[tuple[Match, int]]]:
        """Time out runs older than their windows; emit matches this frees."""
        if (
            self._window_only
            and not state.completed_matches.queue
            and not state.unbound
            and self.prefix_timeouts_enabled
        ):
            only_timed_out = self._window_timeouts(buffer, state, timestamp)
            if only_timed_out is not None:
                buffer.advance_time(timestamp)
                return [], only_timed_out
        skip = skip_strategy or self.skip_strategy
        result: list[Match] = []
        timed_out: list[tuple[Match, int]] = []
        window_time = self.window_time
        window_times = self.window_times
        if not state.completed_matches.queue or self.holds_back(state, skip):
            # common case: nothing times out, the queue stays as it is, and nothing is held back
            # or what is waits for a partial match that stays
            for run in state.queue:
                order = run.order
                if order is NO_START:
                    continue
                if window_time > 0 and timestamp - order[0] >= window_time:
                    break
                if window_times:
                    w = window_times.get(run.state)
                    if w is not None and w > 0 and timestamp - run.previous_timestamp >= w:
                        break
            else:
                buffer.advance_time(timestamp)
                return result, timed_out
        # as in process: the state collects the runs that stay, a scratch queue the completed ones
        runs = state.queue
        new_partial = state
        potential = self._potential
        potential.queue = []
        timed = -1  # how many runs can time out, known when the runs are in start order
        if not window_times and window_time > 0 and self.prefix_timeouts_enabled and runs:
            limit = timestamp - window_time
            timed = 0
            previous = runs[0].order
            for run in runs:
                order = run.order
                if order < previous:
                    timed = -1
                    break
                if order[0] <= limit:
                    timed += 1
                previous = order
        if timed >= 0:
            # the runs are in the order of their start events, as a key's events in time order
            # leave them: only runs before the first that started after timestamp - window_time
            # time out, and the runs that stay keep their places (re-adding them in this order
            # to a Java queue, as Flink does, moves none of them)
            runs[:timed] = self._time_out(buffer, runs[:timed], timestamp, potential, timed_out)
        else:
            state.queue = []
            for run in self._time_out(buffer, runs, timestamp, potential, timed_out):
                new_partial.add(run)
        if potential.queue or state.completed_matches.queue:
            self._process_matches_by_skip_strategy(buffer, state, skip, potential, new_partial, result)
        buffer.advance_time(timestamp)
        return result, timed_out

    def _window_timeouts(
        self, buffer: SharedBuffer, state: NFAState, timestamp: int
    ) -> list[tuple[Match, int]] | None:
        """``advance_time`` of a key whose runs only the pattern's window times out, that holds
        no match back and whose runs have their slots, when its runs are in the order of their
        start events (as a key's events in time order leave them): the runs that started by
        ``timestamp - window_time`` are then a prefix of the queue, which leaves it, and the runs
        after it keep their places (re-adding them in this order to a Java queue, as Flink does,
        moves none of them). Returns their timed-out partial matches, in queue order; None, with
        nothing done, when the runs are out of that order or a run that times out is in a state
        whose runs do not (a pending state: ``advance_time``'s general way)."""
        runs = state.queue
        if not runs:
            return []
        window_time = self.window_time
        limit = timestamp - window_time
        if limit >= NO_START[0]:
            return None  # (start runs would seem to start by then)
        report = self.handle_timeout
        timed_out: list[tuple[Match, int]] = []
        previous = runs[0].order
        timed = 0
        timing = True  # still in the prefix that times out
        for run in runs:
            order = run.order
            if order < previous:
                return None  # (then a run after one that stays may time out)
            previous = order
            if timing:
                if order[0] <= limit:
                    if not run.slot.expires:
                        return None
                    timed += 1
                    continue
                timing = False
        if timed:
            # the partial matches are built after the walk, not in it: PyPy runs the walk slower
            # with the calls inside (docs/runtime.md §8)
            expired = runs[:timed]
            del runs[:timed]
            if report:
                for run in expired:
                    timed_out.append((own_match(buffer, run), run.order[0] + window_time))
            if buffer.keeps_paths:
                for run in expired:
                    buffer.release_node(run.previous_entry, run.version)
        return timed_out

    def _time_out(
        self,
        buffer: SharedBuffer,
        runs: list[ComputationState],
        timestamp: int,
        potential: JavaPriorityQueue,
        timed_out: list[tuple[Match, int]],
    ) -> list[ComputationState]:
        """``advance_time`` for ``runs``: the runs that stay partial, in order. The others time
        out (their partial matches to ``timed_out`` when the NFA reports timeouts), or, in a
        pending state, go to ``potential``, the completed matches."""
        window_time = self.window_time
        window_times = self.window_times
        states = self.states
        keeps_paths = buffer.keeps_paths
        kept = []
        for run in runs:
            # the run's fields read directly (its properties are calls, which CPython pays for)
            order = run.order
            if order is NO_START:
                kept.append(run)
                continue
            slot = run.slot
            compiled = states[slot] if slot.__class__ is str else slot.state
            if compiled.is_start:
                kept.append(run)
                continue
            w = window_times.get(compiled.name)
            by_previous = w is not None and w > 0 and timestamp - run.previous_entry[0][0] >= w
            by_first = window_time > 0 and timestamp - order[0] >= window_time
            if by_previous or by_first:
                if compiled.is_pending:
                    potential.add(run)
                    continue
                if self.handle_timeout:
                    partial = own_match(buffer, run)
                    at = (
                        run.previous_entry[0][0] + w
                        if by_previous and w is not None
                        else order[0] + window_time
                    )
                    timed_out.append((partial, at))
                if keeps_paths:
                    buffer.release_node(run.previous_entry, run.version)
            else:
                kept.append(run)
        return kept

    # -- partial matches carried by runs ------------------------------------
    def run_matches(self, buffer: SharedBuffer, state: NFAState) -> list[Match]:
        """Each run's partial match, partial runs in queue order, then held-back ones, in lists
        of their own: what a snapshot keeps of a key whose buffer keeps no paths."""
        return [own_match(buffer, run) for run in state.runs()]

    def restore_run_matches(self, state: NFAState, matches: list[Match]) -> None:
        """Give restored runs back the partial matches ``run_matches`` took from them."""
        runs = state.runs()
        if len(runs) != len(matches):
            raise ValueError(f"{len(matches)} partial matches for {len(runs)} runs")
        for run, match in zip(runs, matches):  # lengths checked above
            if run.previous_entry is not None:
                run.match = match

    def held_entries(self, buffer: SharedBuffer, state: NFAState) -> int:
        """The shared-buffer nodes a key holds: its buffer's, or, for a buffer that keeps no
        paths, the distinct (event, step) pairs of its runs' partial matches."""
        if buffer.keeps_paths:
            return buffer.entry_count()
        seen: set[int] = set()  # chain links and match dicts already walked
        nodes: set[tuple[int, str]] = set()
        for run in state.runs():
            match = run.match
            while type(match) is tuple and id(match) not in seen:
                seen.add(id(match))
                parent, page, event = match  # a TAKE's link: (parent match, page, event)
                nodes.add((id(event), page))
                match = parent
            if type(match) is dict and id(match) not in seen:
                seen.add(id(match))
                nodes.update((id(event), page) for page, events in match.items() for event in events)
        return len(nodes)

    # -- skip strategies ----------------------------------------------------
    def holds_back(self, state: NFAState, skip_strategy: Any = None) -> bool:
        """Whether the key holds completed matches back and the earliest must still wait: a
        skip strategy holds it while an earlier partial match may prune it. Until that partial
        match leaves (it times out or an event moves it on), ``advance_time`` frees nothing."""
        completed = state.completed_matches.queue
        if not completed:
            return False
        skip = skip_strategy or self.skip_strategy
        partial = state.queue
        return bool(skip.is_skip_strategy() and partial and partial[0].order < completed[0].order)

    def _process_matches_by_skip_strategy(
        self,
        buffer: SharedBuffer,
        state: NFAState,
        skip: Any,
        potential: JavaPriorityQueue,
        partial: JavaPriorityQueue,
        result: list[Match],
    ) -> None:
        completed = state.completed_matches
        if potential.queue:
            if completed is NO_COMPLETED_MATCHES:
                completed = state.completed_matches = JavaPriorityQueue()
            completed.add_all(potential)
        earliest = completed.peek()
        prunes = skip.is_skip_strategy()  # no_skip prunes nothing: nothing to wait for
        by_paths = buffer.keeps_paths
        if (
            prunes
            and not by_paths
            and (self._needs_paths if skip is self.skip_strategy else self.needs_paths(skip))
        ):
            raise ValueError(
                f"{skip!r} prunes by the paths of matches, which this shared buffer does not keep"
            )
        while earliest is not None:
            earliest_partial = partial.peek()
            if prunes and earliest_partial is not None and earliest_partial.order < earliest.order:
                break  # an earlier partial match may still prune this one: wait
            completed.poll()
            pruning_id: EventId | None = None
            if by_paths and prunes:
                paths = buffer.extract_patterns(earliest.previous_entry, earliest.version)
                pruning_id = skip.get_pruning_id(paths)
                match = buffer.materialize_match(paths[0])
            else:
                if prunes:
                    # skip_past_last_event: the largest event of every path is the first node's,
                    # the event the run took last (a key's events are numbered as it takes them)
                    last = earliest.previous_entry
                    pruning_id = None if last is None else last[0]
                # the first path, which the run carries (as in process without a skip strategy)
                match = own_match(buffer, earliest)
            self._prune(buffer, skip, partial, pruning_id)
            self._prune(buffer, skip, completed, pruning_id)
            result.append(match)
            buffer.release_node(earliest.previous_entry, earliest.version)
            earliest = completed.peek()
        if earliest is None and completed is not NO_COMPLETED_MATCHES:
            state.completed_matches = NO_COMPLETED_MATCHES

    def needs_paths(self, skip_strategy: Any = None) -> bool:
        """Whether the keys' shared buffers must record the paths of partial matches: only for
        skip strategies that prune by them. Without one nothing reads them (runs carry their
        partial matches), and ``skip_past_last_event`` prunes by a match's last event, the node
        its run points at; a ``PathlessBuffer`` then does."""
        skip = skip_strategy or self.skip_strategy
        return bool(skip.is_skip_strategy()) and not isinstance(skip, SkipPastLastStrategy)

    @staticmethod
    def _prune(buffer: SharedBuffer, skip: Any, runs: JavaPriorityQueue, pruning_id: EventId | None) -> None:
        if pruning_id is None:
            return
        should_prune = skip.should_prune

        def prune(run: ComputationState) -> bool:
            order = run.order
            return order is not NO_START and bool(should_prune(order, pruning_id))

        for run in list(runs):
            if prune(run):
                buffer.release_node(run.previous_entry, run.version)
        runs.remove_if(prune)


def head_deadline(window_time: int) -> Callable[[NFAState], int | None]:
    """``NFA.next_deadline`` for an NFA whose only window is the pattern's, ``window_time`` > 0:
    the queue's head has the earliest start (runs are ordered by their start event, whose
    timestamp is the run's start timestamp)."""

    def next_deadline(state: NFAState) -> int | None:
        runs = state.queue
        if runs:
            order = runs[0].order
            if order is not NO_START:
                return order[0] + window_time  # type: ignore[no-any-return]
        return None

    return next_deadline


def _raise_proceed_loop(state_name: str, event: Any) -> None:
    raise FlinkRuntimeException(
        f"The pattern loops through PROCEED edges without taking an event (from state {state_name!r}, "
        f"event {event!r}): a looping group needs a step that is not optional."
    )
