"""The NFA: runs events through compiled states (Flink's ``NFA``).

``process`` feeds one event to every run of one key; ``advance_time`` times
runs out and releases matches held back by notFollowedBy or a skip strategy.
The control flow and the Dewey version arithmetic follow Flink 2.3 exactly;
the speed comes from precompiled transitions and from a fast path for runs
that only ignore the event (they survive unchanged, with no buffer work).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.nfa.codegen import generated
from flowcep.nfa.computation_state import NO_COMPLETED_MATCHES, NO_START, ComputationState, NFAState
from flowcep.nfa.conditions import And, Atom, Not, TrueCond, compile_condition
from flowcep.nfa.heap import JavaPriorityQueue
from flowcep.nfa.names import original_name
from flowcep.nfa.plans import _ALIVE, _FINAL, _IGNORE, _STOP, _TAKE, NO_EVENTS, compile_plan, self_state
from flowcep.nfa.state import IGNORE, PROCEED, TAKE, State, StateType
from flowcep.pattern.aftermatch import SkipPastLastStrategy
from flowcep.pattern.exceptions import ConditionError, FlinkRuntimeException
from flowcep.sharedbuffer.dewey import increase
from flowcep.sharedbuffer.sharedbuffer import EventId, SharedBuffer

Match = dict[str, list[Any]]

_PROCEED = 2
_ACTION_CODE = {TAKE: _TAKE, IGNORE: _IGNORE, PROCEED: _PROCEED}


class CompiledState:
    """A state ready for the hot path: transitions as plain tuples."""

    __slots__ = (
        "name",
        "is_start",
        "is_final",
        "is_stop",
        "is_pending",
        "transitions",
        "iterative",
        "state",
    )

    def __init__(self, state: State) -> None:
        self.state = state
        self.name = state.name
        self.is_start = state.state_type is StateType.Start
        self.is_final = state.state_type is StateType.Final
        self.is_stop = state.state_type is StateType.Stop
        self.is_pending = state.state_type is StateType.Pending
        # (action code, evaluator or None, target name, source name, source page, evaluator
        # takes the context)
        self.transitions: tuple[tuple[Any, ...], ...] = ()
        self.iterative = False


class _DecisionSlot:
    """How ``NFA.process`` decides for the runs in one state: by its generated ``table``
    (``decide(event)``, or ``decide(event, ctx)`` when the decision reads the run's partial match,
    ``per_run``) or, without one, by searching; a decision shared by the state's runs is kept for
    the call that made it (the call's ``epoch``)."""

    __slots__ = ("state", "table", "per_run", "epoch", "decision")

    def __init__(self, state: CompiledState, table: Any, per_run: bool) -> None:
        self.state = state
        self.table = table
        self.per_run = per_run
        self.epoch = 0  # no call yet
        self.decision: Any = None


class ConditionContext:
    """What an iterative condition sees: the run's events so far, lazily."""

    __slots__ = ("_buffer", "_run", "_timestamp", "_matched")

    def __init__(self, buffer: SharedBuffer, run: ComputationState, timestamp: int) -> None:
        self._buffer = buffer
        self._run = run
        self._timestamp = timestamp
        self._matched: Match | None = None

    def get_events_for_pattern(self, name: str) -> list[Any]:
        if name is None:
            raise TypeError("The pattern name cannot be null.")
        matched = self._matched
        if matched is None:
            matched = self._matched = _current_match(self._buffer, self._run)
        return list(matched.get(name, ()))

    def timestamp(self) -> int:
        return self._timestamp

    def current_processing_time(self) -> int:
        import time

        return int(time.time() * 1000)

    getEventsForPattern = get_events_for_pattern
    currentProcessingTime = current_processing_time


def _current_match(buffer: SharedBuffer, run: ComputationState) -> Match:
    """The run's events by step (Flink's ``extractCurrentMatches``), cached on the run.

    A run's partial match never changes. A run made from another one by IGNORE has the same
    partial match, by TAKE that one plus the event: the NFA hands these over as a chain
    ``(parent match, page, event)`` (see ``_compute_next_states``), one small tuple per TAKE,
    so that neither conditions of long runs nor emitted matches walk the shared buffer back
    to the start. A run restored from a snapshot of a full buffer has no chain (``None``): its
    match is extracted from the buffer, which gives the same path. (A key with a
    ``PathlessBuffer`` gets its runs' matches back from the snapshot, as dicts.)
    """
    match = run.match
    if type(match) is dict:
        return match
    if match is None:
        if run.previous_entry is None:
            match = {}
        else:
            paths = buffer.extract_patterns(run.previous_entry, run.version)
            match = buffer.materialize_match(paths[0]) if paths else {}
    else:
        taken = []
        while type(match) is tuple:
            taken.append(match)
            match = match[0]
        # (most chains start at a start run's empty match: no copy to make)
        match = {page: list(events) for page, events in match.items()} if match else {}
        for _, page, event in reversed(taken):
            events = match.get(page)
            if events is None:
                match[page] = [event]
            else:
                events.append(event)
    run.match = match
    return match


def _own_match(buffer: SharedBuffer, run: ComputationState) -> Match:
    """The partial match of a run that leaves (emitted or timed out), in lists of its own."""
    match = run.match
    if type(match) is dict:
        # built before, maybe handed to other runs by IGNORE: copy
        return {page: list(events) for page, events in match.items()}
    # built now, from the chain or by extraction, for this run alone
    return _current_match(buffer, run)


def _unchanged(state: CompiledState, edges: Any) -> bool:
    """Whether a run in ``state`` survives a decision with ``edges`` as it is: it only ignores
    the event on its own state, or it is a start run that nothing starts."""
    return (not edges and state.is_start) or (len(edges) == 1 and edges[0][0] == _IGNORE and edges[0][2] == state.name)


class _EventHandle:
    """The event being processed; registered in the buffer on its first TAKE."""

    __slots__ = ("event", "timestamp", "event_id")

    def __init__(self, event: Any, timestamp: int) -> None:
        self.event = event
        self.timestamp = timestamp
        self.event_id: EventId | None = None


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
        self.states: dict[str, CompiledState] = {}
        for state in states:
            self.states[state.name] = CompiledState(state)
        for compiled in self.states.values():
            transitions = []
            iterative = False
            for t in compiled.state.transitions:
                target = self.states[t.target.name]
                action = _ACTION_CODE[t.action]
                evaluator, takes_context = compile_condition(t.condition)
                iterative = iterative or takes_context
                transitions.append(
                    (action, evaluator, target.name, t.source.name, original_name(t.source.name), takes_context)
                )
            compiled.transitions = tuple(transitions)
            compiled.iterative = iterative
        # whether a decision from a state can evaluate an iterative condition (through PROCEED edges)
        self._needs_context: dict[str, bool] = {name: self._reaches_iterative(name) for name in self.states}
        self._start_names = [s.name for s in self.states.values() if s.is_start]
        # starts_nothing() can judge an event without a run only if no start decision reads one
        self._simple_start = not any(self._needs_context[name] for name in self._start_names)
        # A looping group whose steps can all be skipped has a cycle of PROCEED edges; when its
        # conditions hold, Flink's depth-first search never ends.  flowcep stops and says so.
        self._proceed_budget = 1000 * (len(self.states) + 1)
        # False: every decision goes through _compute_next_states, the reference that the
        # decisions' generated plans (flowcep.nfa.plans) are tested against
        self.plans_enabled = True
        # the completed runs of one process call (a scratch queue, emptied by each call)
        self._potential = JavaPriorityQueue()
        self._handle = _EventHandle(None, 0)  # process's event handle when no condition needed one
        self._skips = bool(skip_strategy.is_skip_strategy())
        self._needs_paths = self.needs_paths()
        # what a new run's state means for it: it lives on, it has matched, or it must stop
        self._kinds = {
            name: _FINAL if st.is_final else _STOP if st.is_stop else _ALIVE for name, st in self.states.items()
        }
        # each state's decision table (see _decision_table): decide(event), or decide(event, ctx)
        # for a state whose decision reads the run's partial match; process() keeps a shared
        # decision in the slot for the call that made it (``_epoch`` counts calls)
        self._slots = {
            name: _DecisionSlot(compiled, self._decision_table(compiled), self._needs_context[name])
            for name, compiled in self.states.items()
        }
        self._epoch = 0
        # what starts_nothing() asks (only when no start decision reads a partial match): each
        # start state with its decision table (None: search)
        self._start_tables = [(name, self._slots[name].table) for name in self._start_names]
        # starts_nothing for the usual pattern, one start state with a table: the table alone
        # (with many keys most events meet a key without runs, so this call is on the hot path)
        self.starts_nothing: Callable[[Any], bool] = self._starts_nothing
        if self._simple_start and len(self._start_tables) == 1 and self._start_tables[0][1] is not None:
            self.starts_nothing = _table_starts_nothing(self._start_tables[0][1])

    def _decision_table(self, state: CompiledState) -> Any:
        """The state's decision as a generated function, or None (decide by searching).

        A decision depends only on which conditions hold. The depth-first search of ``_decide``
        (with the PROCEED searches for final states after each TAKE) is unrolled here, once:
        every condition it may evaluate becomes an ``if`` of a generated function, in the order
        Flink evaluates them, and every way through ends in a decision made now. Per event the
        hot path runs the function instead of the search. For a state whose conditions read no
        partial match the function is ``decide(event)`` and its decision holds for every run in
        the state; otherwise it is ``decide(event, ctx)``, called per run with the run's context.
        Searches that branch too much or loop (PROCEED cycles) are left to ``_decide``.
        """
        with_context = self._needs_context[state.name]
        unrolled = _Unrolled(self.states, state, with_context)
        try:
            unrolled.search(2, (), state, 0, (), {})
        except _TooBig:
            return None
        if not unrolled.evaluators:
            decision = unrolled.decisions[0]
            return (lambda event, ctx: decision) if with_context else (lambda event: decision)
        names: dict[str, Any] = {
            "decisions": tuple(unrolled.decisions),
            "pages": tuple(unrolled.pages),
            "ConditionError": ConditionError,
        }
        for k, evaluator in enumerate(unrolled.evaluators):
            names[f"f{k}"] = evaluator
        code = "\n".join(
            [
                "def decide(event, ctx):" if with_context else "def decide(event):",
                "    i = 0",
                "    try:",
                *unrolled.lines,
                "    except Exception as exc:",
                "        raise ConditionError(pages[i], event, exc) from exc",
            ]
        )
        # generated from the compiled states, no user text; shared by equal patterns' NFAs
        return generated(code, "decide", names)

    def _proceed_closure(self, name: str) -> list[CompiledState]:
        """``name``'s state and every state reachable from it through PROCEED edges."""
        seen: dict[str, CompiledState] = {}
        stack = [name]
        while stack:
            current = self.states[stack.pop()]
            if current.name in seen:
                continue
            seen[current.name] = current
            stack.extend(target for action, _, target, _, _, _ in current.transitions if action == _PROCEED)
        return list(seen.values())

    def _reaches_iterative(self, name: str) -> bool:
        """Whether deciding for a run in state ``name`` can call an iterative condition: on any
        edge of a state the decision graph reaches through PROCEED edges, or on a PROCEED edge of
        the search for a final state after one of their TAKE edges (Flink's
        ``findFinalStateAfterProceed``, which evaluates with the run's context too). Such a
        decision is made per run, never shared by the runs of a state."""
        for current in self._proceed_closure(name):
            if current.iterative:
                return True
            for action, _, target, _, _, _ in current.transitions:
                if action == _TAKE and any(
                    t[0] == _PROCEED and t[5] for st in self._proceed_closure(target) for t in st.transitions
                ):
                    return True
        return False

    # -- state --------------------------------------------------------------
    def create_initial_state(self) -> NFAState:
        names = self._start_names
        if len(names) == 1:
            # the usual case without a loop (on PyPy a loop of one turn splits the trace; W5
            # makes a key's state for about one event in ten)
            return NFAState.of_start_runs([ComputationState.start(names[0])])
        return NFAState.of_start_runs([ComputationState.start(name) for name in names])

    def next_deadline(self, state: NFAState) -> int | None:
        """The earliest time at which ``advance_time`` would time out a run."""
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
                    edges = table(event)[0]
                else:
                    handle = _EventHandle(event, 0)
                    edges = self._decide(None, None, handle, self.states[name], None)[0]  # type: ignore[arg-type]
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
        handle: _EventHandle | None = None
        # Phase 1 evaluates every condition before anything changes, so that a condition that
        # raises leaves the key's runs and buffer untouched.  Reading first and writing second
        # gives Flink's results: a run's conditions only read its own, unchanged, path.
        # Decisions of states whose conditions are all simple depend only on the event: each
        # state's slot keeps its decision for the call that made it (its epoch; no dict per call,
        # one lookup per run); the states whose decisions are made per run say so in their slot.
        slots = self._slots
        epoch = self._epoch = self._epoch + 1
        final_cache: dict[str, Any] | None = None  # _decide's finals, per call
        runs = state.queue
        # from the first run that changes on (runs[first]): each run and its decision, None
        # when the run survives unchanged (same version, same entry: Flink's lock + release of
        # the entry cancel out). One list, and no enumerate or zip: under PyPy a loop of a few
        # turns is entered from the caller's trace, which allocates each iterator it uses.
        changes: list[Any] | None = None
        first = 0
        decision: Any
        for run in runs:
            slot = run.slot
            if slot.__class__ is str:  # a run made by name (a start run, by the search, restored)
                slot = run.slot = slots[slot]
            if slot.epoch == epoch:
                decision = slot.decision
            elif slot.per_run:
                table = slot.table
                if table is not None:
                    decision = table(event, ConditionContext(buffer, run, timestamp))
                else:
                    handle = handle or _EventHandle(event, timestamp)
                    decision = self._decide(buffer, run, handle, slot.state, None)
            else:
                table = slot.table
                if table is not None:
                    decision = table(event)
                else:
                    handle = handle or _EventHandle(event, timestamp)
                    if final_cache is None:
                        final_cache = {}
                    decision = self._decide(buffer, run, handle, slot.state, final_cache)
                slot.decision = decision
                slot.epoch = epoch
            if changes is None:
                if decision[4]:
                    first += 1
                    continue
                changes = [run, decision]
            else:
                changes.append(run)
                changes.append(None if decision[4] else decision)
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
            items = iter(changes)
            for run in items:
                planned_decision = next(items)
                if planned_decision is None:
                    new_partial.add(run)
                    continue
                plans = planned_decision[5]
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
                    if kind is _ALIVE:
                        retain.append(new_run)
                    elif kind is _FINAL:
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
                    self._process_matches_by_skip_strategy(buffer, state, skip, potential, new_partial, result)
            elif potential.queue:
                for match in potential:
                    result.append(_own_match(buffer, match))
                    if not pathless:  # (a PathlessBuffer holds no locks)
                        buffer.release_node(match.previous_entry, match.version)
            return result
        finally:
            # the event's own lock, taken when a run first stored it
            if handle.event_id is not None and buffer.keeps_paths:
                buffer.release_event(handle.event_id)

    def _plan(self, name: str, decision: tuple[Any, ...], keeps_paths: bool) -> Any:
        """``decision``'s plan for runs in state ``name`` (see ``flowcep.nfa.plans``)."""
        return compile_plan(decision, name, self.states[name].is_start, self._kinds, keeps_paths, self._slots)

    def _decide(
        self,
        buffer: SharedBuffer,
        run: ComputationState,
        handle: _EventHandle,
        current: CompiledState,
        final_cache: dict[str, Any] | None,
    ) -> tuple[Any, ...]:
        """Flink's ``createDecisionGraph`` plus, per TAKE edge, ``findFinalStateAfterProceed``.

        Returns ``(edges, take branches, non-self ignore branches, finals, unchanged, plans)``
        where ``finals[i]`` is the final state reached by PROCEED after taking edge ``i``,
        ``unchanged`` says that the run survives as it is (it only ignores the event on its own
        state, or it is a start run that nothing starts) and ``plans`` is None: a decision made
        here is applied by ``_compute_next_states`` (the decision tables' decisions carry their
        plans, see ``flowcep.nfa.plans``).
        """
        event = handle.event
        ctx = ConditionContext(buffer, run, handle.timestamp) if self._needs_context[current.name] else None
        edges: list[tuple[Any, ...]] = []
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
                evaluator = transition[1]
                if evaluator is not None:
                    try:
                        ok = evaluator(event, ctx) if transition[5] else evaluator(event)
                    except Exception as exc:
                        raise ConditionError(transition[4], event, exc) from exc
                    if not ok:
                        continue
                action = transition[0]
                if action == _PROCEED:
                    stack.append(states[transition[2]])
                else:
                    if not (action == _IGNORE and transition[2] == current_name):
                        if action == _IGNORE:
                            ignores += 1
                        else:
                            takes += 1
                    edges.append(transition)
        finals: list[str | None] | None = None
        if takes:
            finals = []
            needs_context = self._needs_context
            for edge in edges:
                if edge[0] != _TAKE:
                    finals.append(None)
                    continue
                target = edge[2]
                cacheable = final_cache is not None and not needs_context[target]
                key = "\0final:" + target
                if cacheable and key in final_cache:  # type: ignore[operator]
                    finals.append(final_cache[key])  # type: ignore[index]
                    continue
                if ctx is None and needs_context[target]:
                    ctx = ConditionContext(buffer, run, handle.timestamp)
                final = self._find_final_state_after_proceed(ctx, target, event)
                if cacheable:
                    final_cache[key] = final  # type: ignore[index]
                finals.append(final)
        return edges, takes, ignores, finals, _unchanged(current, edges), None

    def _compute_next_states(
        self,
        buffer: SharedBuffer,
        state: NFAState,
        run: ComputationState,
        handle: _EventHandle,
        decision: tuple[Any, ...],
    ) -> list[ComputationState]:
        """Flink's ``computeNextStates`` on a decision made beforehand (no conditions here).

        Every new run locks the node it points at; the old run's hold is released at the end.
        """
        edges, total_takes, total_ignores, finals = decision[:4]
        is_start = self.states[run.state].is_start
        take_branches_to_visit = total_take_to_skip = total_takes - 1 if total_takes else 0
        ignore_branches_to_visit = total_ignores
        result: list[ComputationState] = []
        version = run.version
        current_name = run.state
        previous_entry = run.previous_entry
        timestamp = handle.timestamp
        lock_node = buffer.lock_node
        handed_over = False
        for i, edge in enumerate(edges):
            target = edge[2]
            if edge[0] == _IGNORE:
                if is_start:
                    continue
                if target == current_name:  # Flink's isEquivalentState: same state name
                    new_version = increase(version, self_state(total_ignores, total_takes))
                else:
                    new_version = increase(version, total_take_to_skip + ignore_branches_to_visit) + (0,)
                    ignore_branches_to_visit -= 1
                new_run = ComputationState(target, previous_entry, new_version, run.start_event_id)
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
                new_entry = buffer.put(edge[4], event_id, previous_entry, current_version, not hand_over, True)
                handed_over = handed_over or hand_over
                if is_start:
                    start_event_id: EventId | None = event_id
                    if timestamp > 0:
                        state.new_start_partial_match = True
                else:
                    start_event_id = run.start_event_id
                new_run = ComputationState(target, new_entry, next_version, start_event_id)
                result.append(new_run)
                # the partial match of the new run, lazily (see _current_match)
                if run.match is not None:
                    new_run.match = (run.match, edge[4], handle.event)
                elif previous_entry is None:
                    new_run.match = (NO_EVENTS, edge[4], handle.event)
                final = finals[i]
                if final is not None:
                    final_run = ComputationState(final, new_entry, next_version, start_event_id)
                    final_run.match = new_run.match
                    result.append(final_run)
                    lock_node(new_entry, next_version)
        if is_start:
            start_version = increase(version, self_state(total_ignores, total_takes))
            result.append(ComputationState.start(current_name, start_version))
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
                if transition[0] != _PROCEED:
                    continue
                evaluator = transition[1]
                if evaluator is not None:
                    try:
                        ok = evaluator(event, ctx) if transition[5] else evaluator(event)
                    except Exception as exc:
                        raise ConditionError(transition[4], event, exc) from exc
                    if not ok:
                        continue
                target = states[transition[2]]
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
        skip = skip_strategy or self.skip_strategy
        result: list[Match] = []
        timed_out: list[tuple[Match, int]] = []
        window_time = self.window_time
        window_times = self.window_times
        states = self.states
        if not state.completed_matches or self.holds_back(state, skip):
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
        state.queue = []
        potential = self._potential
        potential.queue = []
        for run in runs:
            # the run's fields read directly (its properties are calls, which CPython pays for)
            order = run.order
            if order is NO_START:
                new_partial.add(run)
                continue
            slot = run.slot
            compiled = states[slot] if slot.__class__ is str else slot.state
            if compiled.is_start:
                new_partial.add(run)
                continue
            w = window_times.get(compiled.name)
            by_previous = w is not None and w > 0 and timestamp - run.previous_entry[0][0] >= w
            by_first = window_time > 0 and timestamp - order[0] >= window_time
            if by_previous or by_first:
                if compiled.is_pending:
                    potential.add(run)
                    continue
                if self.handle_timeout:
                    partial = _own_match(buffer, run)
                    at = run.previous_entry[0][0] + w if by_previous and w is not None else order[0] + window_time
                    timed_out.append((partial, at))
                buffer.release_node(run.previous_entry, run.version)
            else:
                new_partial.add(run)
        if potential.queue or state.completed_matches.queue:
            self._process_matches_by_skip_strategy(buffer, state, skip, potential, new_partial, result)
        buffer.advance_time(timestamp)
        return result, timed_out

    # -- partial matches carried by runs ------------------------------------
    def run_matches(self, buffer: SharedBuffer, state: NFAState) -> list[Match]:
        """Each run's partial match, partial runs in queue order, then held-back ones, in lists
        of their own: what a snapshot keeps of a key whose buffer keeps no paths."""
        return [_own_match(buffer, run) for run in state.runs()]

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
                nodes.add((id(match[2]), match[1]))
                match = match[0]
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
        if prunes and not by_paths and (self._needs_paths if skip is self.skip_strategy else self.needs_paths(skip)):
            raise ValueError(f"{skip!r} prunes by the paths of matches, which this shared buffer does not keep")
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
                match = _own_match(buffer, earliest)
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


def _table_starts_nothing(table: Callable[[Any], Any]) -> Callable[[Any], bool]:
    """``NFA._starts_nothing`` for one start state whose decision is ``table(event)``."""

    def starts_nothing(event: Any) -> bool:
        try:
            return not table(event)[0]
        except Exception:
            return False  # the event takes the normal path, where the error surfaces

    return starts_nothing


class _TooBig(Exception):
    """The unrolled search would be too large (or loops): decide by searching instead."""


class _Unrolled:
    """``_decide``'s search for one state, unrolled into the lines of a generated function.

    ``search`` follows the depth-first search of ``_decide``: a transition without a
    condition is applied, one with a condition becomes ``if f<k>(event):`` (an iterative one
    ``if f<k>(event, ctx):``) with the search continued on both sides, unless the branch taken
    so far already tells the condition's value (``_known_value``). Once the search is done, the
    PROCEED search for a final state after each TAKE edge (``_find_final_state_after_proceed``)
    is unrolled the same way; at the end of every branch the decision is made and the line
    returns it.
    """

    MAX_CONDITIONS = 64
    MAX_STEPS = 2000

    def __init__(self, states: dict[str, CompiledState], state: CompiledState, with_context: bool) -> None:
        self.states = states
        self.state = state
        # whether the function gets the run's context (its decision may read the partial match)
        self.with_context = with_context
        self.lines: list[str] = []
        self.evaluators: list[Any] = []
        self.pages: list[str] = []
        self.decisions: list[tuple[Any, ...]] = []
        self.steps = 0

    def _next(
        self, stack: tuple[CompiledState, ...], st: CompiledState | None, k: int
    ) -> tuple[tuple[CompiledState, ...], CompiledState, int, tuple[Any, ...], Any] | None:
        """The search's next transition: ``(stack, state, index after it, transition, its
        condition node)``, None at its end (``st`` None: pop the next state off the stack)."""
        while True:
            self.steps += 1
            if self.steps > self.MAX_STEPS:
                raise _TooBig
            if st is None:
                if not stack:
                    return None
                st, stack, k = stack[-1], stack[:-1], 0
            if k < len(st.transitions):
                # compiled transitions are the state's transitions, one for one, in order
                return stack, st, k + 1, st.transitions[k], st.state.transitions[k].condition
            st = None

    def _condition(self, depth: int, transition: tuple[Any, ...]) -> None:
        if len(self.evaluators) >= self.MAX_CONDITIONS or (transition[5] and not self.with_context):
            # too many branches, or an iterative condition found only after a TAKE (the final
            # search): the state's decision is shared by all its runs, this one is not
            raise _TooBig
        k = len(self.evaluators)
        self.evaluators.append(transition[1])
        self.pages.append(transition[4])
        pad = "    " * depth
        call = f"f{k}(event, ctx)" if transition[5] else f"f{k}(event)"  # iterative: the run's context
        self.lines += [f"{pad}i = {k}", f"{pad}if {call}:"]

    def search(
        self,
        depth: int,
        stack: tuple[CompiledState, ...],
        st: CompiledState | None,
        k: int,
        edges: tuple[Any, ...],
        known: dict[int, bool],
    ) -> None:
        """Continue the search in state ``st`` at transition ``k`` (``st`` None: pop the stack);
        ``known``: the user conditions whose value the branch taken so far tells."""
        while True:
            step = self._next(stack, st, k)
            if step is None:
                self.finals(depth, edges, 0, (), known)
                return
            stack, st, k, transition, cond = step
            if transition[0] == _PROCEED:
                held_stack, held_edges = (*stack, self.states[transition[2]]), edges
            else:
                held_stack, held_edges = stack, (*edges, transition)
            holds = True if transition[1] is None else _known_value(cond, known)
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
        self, depth: int, edges: tuple[Any, ...], j: int, found: tuple[str | None, ...], known: dict[int, bool]
    ) -> None:
        """The final state after PROCEED for each TAKE edge from ``j`` on, then the decision."""
        while j < len(edges) and edges[j][0] != _TAKE:
            found = (*found, None)
            j += 1
        if j == len(edges):
            self.decide(depth, edges, found)
            return
        self.final_search(depth, edges, j, found, (), self.states[edges[j][2]], 0, known)

    def final_search(
        self,
        depth: int,
        edges: tuple[Any, ...],
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
            stack, st, k, transition, cond = step
            if transition[0] != _PROCEED:
                continue
            target = self.states[transition[2]]
            holds = True if transition[1] is None else _known_value(cond, known)
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

    def decide(self, depth: int, edges: tuple[Any, ...], finals: tuple[str | None, ...]) -> None:
        name = self.state.name
        takes = sum(1 for t in edges if t[0] == _TAKE)
        ignores = sum(1 for t in edges if t[0] == _IGNORE and t[2] != name)
        self.lines.append("    " * depth + f"return decisions[{len(self.decisions)}]")
        self.decisions.append(
            # the decision's plans (for a full buffer, for a PathlessBuffer), compiled on first use
            (list(edges), takes, ignores, list(finals) if takes else None, _unchanged(self.state, edges), [None, None])
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


def _raise_proceed_loop(state_name: str, event: Any) -> None:
    raise FlinkRuntimeException(
        f"The pattern loops through PROCEED edges without taking an event (from state {state_name!r}, "
        f"event {event!r}): a looping group needs a step that is not optional."
    )
