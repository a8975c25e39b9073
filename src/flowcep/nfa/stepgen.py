"""A pattern's whole ``NFA.process`` as one generated function (its *step*).

For an NFA whose decisions depend on the event alone (no condition reads a partial match, every
state has a decision table) and whose keys keep no paths (a ``PathlessBuffer``), ``compile_step``
writes ``NFA.process`` out for that pattern: each state's condition search inline (the lines of
its decision table), each decision's plan inline (``flowcep.nfa.plans``), and no per-call
bookkeeping for the runs (no handle, no decision slots, no list of changes). The runs, the
queue and the buffer are those of ``NFA.process``, with the same values in the same order, so
that snapshots, timeouts and everything else read the state as they do after the interpreted
step; ``NFA.process`` stays the reference (a property test holds the two to each other).

The step, for a pattern with states ``s0 .. sn`` (the start state first)::

    def process(buffer, state, event, timestamp, skip_strategy=None):
        runs = state.queue
        d0 = d1 = ... = None  # each state's decision for this event, once asked
        it = iter(runs)
        for run in it:  # phase 1: decisions up to the first that changes a run
            <the run's state's decision: its condition search, inline; break if it changes>
        else:
            return []  # (most events change nothing)
        first = len(runs) - it.__length_hint__() - 1
        for run in it:  # phase 1, on: every condition before any change
            <the run's state's decision>
        rest = runs[first:]  # phase 2: apply
        del runs[first:]
        for run in rest:
            <the run's decision's plan, inline>
        <the matches>

Anything outside the class gets None (``refusal`` says why) and keeps ``NFA.process``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowcep.nfa.codegen import generated
from flowcep.nfa.compiled import ALIVE, Decision
from flowcep.nfa.computation_state import ComputationState
from flowcep.nfa.context import own_match
from flowcep.nfa.nfa import NFA
from flowcep.nfa.plans import NO_EVENTS, add_to_queue, plan_lines
from flowcep.nfa.tables import unrolled_decision
from flowcep.pattern.exceptions import ConditionError

Step = Callable[..., list[Any]]

# the most decisions a step inlines (each brings its plan); more: the interpreted step
MAX_DECISIONS = 48
_LEAF = "@{}@"  # where a condition search ends in decision n (stepgen fills it in)


def refusal(nfa: NFA) -> str | None:
    """Why ``nfa`` gets no generated step (None: it can have one)."""
    if type(nfa) is not NFA:
        return "an NFA of another kind"
    if not nfa.plans_enabled:
        return "the NFA decides by searching (the reference)"
    if nfa.needs_paths():
        return "its skip strategy prunes by the paths of matches"
    for name, slot in nfa._slots.items():  # noqa: SLF001  (the NFA's own compiled decisions)
        if slot.per_run or slot.table is None:
            return f"state {name!r} decides per run or by searching"
    return None


def compile_step(nfa: NFA) -> Step | None:
    """``nfa``'s generated step (see the module docstring), or None (``refusal``)."""
    if refusal(nfa) is not None:
        return None
    return _StepWriter(nfa).write()


class LazyStep:
    """``nfa``'s generated step, compiled on its first call (``compile_step`` takes a few
    milliseconds: an operator that never processes an element pays nothing). ``resolved()``:
    the step itself, for a caller to keep instead of this object."""

    __slots__ = ("nfa", "step")

    def __init__(self, nfa: NFA) -> None:
        self.nfa = nfa
        self.step: Step | None = None

    def resolved(self) -> Step:
        step = self.step
        if step is None:
            step = self.step = compile_step(self.nfa) or self.nfa.process
        return step

    def __call__(self, *args: Any) -> list[Any]:
        return self.resolved()(*args)


