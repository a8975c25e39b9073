"""The generated step (``flowcep.nfa.stepgen``): a pattern's ``NFA.process`` written out as one
function. Random patterns of its class and random streams give the same outputs, state, stats
and snapshot bytes through an operator with the generated step, one with the interpreted
``NFA.process`` and ``ReferenceOperator``; snapshots of either restore into the other."""

from __future__ import annotations

import copy
import sys
import traceback
from typing import Any

import pytest
from core.helpers import Event, events, named
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.nfa import NFACompiler
from flowcep.nfa.stepgen import LazyStep, compile_step, refusal
from flowcep.runtime import CepOperator, Output
from flowcep.runtime.limits import PartialMatchLimit
from flowcep.runtime.reference import ReferenceOperator
from runtime.test_fast_paths import _same
from runtime.test_fused_step import BAD_PRICE, _raising


class GeneratedOperator(CepOperator):
    """``CepOperator`` with the generated step wherever the pattern has one (also on PyPy, where
    ``CepOperator`` keeps the interpreted step)."""

    __slots__ = ()
    GENERATED_STEP = True
    CHAIN_LOOP = False  # the generated step itself, not a chain pattern's loop (test_chain_loop)


class InterpretedOperator(CepOperator):
    """``CepOperator`` with ``NFA.process`` for every pattern."""

    __slots__ = ()
    GENERATED_STEP = False
    CHAIN_LOOP = False


def _operators(pattern: Pattern, out_of_orderness: int, keys: int) -> list[CepOperator]:
    return [
        make(
            pattern,
            key_by=(lambda e: int(e.volume) % keys),
            timestamp=lambda e: e.ts,
            out_of_orderness=out_of_orderness,
            on_error="side_output",
        )
        for make in (GeneratedOperator, InterpretedOperator, ReferenceOperator)
    ]


def _generated(op: CepOperator) -> bool:
    step = op._step  # noqa: SLF001
    if isinstance(step, LazyStep):
        step = step.resolved()
    return bool(step != op.nfa.process)


def _all_same(outputs: list[list[Output]], ops: list[CepOperator]) -> None:
    generated, interpreted, reference = ops
    _same(outputs[0], outputs[2], [generated, reference])
    _same(outputs[1], outputs[2], [interpreted, reference])
    # the two CepOperators forget the shared buffer's counters at the same times: all bytes agree
    assert generated.snapshot() == interpreted.snapshot()


