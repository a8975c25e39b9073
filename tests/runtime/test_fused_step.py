"""The fused step of ordered input (``CepOperator._fire_head_alone``): an element whose watermark
makes its key, alone, due at its one buffered element. Random patterns and mostly ordered streams,
fed in batches, give the same outputs and the same state through ``CepOperator`` and
``ReferenceOperator`` (which buffers every element and fires through the plain path)."""

from __future__ import annotations

from typing import Any

import pytest
from core.helpers import Event, events, named
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.runtime import CepOperator, Output
from flowcep.runtime.reference import ReferenceOperator
from runtime.test_fast_paths import _same, _step

BAD_PRICE = 9.0  # an event with this price makes every condition raise (a bad record)
# events with these prices make the extractors fail or read a timestamp the operator converts
NO_TIMESTAMP, NO_KEY, FLOAT_TIME, HALF_TIME = 8.0, 7.0, 6.0, 5.0
BAD = {
    "condition": BAD_PRICE,
    "timestamp": NO_TIMESTAMP,
    "key": NO_KEY,
    "float": FLOAT_TIME,
    "half": HALF_TIME,
}


def _raising(*names: str) -> Any:
    """``named(*names)``, raising ``ValueError`` for an event priced ``BAD_PRICE``."""
    plain = named(*names)

    def cond(e: Event) -> bool:
        if e.price == BAD_PRICE:
            raise ValueError("bad price")
        return bool(plain(e))

    return cond


def _timestamp(e: Event) -> Any:
    if e.price == NO_TIMESTAMP:
        raise ValueError("no timestamp")
    if e.price == FLOAT_TIME:
        return float(e.ts)  # a whole number: taken as that int
    if e.price == HALF_TIME:
        return e.ts + 0.5  # a bad record
    return e.ts


def _key(keys: int) -> Any:
    def key_by(e: Event) -> int:
        if e.price == NO_KEY:
            raise KeyError("no key")
        return int(e.volume) % keys

    return key_by


def _operators(pattern: Pattern, out_of_orderness: int, keys: int) -> list[CepOperator]:
    return [
        make(
            pattern,
            key_by=_key(keys),
            timestamp=_timestamp,
            out_of_orderness=out_of_orderness,
            on_error="side_output",
        )
        for make in (CepOperator, ReferenceOperator)
    ]


