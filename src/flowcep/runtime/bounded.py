"""``CEP.pattern(..., evaluator=...)`` on a finite input: the bounded evaluators behind the
runtime's usual outputs.

The input is read whole. Each element's timestamp and key are read as the operator reads them,
and an element is late exactly when the operator would find it so (``ts <= watermark``, the
watermark being ``max_ts - out_of_orderness - 1`` after each element); late elements go to the
late-data side output. Each key's elements, in time order (arrival order within one timestamp),
go to the evaluator the planner picks (or the one requested). Matches come out ordered by their
last element's timestamp, then its arrival, then in the evaluator's order (docs/bounded.md).

The NFA runs instead (``bounded_outputs`` returns None) when the input has a bad record or a
condition raises, so that those are reported exactly as usual; with ``"auto"`` also when the
run consumes timeouts, is in processing time or sorts equal timestamps with a comparator.
A bounded evaluator asked for explicitly in those last three cases is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sized
from itertools import islice
from operator import attrgetter, itemgetter, le
from typing import Any

from flowcep.bounded import EVALUATORS, compile_bounded, plan, run_plan, support
from flowcep.bounded.planner import SMALL_KEY
from flowcep.bounded.predicates import CLOCK
from flowcep.nfa import NFACompiler
from flowcep.pattern import ConditionError, Pattern
from flowcep.pattern.context import wall_clock_millis
from flowcep.runtime.functions import extractor
from flowcep.runtime.operator import LONG_MAX, LONG_MIN, to_timestamp
from flowcep.runtime.output import LATE, MATCH, Output, make_output


def check_evaluator(evaluator: str, events: Any, pattern: Pattern) -> None:
    """A known evaluator; a bounded one needs a sized collection, and one asked for by name a
    pattern it serves (else ``UnsupportedPattern`` names the feature)."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(map(repr, EVALUATORS))}, got {evaluator!r}")
    if evaluator != "nfa" and (not isinstance(events, Sized) or isinstance(events, Iterator)):
        raise TypeError(
            f"evaluator={evaluator!r} needs a finite, sized collection of events (a list, a tuple, ...), "
            f"got {type(events).__name__}; use evaluator='nfa' for an unbounded iterable"
        )
    if evaluator in ("optiseq", "tree"):
        compile_bounded(pattern)


def nfa_only(
    evaluator: str, *, timeout_handling: bool, processing_time: bool, comparator: Any, limited: bool = False
) -> str | None:
    """Why only the NFA can serve this run (None: any evaluator can); explicit choices raise."""
    reason = None
    if limited:
        reason = "a partial-match limit (the bounded evaluators keep no partial matches to drop)"
    elif timeout_handling:
        reason = "timed-out partial matches (the bounded evaluators give none)"
    elif processing_time:
        reason = "processing time"
    elif comparator is not None:
        reason = "a comparator for equal timestamps"
    if reason is not None and evaluator != "auto":
        raise ValueError(f"evaluator={evaluator!r} does not serve {reason}; use 'nfa' or 'auto'")
    return reason


def batch_evaluator(
    evaluator: str, pattern: Pattern, *, streaming: bool, timeouts_out: bool, limited: bool = False
) -> str:
    """The evaluator of a run whose input is read whole (Spark batch, ``flowcep run --engine
    spark``): ``evaluator``, or ``"nfa"`` for ``"auto"`` when only the NFA serves the run, which
    is when its output carries timeouts (``timeouts_out``) and the pattern has a window, or when
    a partial-match limit applies (``limited``). Refuses an unknown evaluator, a bounded one on a
    stream, and an explicit one the pattern or the output rules out (``UnsupportedPattern``,
    ``ValueError``)."""
    if evaluator not in EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(map(repr, EVALUATORS))}, got {evaluator!r}")
    if evaluator == "nfa":
        return evaluator
    if not isinstance(pattern, Pattern):  # an event hierarchy (flowcep.hierarchy): levels of NFAs
        if evaluator == "auto":
            return "nfa"
        raise ValueError(f"evaluator={evaluator!r} runs a Pattern; an event hierarchy runs on the NFA")
    if streaming:
        raise ValueError(
            f"evaluator={evaluator!r} reads a key's rows whole: it needs a batch DataFrame; "
            "use evaluator='nfa' on a stream"
        )
    _, window, windows = NFACompiler.compile_states(pattern)  # an illegal pattern fails here
    # only a pattern with a window times out
    timeouts = timeouts_out and (window > 0 or bool(windows))
    if nfa_only(
        evaluator, timeout_handling=timeouts, processing_time=False, comparator=None, limited=limited
    ):
        return "nfa"
    if evaluator != "auto":
        compile_bounded(pattern)
    return evaluator