# (name, time step, bad, key, how many elements this batch ends after (0: it goes on), what to do
# after the batch): mostly one element per millisecond, sometimes two, now and then one behind
streams = st.lists(
    st.tuples(
        st.sampled_from("abcx"),
        st.sampled_from([1, 1, 1, 1, 2, 0, -1, -3]),
        st.sampled_from([False] * 9 + [True]),
        st.integers(0, 3),
        st.sampled_from([0, 0, 0, 1, 3]),
        st.sampled_from(["", "", "", "snapshot", "swap"]),
    ),
    min_size=8,
    max_size=60,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(
    pattern_specs(),
    st.sampled_from(["no_skip", "no_skip", "skip_past_last_event"]),
    streams,
    st.sampled_from([0, 0, 0, 1, 3]),
    st.sampled_from([1, 1, 2, 3]),
)
def test_generated_interpreted_and_reference_agree_on_random_patterns_and_streams(
    spec: dict[str, Any],
    skip: str,
    stream: list[tuple[str, int, bool, int, int, str]],
    out_of_orderness: int,
    keys: int,
) -> None:
    pattern, _ = compile_or_reject(dict(spec, skip=skip), condition=_raising, negation_condition=_raising)
    ops = _operators(pattern, out_of_orderness, keys)
    assume(_generated(ops[0]))
    assert not _generated(ops[1]) and not _generated(ops[2])
    t = 0
    batch: list[Event] = []
    for i, (name, step, bad, key, ends, then) in enumerate(stream, start=1):
        t = max(t + step, 1)
        batch.append(Event(name=name, ts=t, id=i, volume=float(key), price=BAD_PRICE if bad else 0.0))
        if ends and len(batch) >= ends:
            _all_same([op.process_elements(batch) for op in ops], ops)
            batch = []
            if then == "snapshot":  # each goes on from its own snapshot
                for op in ops:
                    op.restore(op.snapshot())
            elif then == "swap":  # the generated and the interpreted step go on from each other's
                generated, interpreted = ops[0].snapshot(), ops[1].snapshot()
                ops[0].restore(interpreted)
                ops[1].restore(generated)
    _all_same([op.process_elements(batch) for op in ops], ops)
    _all_same([op.flush() for op in ops], ops)


def _abc(skip: AfterMatchSkipStrategy | None = None) -> Pattern:
    return (
        Pattern.begin("a", skip)
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(named("c"))
        .within(10)
    )


def test_cpython_operators_take_the_generated_step_pypy_ones_the_interpreted_one() -> None:
    assert _generated(CepOperator(_abc(), timestamp=lambda e: e.ts)) == (sys.implementation.name == "cpython")


def test_a_pattern_of_simple_conditions_gets_a_generated_step() -> None:
    op = GeneratedOperator(_abc(), timestamp=lambda e: e.ts)
    assert _generated(op)
    outputs = [*op.process_elements(events("a1 x2 b3 c4")), *op.flush()]
    assert outputs == [Output("match", None, {"a": events("a1"), "b": events("b3"), "c": events("c4")}, 4)]


def test_the_generated_step_is_compiled_on_the_first_element_once_for_copies() -> None:
    template = GeneratedOperator(_abc(), timestamp=lambda e: e.ts)
    lazy = template._step  # noqa: SLF001
    assert isinstance(lazy, LazyStep) and lazy.step is None  # nothing compiled yet
    first, second = copy.copy(template), copy.copy(template)
    first.reset()
    second.reset()
    for op in (first, second):
        assert op.process_elements(events("a1 b2 c3")) == []
        assert op._step is lazy.step  # noqa: SLF001  (the step itself, compiled once)
    assert lazy.step is not None and lazy.step != template.nfa.process


def test_a_key_history_takes_the_compiled_step_itself() -> None:
    op = GeneratedOperator(_abc(), key_by=lambda e: "k", timestamp=lambda e: e.ts)
    history = events("a1 b2 c3")
    outputs = op.process_key_history(history, [e.ts for e in history])
    assert outputs == [Output("match", "k", {"a": events("a1"), "b": events("b2"), "c": events("c3")}, 3)]
    assert not isinstance(op._step, LazyStep) and _generated(op)  # noqa: SLF001


def test_an_iterative_condition_keeps_the_interpreted_step() -> None:
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(lambda e, ctx: e.name == "b")
    nfa = NFACompiler.compile(pattern, timeout_handling=True)
    assert refusal(nfa) == "state 'b' decides per run or by searching"
    assert compile_step(nfa) is None
    assert not _generated(GeneratedOperator(pattern, timestamp=lambda e: e.ts))


def test_a_skip_strategy_that_prunes_by_paths_keeps_the_interpreted_step() -> None:
    nfa = NFACompiler.compile(_abc(AfterMatchSkipStrategy.skip_to_next()), timeout_handling=True)
    assert refusal(nfa) == "its skip strategy prunes by the paths of matches"
    assert not _generated(
        GeneratedOperator(_abc(AfterMatchSkipStrategy.skip_to_next()), timestamp=lambda e: e.ts)
    )


def test_a_partial_match_limit_keeps_the_interpreted_step() -> None:
    op = GeneratedOperator(_abc(), timestamp=lambda e: e.ts, partial_match_limit=PartialMatchLimit(per_key=5))
    assert not _generated(op)


class Stop(BaseException):
    """Not an ``Exception``: a condition raising it stops the stream."""


def test_a_traceback_through_the_generated_step_shows_its_lines() -> None:
    def b_or_stop(e: Event) -> bool:
        if e.id == 2:
            raise Stop
        return bool(e.name == "b")

    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(b_or_stop)
    op = GeneratedOperator(pattern, timestamp=lambda e: e.ts)
    assert _generated(op)
    with pytest.raises(Stop) as info:
        op.process_elements(events("a1 x2 x3"))
    frames = traceback.extract_tb(info.tb)
    [step] = [f for f in frames if f.filename.startswith("<flowcep generated process")]
    assert step.line is not None and "s1_f0(event)" in step.line


def _counted(name: str, calls: list[str]) -> Any:
    def cond(e: Event) -> bool:
        calls.append(f"{name}{e.id}")
        return bool(e.name == name)

    return cond


def test_each_state_asks_its_condition_once_per_event_however_many_runs_wait_there() -> None:
    calls: list[str] = []
    pattern = (
        Pattern.begin("a")
        .where(_counted("a", calls))
        .followed_by_any("b")
        .where(_counted("b", calls))
        .within(10)
    )
    op = GeneratedOperator(pattern, timestamp=lambda e: e.ts)
    assert _generated(op)
    outputs = [*op.process_elements(events("a1 a2 a3 x4 b5 x6")), *op.flush()]
    a1, a2, a3 = (events(f"a{i}") for i in (1, 2, 3))
    b5 = events("b5")
    assert outputs == [
        Output("match", None, {"a": a1, "b": b5}, 5),
        Output("match", None, {"a": a2, "b": b5}, 5),
        Output("match", None, {"a": a3, "b": b5}, 5),
        Output("timeout", None, {"a": a1}, 11),
        Output("timeout", None, {"a": a2}, 12),
        Output("timeout", None, {"a": a3}, 13),
    ]
    # in the queue's order (runs at b first, the start run last): b's condition once per event
    # from the first run waiting at b on, the start state's once per event (and once before, by
    # the check that an event starts nothing at a key without runs)
    assert calls == ["a1", "a1", "b2", "a2", "b3", "a3", "b4", "a4", "b5", "a5", "b6", "a6"]