class _StepWriter:
    """The source of one NFA's step and the values it reads."""

    def __init__(self, nfa: NFA) -> None:
        self.nfa = nfa
        kinds = nfa._kinds  # noqa: SLF001
        # the states whose runs wait in the queue, the start state first: every key has its start
        # run, which every event visits, so its test comes first in each dispatch
        alive = [name for name, kind in kinds.items() if kind is ALIVE]
        self.alive = sorted(alive, key=lambda name: not nfa.states[name].is_start)
        self.is_start = [nfa.states[name].is_start for name in self.alive]
        self.names: dict[str, Any] = {
            "new": object.__new__,
            "CS": ComputationState,
            "NO_EVENTS": NO_EVENTS,
            "ConditionError": ConditionError,
            "interpreted": nfa.process,
            "bind": nfa._bind,  # noqa: SLF001
            "POTENTIAL": nfa._potential,  # noqa: SLF001  (the NFA's scratch queue, as in process)
            "own_match": own_match,
            "SKIP": nfa.skip_strategy,
            "by_skip_strategy": nfa._process_matches_by_skip_strategy,  # noqa: SLF001
        }
        self.slot_vars = {name: f"slot{s}" for s, name in enumerate(self.alive)}
        for name, var in self.slot_vars.items():
            self.names[var] = nfa._slots[name]  # noqa: SLF001
        self.decisions: list[list[Decision]] = []
        self.searches: list[list[str]] = []

    def write(self) -> Step | None:
        for s, name in enumerate(self.alive):
            unrolled = unrolled_decision(self.nfa.states, self.nfa.states[name], f"s{s}_", _LEAF)
            if unrolled is None:
                return None
            lines, evaluators, pages, decisions = unrolled
            self.names.update({f"s{s}_f{k}": f for k, f in enumerate(evaluators)})
            self.names[f"PAGES{s}"] = tuple(pages)
            self.names.update({f"D{s}_{n}": d for n, d in enumerate(decisions)})
            self.decisions.append(decisions)
            self.searches.append(lines)
        if sum(map(len, self.decisions)) > MAX_DECISIONS:
            return None
        source = "\n".join(self.source())
        # generated from the compiled states; names (the user's step names) enter as repr() literals
        step: Step = generated(source, "process", self.names)
        return step

    def source(self) -> list[str]:
        nfa = self.nfa
        skips = bool(nfa.skip_strategy.is_skip_strategy())
        return [
            "def process(buffer, state, event, timestamp, skip_strategy=None):",
            "    if skip_strategy is not None:",
            "        return interpreted(buffer, state, event, timestamp, skip_strategy)",
            "    runs = state.queue",
            "    if state.unbound:",
            "        bind(state)",
            *self.no_decisions(),
            "    # phase 1: the decisions, up to the first that changes a run (runs[first])",
            "    it = iter(runs)",
            "    for run in it:",
            *self.dispatch("until_change", 2),
            "    else:",
            "        return []  # every run survives unchanged",
            "    # where the loop stopped, from what the iterator has left (no count per run)",
            "    first = len(runs) - it.__length_hint__() - 1",
            "    # the rest of phase 1: every condition before anything changes, so that one that",
            "    # raises leaves the key's runs as they were",
            "    for run in it:",
            *self.dispatch("decide", 2),
            "    # phase 2: apply; the unchanged runs before the first change keep their places",
            "    rest = runs[first:]",
            "    del runs[first:]",
            "    state.runs_changed = True",
            "    partial = state",
            "    potential = POTENTIAL",
            "    potential.queue = []",
            "    eid = None  # the event's id, given on its first TAKE",
            "    for run in rest:",
            *self.dispatch("apply", 2),
            *(self.skipping() if skips else self.emitting()),
        ]

    def no_decisions(self) -> list[str]:
        """The decisions not made yet, of states other than start states: a start state has one
        run in the queue (its start run), whose visit makes its decision."""
        shared = [f"d{s}" for s in range(len(self.alive)) if not self.is_start[s]]
        if not shared:
            return []
        return [
            "    # each other state's decision for this event, made for the first of its runs",
            f"    {' = '.join(shared)} = None",
        ]

    def dispatch(self, what: str, depth: int) -> list[str]:
        """Per state of the run: ``until_change`` (its decision, made once; ``break`` if it changes
        the run), ``decide`` (its decision, made once) or ``apply`` (its decision's plan). The
        last state gets ``else``: the queue holds runs of these states only. Until the first
        change, a state's decision already made changes nothing (it would have ended the loop
        when it was made): its later runs need no test."""
        pad = "    " * depth
        lines = ["slot = run.slot"]
        last = len(self.alive) - 1
        for s in range(len(self.alive)):
            body = self.apply(s) if what == "apply" else self.decide(s, what == "until_change")
            if last == 0:
                lines += body
                break
            lines.append("else:" if s == last else f"{'if' if s == 0 else 'elif'} slot is slot{s}:")
            lines += ["    " + line for line in body]
        return [pad + line for line in lines]

    def decide(self, s: int, until_change: bool) -> list[str]:
        """State ``s``'s decision into ``d{s}`` (for all its runs), made by its first run;
        ``until_change``: and ``break`` if it changes the run."""
        search = []
        for line in self.searches[s]:
            line = line[8:]  # (written for depth 2)
            leaf = line.lstrip()
            if not leaf.startswith("@"):
                search.append(line)
                continue
            pad = line[: len(line) - len(leaf)]
            n = int(leaf.strip("@"))
            search.append(f"{pad}d{s} = D{s}_{n}")
            if until_change and not self.decisions[s][n].unchanged:
                search.append(f"{pad}break")
        lines = [
            "try:",
            *("    " + line for line in search),
            "except Exception as exc:",
            f"    raise ConditionError(PAGES{s}[i], event, exc) from exc",
        ]
        if self.is_start[s]:  # its one run: decided once without a test
            return lines
        return [f"if d{s} is None:", *("    " + line for line in lines)]

    def apply(self, s: int) -> list[str]:
        """What the run's decision (``d{s}``) does: the plan of each decision that changes a run,
        else the run goes back to the queue as it is."""
        nfa = self.nfa
        name = self.alive[s]
        lines = []
        branch = "if"
        for n, decision in enumerate(self.decisions[s]):
            if decision.unchanged:
                continue
            body = plan_lines(
                decision,
                name,
                nfa.states[name].is_start,
                nfa._kinds,  # noqa: SLF001
                False,
                nfa._slots,  # noqa: SLF001
                self.names,
                self.slot_vars,
                True,
            )
            lines.append(f"{branch} d{s} is D{s}_{n}:")
            lines += ["    " + line for line in body]
            branch = "elif"
        unchanged = add_to_queue("partial", "run", False, True)
        if branch == "if":
            return lines + unchanged
        return [*lines, "else:  # the run survives as it is", *("    " + line for line in unchanged)]

    @staticmethod
    def emitting() -> list[str]:
        """The matches without a skip strategy: each completed run's, in the queue's order."""
        return [
            "    completed = potential.queue",
            "    if not completed:",
            "        return []",
            "    if len(completed) == 1:  # (the usual case: no comprehension, which is a call)",
            "        return [own_match(buffer, completed[0])]",
            "    return [own_match(buffer, run) for run in completed]",
        ]

    @staticmethod
    def skipping() -> list[str]:
        """The matches a skip strategy lets out (``NFA._process_matches_by_skip_strategy``)."""
        return [
            "    result = []",
            "    if potential.queue or state.completed_matches.queue:",
            "        by_skip_strategy(buffer, state, SKIP, potential, state, result)",
            "    return result",
        ]