def bounded_outputs(
    events: Any,
    pattern: Pattern,
    evaluator: str,
    *,
    key_by: Any,
    timestamp: Any,
    out_of_orderness: int | None,
    clock: Any = None,
) -> list[Output] | None:
    """The outputs of the whole run, or None if it must go through the NFA (module docstring).

    ``clock``: the operator's processing-time clock, which conditions read (None: the wall
    clock)."""
    if evaluator == "nfa" or (evaluator == "auto" and support(pattern) is not None):
        return None
    elements = list(events)
    try:
        raws = _fields(elements, timestamp, "timestamp")
        keys_of = _fields(elements, key_by, "key_by") if key_by is not None else None
    except Exception:
        return None  # a bad record: the operator reports it
    if raws is None:
        return None  # no timestamp: every element is a bad record
    try:
        split = _in_order(raws, keys_of)
        ordered = split is not None
        if split is None:
            split = _late_and_keys(elements, raws, keys_of, out_of_orderness)
    except Exception:
        return None  # a bad timestamp or an unhashable key: the operator reports it
    stamps, late, keys = split
    if evaluator == "auto" and len(elements) < SMALL_KEY * len(keys):
        return None  # keys this small go to the NFA one by one: the operator does that best
    found: list[tuple[tuple[int, int, int], Output]] = []
    bounded = compile_bounded(pattern)  # once for all keys (the class was checked above)
    nfa = None
    token = CLOCK.set(clock or wall_clock_millis)
    try:
        for key, positions in keys.items():
            if ordered and len(keys) == 1:
                own, times = elements, stamps  # one key, in order: no copies
            else:
                positions.sort(key=stamps.__getitem__)  # stable: arrival order within a timestamp
                own = [elements[i] for i in positions]
                times = [stamps[i] for i in positions]
            chosen = plan(pattern, own, times, evaluator, bounded)
            if chosen.evaluator == "nfa" and nfa is None:
                nfa = NFACompiler.compile(pattern)
                nfa.use_clock(clock)
            matches = run_plan(chosen, pattern, own, times, nfa=nfa)
            if len(keys) == 1:
                # every evaluator gives one key's matches in the order of the position of their
                # last (or emitting) event: already the output order
                return late + [make_output(MATCH, key, m, stamps[positions[last]]) for last, m in matches]
            for rank, (last, match) in enumerate(matches):
                at = positions[last]
                found.append(((stamps[at], at, rank), make_output(MATCH, key, match, stamps[at])))
    except ConditionError:
        return None
    finally:
        CLOCK.reset(token)
    found.sort(key=lambda x: x[0])
    return late + [o for _, o in found]


def _fields(elements: list[Any], spec: Any, role: str) -> list[Any] | None:
    """Each element's field ``spec`` (a name or a function of the element), read as the
    operator's ``field_reader`` reads it, with the loop in C where the element types allow."""
    get = extractor(role, spec)
    if get is None:
        return None
    if isinstance(spec, str):
        kinds = {type(e) for e in elements}
        if kinds == {dict}:
            return list(map(itemgetter(spec), elements))
        if not any(issubclass(k, Mapping) for k in kinds):
            return list(map(attrgetter(spec), elements))
    return list(map(get, elements))


_Split = tuple[list[int], list[Output], dict[Any, list[int]]]


def _in_order(raws: list[Any], keys_of: list[Any] | None) -> _Split | None:
    """The common case, with its loops in C: int timestamps in non-decreasing order (none is
    late, whatever the out-of-orderness); None otherwise."""
    if not raws or set(map(type, raws)) != {int} or not all(map(le, raws, islice(raws, 1, None))):
        return None
    if not (LONG_MIN <= raws[0] and raws[-1] <= LONG_MAX):
        return None
    if keys_of is None:
        return raws, [], {None: list(range(len(raws)))}
    keys: dict[Any, list[int]] = {}
    for i, key in enumerate(keys_of):
        positions = keys.get(key)
        if positions is None:
            keys[key] = [i]
        else:
            positions.append(i)
    return raws, [], keys


def _late_and_keys(
    elements: list[Any], raws: list[Any], keys_of: list[Any] | None, out_of_orderness: int | None
) -> _Split:
    """Timestamps checked as the operator checks them, late elements as it finds them (``ts <=
    watermark``; the watermark is ``max_ts - out_of_orderness - 1`` after each element), and each
    key's positions."""
    keys: dict[Any, list[int]] = {}
    late: list[Output] = []
    stamps: list[int] = []
    watermark = LONG_MIN
    max_ts = LONG_MIN
    ooo = out_of_orderness
    for i, raw in enumerate(raws):
        ts = raw if type(raw) is int and LONG_MIN <= raw <= LONG_MAX else to_timestamp(raw)
        key = keys_of[i] if keys_of is not None else None
        stamps.append(ts)
        if ts <= watermark:
            late.append(Output(LATE, key, elements[i], ts))
        else:
            positions = keys.get(key)
            if positions is None:
                keys[key] = [i]
            else:
                positions.append(i)
        if ts > max_ts:
            max_ts = ts
            if ooo is not None and ts - ooo - 1 > watermark:
                watermark = ts - ooo - 1
    return stamps, late, keys