# (name, time step, what is bad about it (None: nothing), key, how many elements this batch ends
# after (0: it goes on), snapshot after the batch): mostly one element per millisecond, sometimes
# two, now and then one behind
ordered_streams = st.lists(
    st.tuples(
        st.sampled_from("abcx"),
        st.sampled_from([1, 1, 1, 1, 2, 0, -1]),
        st.sampled_from([None] * 15 + sorted(BAD)),
        st.integers(0, 3),
        st.sampled_from([0, 0, 0, 1, 3]),
        st.booleans(),
    ),
    min_size=8,
    max_size=60,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(pattern_specs(), ordered_streams, st.sampled_from([0, 0, 0, 1, 3]), st.sampled_from([1, 1, 2]))
def test_ordered_streams_fed_in_batches_give_the_outputs_and_state_of_the_reference(
    spec: dict[str, Any],
    stream: list[tuple[str, int, str | None, int, int, bool]],
    out_of_orderness: int,
    keys: int,
) -> None:
    pattern, _ = compile_or_reject(spec, condition=_raising, negation_condition=_raising)
    ops = _operators(pattern, out_of_orderness, keys)
    t = 0
    batch: list[Event] = []
    for i, (name, step, bad, key, ends, snapshot) in enumerate(stream, start=1):
        t = max(t + step, 1)
        batch.append(Event(name=name, ts=t, id=i, volume=float(key), price=BAD[bad] if bad else 0.0))
        if ends and len(batch) >= ends:
            _same(*[op.process_elements(batch) for op in ops], ops)
            batch = []
            if snapshot:  # and restored: the operators go on from their snapshots
                for op in ops:
                    op.restore(op.snapshot())
    _same(*[op.process_elements(batch) for op in ops], ops)
    _same(*[op.flush() for op in ops], ops)


def test_ordered_input_of_one_key_takes_the_fused_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # a followed_by b within 5 ms; each element after the first fires the one before it, on the
    # fused step: one call takes x2 and goes on with b3 and x4, none goes through _fire_key
    pattern, _ = compile_or_reject(
        dict(steps=[_step("a"), _step("b", "followed_by")], window=5, skip="no_skip")
    )
    fused: list[int] = []
    general: list[int] = []
    step = CepOperator._fire_head_alone
    fire_key = CepOperator._fire_key

    def counted(self: CepOperator, ks: Any, event: Event, *args: Any) -> Any:
        fused.append(event.id)
        return step(self, ks, event, *args)

    def counted_fire_key(self: CepOperator, ks: Any, *args: Any) -> None:
        general.append(ks.head.id)
        fire_key(self, ks, *args)

    monkeypatch.setattr(CepOperator, "_fire_head_alone", counted)
    monkeypatch.setattr(CepOperator, "_fire_key", counted_fire_key)
    monkeypatch.setattr(CepOperator, "CHAIN_LOOP", False)  # (a chain's own loop: test_chain_loop)
    op = CepOperator(pattern, timestamp=lambda e: e.ts)
    outputs = op.process_elements(events("a1 x2 b3 x4"))
    assert fused == [2]
    assert general == []
    assert [(o.kind, o.value, o.timestamp) for o in outputs] == [
        ("match", {"s0": [events("a1")[0]], "s1": [events("b3")[0]]}, 3)
    ]
    assert op.flush() == []


def test_the_fused_step_hands_back_an_element_of_the_same_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # x3 and b4 share a time: b4 does not advance the watermark and joins x3 in the key's head;
    # x5 fires both on the general path, and the fused step takes over again from x6
    pattern, _ = compile_or_reject(
        dict(steps=[_step("a"), _step("b", "followed_by")], window=5, skip="no_skip")
    )
    fused: list[int] = []
    general: list[list[int]] = []
    step = CepOperator._fire_head_alone
    fire_key = CepOperator._fire_key

    def counted(self: CepOperator, ks: Any, event: Event, *args: Any) -> Any:
        fused.append(event.id)
        return step(self, ks, event, *args)

    def counted_fire_key(self: CepOperator, ks: Any, *args: Any) -> None:
        head = ks.head
        general.append([e.id for e in head] if isinstance(head, list) else [head.id])
        fire_key(self, ks, *args)

    monkeypatch.setattr(CepOperator, "_fire_head_alone", counted)
    monkeypatch.setattr(CepOperator, "_fire_key", counted_fire_key)
    monkeypatch.setattr(CepOperator, "CHAIN_LOOP", False)  # (a chain's own loop: test_chain_loop)
    op = CepOperator(pattern, timestamp=lambda e: e.ts)
    outputs = op.process_elements(events("a1 x2 x3 b4@3 x5@4 x6@5 x7@6"))
    assert fused == [2, 6]
    assert general == [[3, 4]]
    assert [(o.kind, o.value, o.timestamp) for o in outputs] == [
        ("match", {"s0": [events("a1")[0]], "s1": [events("b4@3")[0]]}, 3)
    ]


def test_a_key_the_fused_step_fired_stays_off_the_schedule_until_the_call_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a followed_by b within 5 ms: x2 takes the key off the schedule, b3 and x4 find it off
    pattern, _ = compile_or_reject(
        dict(steps=[_step("a"), _step("b", "followed_by")], window=5, skip="no_skip")
    )
    parks: list[bool] = []
    park = CepOperator._park

    def counted(self: CepOperator, *args: Any) -> bool:
        parks.append(park(self, *args))
        return parks[-1]

    monkeypatch.setattr(CepOperator, "_park", counted)
    op = CepOperator(pattern, timestamp=lambda e: e.ts)
    op.process_elements(events("a1 x2 b3 x4"))
    assert parks == [True]
    op._check()  # noqa: SLF001  (back on the schedule: at x4, before a1's window timer at 6)
    assert op.next_deadline() == 4


class Stop(BaseException):
    """Not an ``Exception``: a condition raising it is no bad record, it stops the stream."""


def test_an_exception_out_of_the_fused_step_leaves_the_operator_as_the_reference_does() -> None:
    def b_or_stop(e: Event) -> bool:
        if e.id == 3:
            raise Stop
        return bool(e.name == "b")

    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(b_or_stop).within(5)
    ops = [make(pattern, timestamp=lambda e: e.ts) for make in (CepOperator, ReferenceOperator)]
    # a1 waits for a b; x4's watermark fires x3, whose condition stops the stream (b5 is not read)
    _same(*[op.process_elements(events("a1 x2 x3")) for op in ops], ops)
    for op in ops:
        with pytest.raises(Stop):
            op.process_elements(events("x4 b5"))
    # the firing resumes; x4 was buffered and is processed as usual, b6 does not come in time
    _same(*[op.process_elements(events("b6")) for op in ops], ops)
    outputs = [op.flush() for op in ops]
    _same(*outputs, ops)
    assert outputs[0] == [Output("timeout", None, {"a": events("a1")}, 6)]
