"""What a decision does to a run, as generated code (a decision's *plan*).

A decision (``flowcep.nfa.compiled.Decision``, see ``NFA._decide``) is fixed once the conditions are evaluated: its edges, their
targets, the Dewey version increments of Flink's ``computeNextStates`` and where each new run
goes (on as a partial match, to the completed matches, or stopping the others) depend only on
the decision and on whether the run's state is a start state. For the decisions of the
precompiled decision tables, ``compile_plan`` writes that work out once as a function without
loops or lookups: per new run a few attribute stores, with the version arithmetic folded into
constants. ``NFA._compute_next_states`` stays the reference (and does the work for decisions
made by searching); a property test runs both on random patterns and streams.

A plan is ``plan(run, handle, buffer, state, partial, potential)``: it adds the new runs to the
queues ``partial`` and ``potential`` exactly as ``NFA.process`` does with the runs
``_compute_next_states`` returns, with the same shared-buffer calls in the same order (the start
run it would make anew is the start run it had, with the new version). The variant for a
``PathlessBuffer`` leaves out the buffer calls that do nothing there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.nfa.codegen import generated
from flowcep.nfa.compiled import ALIVE, FINAL, IGNORE_CODE, STOP, Decision
from flowcep.nfa.computation_state import ComputationState

Plan = Callable[..., None]

NO_EVENTS: dict[str, list[Any]] = {}  # the partial match of a start run (never changed: readers copy)


def _increased(version: str, times: int) -> str:
    """``increase(version, times)`` (``flowcep.sharedbuffer.dewey``) as an expression (``times`` is known)."""
    if times == 0:
        return version
    return f"{version}[:-1] + ({version}[-1] + {times},)"


def self_state(increase_ignores: int, takes: int) -> int:
    """Flink's ``calculateIncreasingSelfState``."""
    return 0 if takes == 0 and increase_ignores == 0 else increase_ignores + max(1, takes)


# a new run's fields, in the order ``new_run`` takes them
_FIELDS: tuple[str, ...] = ComputationState.__slots__


def compile_plan(
    decision: Decision,
    state_name: str,
    is_start: bool,
    kinds: dict[str, str],
    keeps_paths: bool,
    slots: dict[str, Any],
) -> Plan:
    """The plan of ``decision`` for a run in state ``state_name`` (see the module docstring);
    ``slots`` gives each new run the decision slot of its state (``NFA._slots``)."""
    names: dict[str, Any] = {"new": object.__new__, "CS": ComputationState, "NO_EVENTS": NO_EVENTS}
    slot_vars: dict[str, str] = {}
    body = plan_lines(decision, state_name, is_start, kinds, keeps_paths, slots, names, slot_vars, False)
    lines = [
        "def plan(run, handle, buffer, state, partial, potential):",
        *("    " + line for line in body),
    ]
    # generated from the compiled states; names (the user's step names) enter as repr() literals
    plan: Plan = generated("\n".join(lines), "plan", names)
    return plan


