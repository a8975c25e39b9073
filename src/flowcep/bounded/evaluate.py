"""``evaluate(pattern, events, ...)``: every match over one key's bounded, time-ordered events.

Output order. The NFA gives its matches in emission order (as the runtime does). OptiSeq and the
operator tree give theirs sorted by the position of the match's last event, then by the
positions of its events in pattern order; matches that end on the same event therefore come
out in a fixed order that may differ from the NFA's. The multiset of matches is the NFA's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

from flowcep.bounded.operators import SequenceOperator, run_operators
from flowcep.bounded.optiseq import run_optiseq
from flowcep.bounded.plan import BoundedPattern, compile_bounded
from flowcep.bounded.planner import Plan, plan
from flowcep.bounded.predicates import Lists, match_maker
from flowcep.bounded.tree import run_tree
from flowcep.nfa import NFA, NFACompiler
from flowcep.pattern import ConditionError, Pattern
from flowcep.sharedbuffer import SharedBuffer

Timestamp = Union[Callable[[Any], int], str]
Match = dict[str, list[Any]]
_END_OF_INPUT = 2**62  # the final watermark's advance_time


def timestamp_getter(timestamp: Timestamp) -> Callable[[Any], int]:
    """A field name (``event[name]`` for a dict, else ``event.name``) or a function of the event."""
    if callable(timestamp):
        return timestamp
    if isinstance(timestamp, str):
        name = timestamp

        def get(event: Any) -> Any:
            return event[name] if isinstance(event, dict) else getattr(event, name)

        return get
    raise TypeError(f"timestamp must be a field name or a function of the event, got {timestamp!r}")


def timestamps(events: Any, timestamp: Timestamp) -> list[int]:
    """The events' timestamps; they must be ints in non-decreasing order."""
    if not isinstance(events, Sequence):
        raise TypeError(
            "a bounded evaluator needs a sized, ordered collection of events (a list or a tuple), "
            f"got {type(events).__name__}"
        )
    get = timestamp_getter(timestamp)
    out: list[int] = []
    last = None
    for i, event in enumerate(events):
        t = get(event)
        if isinstance(t, bool) or not isinstance(t, int):
            raise TypeError(f"event {i} ({event!r}): the timestamp must be an int of milliseconds, got {t!r}")
        if last is not None and t < last:
            raise ValueError(f"event {i} ({event!r}): timestamp {t} is before the previous event's {last}")
        out.append(t)
        last = t
    return out


def run_nfa(
    pattern: Pattern, events: Sequence[Any], ts: Sequence[int], nfa: NFA | None = None
) -> list[tuple[int, Match]]:
    """The NFA's matches in emission order, each with the position of the event whose
    processing emitted it (each event is processed after advancing time to it; a match the
    final advance emits gets the last position). ``nfa``: the pattern's, if already compiled."""
    if nfa is None:
        nfa = NFACompiler.compile(pattern)
    state = nfa.create_initial_state()
    buffer = SharedBuffer()
    out: list[tuple[int, Match]] = []
    for i, (event, t) in enumerate(zip(events, ts)):
        out.extend((i - 1, m) for m in nfa.advance_time(buffer, state, t)[0])
        out.extend((i, m) for m in nfa.process(buffer, state, event, t))
    out.extend((len(events) - 1, m) for m in nfa.advance_time(buffer, state, _END_OF_INPUT)[0])
    return out


def run_plan(
    chosen: Plan,
    pattern: Pattern,
    events: Sequence[Any],
    ts: Sequence[int],
    reorder: bool = False,
    nfa: NFA | None = None,
) -> list[tuple[int, Match]]:
    """Run the evaluator ``chosen`` names: its matches, each with the position of its last event
    (for the NFA, of the event that emitted it), in the evaluator's order."""
    if chosen.evaluator == "nfa":
        return run_nfa(pattern, events, ts, nfa)
    bp = chosen.bounded
    lists = chosen.lists
    assert isinstance(bp, BoundedPattern) and isinstance(lists, Lists)
    if not all(lists.steps):
        return []  # a step without events: no match (the planner made no plans)
    if chosen.evaluator == "optiseq":
        cands = run_optiseq(bp, events, ts, chosen.optiseq, lists)
    else:
        cands = run_tree(bp, events, ts, None if reorder else chosen.tree, reorder, lists)
    make = match_maker(bp, events)
    return [(c[-1][-1], make(c)) for c in cands]


def evaluate(
    pattern: Pattern,
    events: Sequence[Any],
    *,
    timestamp: Timestamp,
    evaluator: str = "auto",
    reorder_predicates: bool = False,
    operators: Mapping[str, SequenceOperator] | None = None,
) -> list[Match]:
    """Every match of ``pattern`` over one key's ``events`` (see the module docstring for the
    order). ``evaluator``: "nfa", "optiseq", "tree" or "auto" (the planner's choice); an explicit
    bounded evaluator raises ``UnsupportedPattern`` for a pattern outside its class.
    ``reorder_predicates=True`` lets the tree evaluator order ANDed conditions by measured pass
    rate (conditions must then be free of side effects).

    A condition that raises in a bounded evaluator makes the NFA run instead: errors are the
    NFA's, on the event and step it tests.

    ``operators`` (with ``evaluator="tree"``): user-defined operators by the step each joins to
    the ones before it (``operators.py``); the tree is then left-deep, every node runs its
    operator, and the matches are the operators' (Flink's only with ``SequenceOperator``).
    A condition that raises then raises its ``ConditionError``."""
    ts = timestamps(events, timestamp)
    if operators is not None:
        if evaluator != "tree":
            raise ValueError(f"operators run in the tree evaluator: give evaluator='tree', not {evaluator!r}")
        bp = compile_bounded(pattern)
        make = match_maker(bp, events)
        return [make(c) for c in run_operators(bp, events, ts, operators)]
    chosen = plan(pattern, events, ts, evaluator)
    try:
        return [m for _, m in run_plan(chosen, pattern, events, ts, reorder_predicates)]
    except ConditionError:
        if chosen.evaluator == "nfa":
            raise
    # A bounded evaluator may test a condition on an event the NFA never tests it on: the NFA
    # runs instead, so that an error is the one it would raise (or none).
    return [m for _, m in run_nfa(pattern, events, ts)]


def explain(pattern: Pattern, events: Sequence[Any], *, timestamp: Timestamp, evaluator: str = "auto") -> str:
    """The planner's account for ``pattern`` over ``events`` (see ``Plan.explain``)."""
    return plan(pattern, events, timestamps(events, timestamp), evaluator, detailed=True).explain()
