"""Many keys due at once, each buffering one element (``CepOperator._fire_lone_heads``): random
patterns over many keys that take an element each per millisecond give the same outputs and the
same state through ``CepOperator`` and ``ReferenceOperator`` (which fires every key through the
plain path), also when a condition fails or stops the stream in the middle of a firing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from core.helpers import Event, named
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.runtime import CepOperator, Output
from flowcep.runtime.reference import ReferenceOperator
from runtime.test_fast_paths import _same

BAD_PRICE = 9.0  # a condition raises ValueError for this event: a bad record
STOP_PRICE = 8.0  # a condition raises Stop for this event: the stream stops


class Stop(BaseException):
    """Not an ``Exception``: a condition raising it is no bad record, it stops the stream."""


def _raising(*names: str) -> Any:
    """``named(*names)``, raising for an event priced ``BAD_PRICE`` or ``STOP_PRICE``."""
    plain = named(*names)

    def cond(e: Event) -> bool:
        if e.price == BAD_PRICE:
            raise ValueError("bad price")
        if e.price == STOP_PRICE:
            raise Stop
        return bool(plain(e))

    return cond


class LoneHeads(CepOperator):
    """``CepOperator`` with its loop for many keys due at once on every interpreter (it is on
    CPython only by default: ``LONE_HEADS``)."""

    __slots__ = ()
    LONE_HEADS = True


def _operators(pattern: Pattern, out_of_orderness: int | None) -> list[CepOperator]:
    return [
        make(
            pattern,
            key_by=lambda e: int(e.volume),
            timestamp=lambda e: e.ts,
            out_of_orderness=out_of_orderness,
            on_error="side_output",
        )
        for make in (LoneHeads, ReferenceOperator)
    ]


def _each(ops: list[CepOperator], call: Callable[[CepOperator], list[Output]]) -> bool:
    """``call`` each operator: the same outputs and state, or both stopped alike (True)."""
    outputs = []
    stopped = []
    for op in ops:
        try:
            outputs.append(call(op))
        except Stop:
            outputs.append([])
            stopped.append(op)
    _same(*outputs, ops)
    assert len(stopped) in (0, len(ops))
    return bool(stopped)


def _feed(ops: list[CepOperator], batch: list[Event]) -> None:
    _each(ops, lambda op: op.process_elements(batch))


# per millisecond, the keys (of 0-7) that take an element then, in the order they take them, each
# element's name and what is bad about it; then how many milliseconds the batch ends after (0: it
# goes on) and whether a watermark of the host follows it
milliseconds = st.lists(
    st.tuples(
        st.lists(
            st.tuples(
                st.integers(0, 7),
                st.sampled_from("abcx"),
                st.sampled_from([0.0] * 20 + [BAD_PRICE, STOP_PRICE]),
            ),
            max_size=10,
        ),
        st.sampled_from([0, 0, 1, 2]),
        st.booleans(),
    ),
    min_size=2,
    max_size=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(pattern_specs(), milliseconds, st.sampled_from([0, 0, 1, None]))
def test_many_keys_due_at_once_give_the_outputs_and_state_of_the_reference(
    spec: dict[str, Any],
    stream: list[tuple[list[tuple[int, str, float]], int, bool]],
    out_of_orderness: int | None,
) -> None:
    pattern, _ = compile_or_reject(spec, condition=_raising, negation_condition=_raising)
    ops = _operators(pattern, out_of_orderness)
    batch: list[Event] = []
    i = 0
    for t, (elements, ends, watermark) in enumerate(stream, start=1):
        for key, name, price in elements:
            i += 1
            batch.append(Event(name=name, ts=t, id=i, volume=float(key), price=price))
        if ends and t % ends == 0:
            _feed(ops, batch)
            batch = []
            if watermark:
                _each(ops, lambda op: op.process_watermark(t))  # noqa: B023  (called at once)
    _feed(ops, batch)
    while _each(ops, lambda op: op.flush()):  # a stopped flush resumes at the next
        pass


def _abc() -> Pattern:
    return (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(_raising("c"))
        .within(10)
    )


def test_keys_with_one_element_each_fire_without_fire_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # keys 0-2 take a at 1, b at 2, c at 3: the watermark of key 0's next element fires the three
    # keys' elements of the millisecond before; key 0 then buffers two (through _fire_key), keys 1
    # and 2 one each (not through it)
    general: list[int] = []
    fire_key = CepOperator._fire_key

    def counted_fire_key(self: CepOperator, ks: Any, *args: Any) -> None:
        general.append(ks.key)
        fire_key(self, ks, *args)

    monkeypatch.setattr(CepOperator, "_fire_key", counted_fire_key)
    op = _operators(_abc(), 0)[0]
    stream = [
        Event(name, ts=t, id=3 * t + k, volume=float(k)) for t, name in enumerate("abc", 1) for k in range(3)
    ]
    outputs = op.process_elements(stream)
    outputs += op.process_watermark(3)
    assert general == [0, 0]
    assert [(o.kind, o.key, [e.id for e in o.value["c"]], o.timestamp) for o in outputs] == [
        ("match", 0, [9], 3),
        ("match", 1, [10], 3),
        ("match", 2, [11], 3),
    ]
    assert op.flush() == []


def test_a_key_that_stops_the_stream_mid_firing_leaves_the_others_as_the_reference_does() -> None:
    # keys 0-2 wait for c; the watermark of 4 fires their c's of 3, and key 1's stops the stream:
    # key 0 matched (its output is lost with the call), key 1's c is consumed, key 2 waits; the
    # next call resumes the firing, and key 2 matches then
    ops = _operators(_abc(), None)
    stream = [
        Event(name, ts=t, id=3 * t + k, volume=float(k)) for t, name in enumerate("ab", 1) for k in range(3)
    ]
    _feed(ops, stream)
    _same(*[op.process_watermark(2) for op in ops], ops)
    c3 = [Event("c", ts=3, id=10 + k, volume=float(k), price=STOP_PRICE if k == 1 else 0.0) for k in range(3)]
    _feed(ops, c3)
    for op in ops:
        with pytest.raises(Stop):
            op.process_watermark(4)
    _same([], [], ops)
    outputs = [op.process_watermark(4) for op in ops]
    _same(*outputs, ops)
    assert [(o.kind, o.key, o.timestamp) for o in outputs[0]] == [("match", 2, 3)]
    outputs = [op.flush() for op in ops]
    _same(*outputs, ops)
    assert outputs[0] == [
        Output("timeout", 1, {"a": [stream[1]], "b": [stream[4]]}, 11),
    ]


def test_a_run_that_times_out_at_the_watermark_of_the_firing_times_out_in_it() -> None:
    # a1 of key 0 times out at 3; the watermark of 3 fires keys 0 and 1 at their x2: key 0 is
    # advanced to 3 after its element, and its timeout comes out of that call
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).within(2)
    ops = _operators(pattern, None)
    _feed(ops, [Event("a", ts=1, id=1, volume=0.0)])
    _same(*[op.process_watermark(1) for op in ops], ops)
    _feed(ops, [Event("x", ts=2, id=2, volume=0.0), Event("x", ts=2, id=3, volume=1.0)])
    outputs = [op.process_watermark(3) for op in ops]
    _same(*outputs, ops)
    assert [(o.kind, o.key, o.timestamp) for o in outputs[0]] == [("timeout", 0, 3)]


def test_a_match_that_the_watermark_completes_comes_out_of_the_loop() -> None:
    # keys 0 and 1 take a at 1, then x at 3, one element each; the watermark of 10 fires both
    # keys at once, and each a, not followed by c within 5, completes after x (at 6): the loop
    # times the key out at the watermark and emits the match then
    pattern = Pattern.begin("a").where(named("a")).not_followed_by("n").where(named("c")).within(5)
    ops = _operators(pattern, None)
    a1 = [Event("a", ts=1, id=k, volume=float(k)) for k in range(2)]
    _feed(ops, a1)
    _same(*[op.process_watermark(1) for op in ops], ops)
    _feed(ops, [Event("x", ts=3, id=10 + k, volume=float(k)) for k in range(2)])
    outputs = [op.process_watermark(10) for op in ops]
    _same(*outputs, ops)
    assert outputs[0] == [Output("match", 0, {"a": [a1[0]]}, 10), Output("match", 1, {"a": [a1[1]]}, 10)]
    assert ops[0].flush() == []