def plan_lines(
    decision: Decision,
    state_name: str,
    is_start: bool,
    kinds: dict[str, str],
    keeps_paths: bool,
    slots: dict[str, Any],
    names: dict[str, Any],
    slot_vars: dict[str, str],
    inline: bool,
) -> list[str]:
    """The body of ``decision``'s plan (``compile_plan``), unindented, reading ``run``,
    ``buffer``, ``state``, ``partial`` and ``potential``, and adding the values it needs to
    ``names`` (``new``, ``CS`` and ``NO_EVENTS`` are there already). ``slot_vars`` names the
    slots bound so far (state name -> variable). ``inline``: the body runs inside a generated
    step (``flowcep.nfa.stepgen``), which has ``event``, ``timestamp`` and the event's id
    ``eid`` (None until registered) as locals instead of a handle."""
    edges, total_takes, total_ignores = decision.edges, decision.takes, decision.ignores
    finals = decision.finals or []  # (None only without TAKE edges)
    lines = ["version = run.version", "previous_entry = run.previous_entry"]
    if total_takes:
        if not inline:
            lines += ["timestamp = handle.timestamp", "event = handle.event"]
        lines.append("match = run.match")
    take_branches_to_visit = total_take_to_skip = total_takes - 1 if total_takes else 0
    ignore_branches_to_visit = total_ignores
    made: list[tuple[str, str]] = []  # (variable, kind) of the new runs, in Flink's order
    registered = False
    hands_over = False  # whether some TAKE edge takes over the run's lock (when it has an entry)

    def new_run(var: str, state: str, *fields: str) -> None:
        """``var``: a new run in ``state`` (its slot) with the other ``fields``."""
        slot_var = slot_vars.get(state)
        if slot_var is None:
            slot_var = slot_vars[state] = f"slot{len(slot_vars)}"
            names[slot_var] = slots[state]
        fields = (slot_var, *fields)
        assert len(fields) == len(_FIELDS)
        lines.append(f"{var} = new(CS)")
        lines.extend(f"{var}.{attr} = {value}" for attr, value in zip(_FIELDS, fields))

    for i, edge in enumerate(edges):
        action, target, page = edge.action, edge.target, repr(edge.page)  # (the page as a str literal)
        var = f"r{i}"
        if action == IGNORE_CODE:
            if is_start:
                continue
            if target == state_name:  # Flink's isEquivalentState: same state name
                version = _increased("version", self_state(total_ignores, total_takes))
            else:
                version = _increased("version", total_take_to_skip + ignore_branches_to_visit) + " + (0,)"
                ignore_branches_to_visit -= 1
            lines.append(f"v{i} = {version}")
            new_run(
                var,
                target,
                "previous_entry",
                f"v{i}",
                "run.order",
                "run.match",  # ignoring changes no partial match
            )
            if keeps_paths:
                lines += [
                    "if previous_entry is not None:",
                    f"    buffer.lock_node(previous_entry, v{i})",
                ]
        else:  # TAKE
            last_take = take_branches_to_visit == 0
            lines.append(f"v{i} = {_increased('version', take_branches_to_visit)}")
            lines.append(f"n{i} = v{i} + (0,)")
            take_branches_to_visit -= 1
            if not registered:
                if inline:
                    assert not keeps_paths, "a generated step keeps no paths"
                    # PathlessBuffer.next_event_id written out
                    lines += [
                        "if eid is None:",
                        "    counts = buffer.events_count",
                        "    seq = counts.get(timestamp, 0)",
                        "    counts[timestamp] = seq + 1",
                        "    eid = (timestamp, seq)",
                        "event_id = eid",
                    ]
                else:
                    lines.append("event_id = handle.event_id")
                    lines.append("if event_id is None:")
                    if keeps_paths:
                        lines.append(
                            "    event_id = handle.event_id = buffer.register_event(event, timestamp)"
                        )
                    else:
                        # what PathlessBuffer.register_event does, without the call in between
                        lines.append("    event_id = handle.event_id = buffer.next_event_id(timestamp)")
                registered = True
            if keeps_paths:
                # the last TAKE stores the event under the run's own version: the run's lock on
                # its node passes to the new edge (see NFA._compute_next_states)
                lock_previous = "previous_entry is None" if last_take else "True"
                lines.append(
                    f"e{i} = buffer.put({page}, event_id, previous_entry, v{i}, {lock_previous}, True)"
                )
            else:
                lines.append(f"e{i} = (event_id, {page})")
            hands_over = hands_over or last_take
            if is_start:
                order = "event_id"
                lines += ["if timestamp > 0:", "    state.new_start_partial_match = True"]
            else:
                order = "run.order"
            lines += [
                "if match is not None:",
                f"    m{i} = (match, {page}, event)",
                "elif previous_entry is None:",
                f"    m{i} = (NO_EVENTS, {page}, event)",
                "else:",
                f"    m{i} = None",
            ]
            new_run(var, target, f"e{i}", f"n{i}", order, f"m{i}")
            final = finals[i]
            if final is not None:
                made.append((var, kinds[target]))
                var = f"q{i}"
                new_run(var, final, f"e{i}", f"n{i}", order, f"m{i}")
                if keeps_paths:
                    lines.append(f"buffer.lock_node(e{i}, n{i})")
                made.append((var, kinds[final]))
                continue
        made.append((var, kinds[target]))
    if is_start:
        # Flink makes a new start run with the next version. A run in a start state is always a
        # start run without events (only the start state's own IGNORE loop leads back to it, and
        # start runs skip it: test_no_edge_but_its_ignore_loop_reaches_a_start_state), and the
        # key's queue is its only holder: it takes the version itself instead (on W5 every new
        # start run outlived PyPy's nursery).
        version = _increased("version", self_state(total_ignores, total_takes))
        lines += [f"run.version = {version}", "rs = run"]
        made.append(("rs", kinds[state_name]))
    if keeps_paths and not hands_over:
        # no TAKE took the run's lock over: release it
        lines += [
            "if previous_entry is not None:",
            "    buffer.release_node(previous_entry, version)",
        ]
    # where the new runs go (NFA.process): completed matches now, partial ones once it is
    # known that none of them stops the others
    stops = any(kind is STOP for _, kind in made)
    for var, kind in made:
        if kind is FINAL:
            lines += add_to_queue("potential", var, False, True)
        elif kind is STOP and keeps_paths:
            lines.append(f"buffer.release_node({var}.previous_entry, {var}.version)")
    for var, kind in made:
        if kind is ALIVE:
            if not stops:
                lines += add_to_queue("partial", var, var == "rs", True)
            elif keeps_paths:
                lines.append(f"buffer.release_node({var}.previous_entry, {var}.version)")
    return lines


def add_to_queue(queue: str, var: str, last: bool, inline: bool = False) -> list[str]:
    """``queue.add(var)`` (JavaPriorityQueue, Java's sift-up) written out; ``last``: the run
    sorts after every other (a start run without events), so that it only goes to the end.
    ``inline``: the usual case first, a run that sorts after its parent-to-be (no sift), with
    one comparison (what plans and the generated step use)."""
    if last:
        return [f"{queue}.queue.append({var})"]
    sift = [
        "while k > 0:",
        "    parent = (k - 1) >> 1",
        "    e = q[parent]",
        "    if key >= e.order:",
        "        break",
        "    q[k] = e",
        "    k = parent",
        f"q[k] = {var}",
    ]
    if inline:
        return [
            f"q = {queue}.queue",
            "k = len(q)",
            f"q.append({var})",
            f"if k and {var}.order < q[(k - 1) >> 1].order:",
            f"    key = {var}.order",
            *("    " + line for line in sift),
        ]
    return [f"q = {queue}.queue", f"q.append({var})", "k = len(q) - 1", f"key = {var}.order", *sift]
