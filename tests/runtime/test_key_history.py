"""``CepOperator.process_key_history``: one key's whole input in time order, then the end of input,
without buffering. Random patterns and ordered streams of one key give the outputs, state and
stats of ``process_element`` for each element and then ``flush()`` (the batch connectors' old
path, still the general one)."""

from __future__ import annotations

from typing import Any

import pytest
from core.helpers import Event, events, named
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.runtime import CepOperator, Output
from runtime.test_fast_paths import _same
from runtime.test_fused_step import BAD_PRICE, _raising

# (name, time step, bad): one element per millisecond, some at the time of the one before
histories = st.lists(
    st.tuples(
        st.sampled_from("abcx"),
        st.sampled_from([1, 1, 1, 2, 5, 0]),
        st.sampled_from([False] * 9 + [True]),
    ),
    min_size=0,
    max_size=60,
)


def _history(stream: list[tuple[str, int, bool]]) -> list[Event]:
    t = 0
    out = []
    for i, (name, step, bad) in enumerate(stream, start=1):
        t += step if i > 1 else 1
        out.append(Event(name=name, ts=t, id=i, volume=7.0, price=BAD_PRICE if bad else 0.0))
    return out


def _pair(pattern: Pattern) -> list[CepOperator]:
    return [
        CepOperator(pattern, key_by=lambda e: int(e.volume), out_of_orderness=None, on_error="side_output")
        for _ in range(2)
    ]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(pattern_specs(), histories)
def test_a_key_history_gives_the_outputs_and_state_of_element_by_element_then_flush(
    spec: dict[str, Any], stream: list[tuple[str, int, bool]]
) -> None:
    pattern, _ = compile_or_reject(spec, condition=_raising, negation_condition=_raising)
    history = _history(stream)
    at_once, one_by_one = _pair(pattern)
    expected: list[Output] = []
    for e in history:
        expected.extend(one_by_one.process_element(e, e.ts))
    expected.extend(one_by_one.flush())
    _same(at_once.process_key_history(history, [e.ts for e in history]), expected, [at_once, one_by_one])


def test_a_history_runs_each_time_to_its_matches_and_timeouts() -> None:
    # a followed_by b within 5: a1 b3 matches at 3; a4 times out at 9 (its window's end)
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(5)
    op = CepOperator(pattern, key_by=lambda e: "k", out_of_orderness=None, on_error="side_output")
    history = events("a1 b3 a4 x8 x12")
    outputs = op.process_key_history(history, [e.ts for e in history])
    assert [(o.kind, o.key, o.value, o.timestamp) for o in outputs] == [
        ("match", "k", {"a": events("a1"), "b": events("b3")}, 3),
        ("timeout", "k", {"a": events("a4")}, 9),
    ]
    assert op.has_state() is False
    assert op.current_watermark == 2**63 - 1


def test_a_history_whose_times_go_back_is_refused() -> None:
    pattern = Pattern.begin("a").where(named("a"))
    op = CepOperator(pattern, out_of_orderness=None, on_error="side_output")
    history = events("a5 a3")
    with pytest.raises(ValueError, match="3 follows 5"):
        op.process_key_history(history, [5, 3])


def test_an_operator_holding_state_takes_the_general_path() -> None:
    # a1 is buffered before the call: the history continues it, as process_element would
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    op = CepOperator(pattern, out_of_orderness=None, on_error="side_output")
    assert op.process_element(events("a1")[0], 1) == []
    outputs = op.process_key_history(events("b2"), [2])
    assert [(o.kind, o.value) for o in outputs] == [("match", {"a": events("a1"), "b": events("b2")})]


def _by_key(outputs: list[Output]) -> dict[Any, list[Output]]:
    grouped: dict[Any, list[Output]] = {}
    for o in outputs:
        grouped.setdefault(o.key, []).append(o)
    return grouped


# micro-batches: (name, time step, bad, key) elements, and how far the watermark stays behind
# the batch's latest time; time steps may go back (late or reordered elements)
micro_batches = st.lists(
    st.tuples(
        st.lists(
            st.tuples(
                st.sampled_from("abcx"),
                st.sampled_from([1, 1, 1, 2, 0, -1, -3]),
                st.sampled_from([False] * 9 + [True]),
                st.integers(0, 3),
            ),
            min_size=0,
            max_size=25,
        ),
        st.sampled_from([0, 0, 1, 3, 10]),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(pattern_specs(), micro_batches, st.booleans())
def test_keys_fed_at_once_per_batch_give_each_key_the_outputs_and_state_of_element_by_element(
    spec: dict[str, Any], batches: list[tuple[list[tuple[str, int, bool, int]], int]], snapshot: bool
) -> None:
    # the streaming connector's use: per micro-batch, each key's elements, when they came in time
    # order, go in at once up to the watermark; then process_watermark fires the other keys
    pattern, _ = compile_or_reject(spec, condition=_raising, negation_condition=_raising)
    at_once, one_by_one = _pair(pattern)
    t = 5
    i = 0
    for batch, behind in batches:
        elements = []
        for name, step, bad, key in batch:
            i += 1
            t = max(t + step, 1)
            elements.append(Event(name=name, ts=t, id=i, volume=float(key), price=BAD_PRICE if bad else 0.0))
        watermark = max([e.ts for e in elements], default=t) - behind
        expected: list[Output] = []
        for e in elements:
            expected.extend(one_by_one.process_element(e, e.ts))
        expected.extend(one_by_one.process_watermark(watermark))
        got: list[Output] = []
        keys: dict[int, list[Event]] = {}
        for e in elements:
            keys.setdefault(int(e.volume), []).append(e)
        for key_events in keys.values():
            times = [e.ts for e in key_events]
            if times == sorted(times):
                got.extend(at_once.process_key_elements(key_events, times, watermark))
            else:  # in arrival order, one by one
                for e in key_events:
                    got.extend(at_once.process_element(e, e.ts))
        got.extend(at_once.process_watermark(watermark))
        assert _by_key(got) == _by_key(expected)
        assert sorted(map(repr, got)) == sorted(map(repr, expected))
        for op in (at_once, one_by_one):
            op._check()  # noqa: SLF001
        assert at_once.stats() == one_by_one.stats()
        assert at_once.next_deadline() == one_by_one.next_deadline()
        # (not the state's bytes: keys fire in another order, so the buffer all keys share numbers
        # their events otherwise; each key's numbers keep its order, all they are compared for)
        if snapshot:
            for op in (at_once, one_by_one):
                op.restore(op.snapshot())
    assert _by_key(at_once.flush()) == _by_key(one_by_one.flush())
    assert at_once.stats() == one_by_one.stats()


def test_an_operator_with_its_own_watermark_takes_the_element_by_element_path() -> None:
    # out_of_orderness=0: each element moves the watermark, so b2's element fires a1 at once
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    history = events("a1 b2 x3")
    at_once = CepOperator(pattern, out_of_orderness=0, on_error="side_output")
    one_by_one = CepOperator(pattern, out_of_orderness=0, on_error="side_output")
    expected = [o for e in history for o in one_by_one.process_element(e, e.ts)]
    assert at_once.process_key_elements(history, [e.ts for e in history], 10) == expected
    assert [(o.kind, o.value) for o in expected] == [("match", {"a": events("a1"), "b": events("b2")})]
    assert at_once.current_watermark == one_by_one.current_watermark == 2
