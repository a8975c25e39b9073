"""The operator's written-out checks against their references: random patterns and streams give
the same outputs and the same state through ``CepOperator`` and ``ReferenceOperator`` (whose
``fast_paths_enabled`` is False), and every call leaves the key queues and the schedule in their
invariants (``CepOperator._check``)."""

from __future__ import annotations

from typing import Any

import attrs
from core.helpers import Event
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowcep.runtime import CepOperator, Output
from flowcep.runtime.reference import ReferenceOperator
from flowcep.runtime.snapshot import dumps

MODES = ("event", "event+comparator", "processing", "processing+comparator")


def _elements(
    then: list[str], min_size: int
) -> st.SearchStrategy[list[tuple[str, int, int, int, int, str, int]]]:
    """Elements as ``(name, time step, how far behind the stream's time, key, price, what follows
    it, how far behind the stream's time that watermark is)``: watermarks up to beyond a window
    behind, so that keys buffer elements past their window timers."""
    return st.lists(
        st.tuples(
            st.sampled_from("abcx"),
            st.sampled_from([0, 0, 1, 2, 5]),
            st.sampled_from([0, 0, 1, 3]),
            st.integers(0, 1),
            st.integers(0, 2),
            st.sampled_from(then),
            st.integers(0, 12),
        ),
        min_size=min_size,
        max_size=40,
    )


# frequent watermarks (keys fire often, a few elements each), or rare ones in longer streams
# (keys buffer many timestamps, and a firing runs through many)
elements = st.one_of(
    _elements(["nothing", "watermark", "watermark", "snapshot"], 0),
    _elements(["nothing"] * 8 + ["watermark", "snapshot"], 10),
)


def _by_price(a: Event, b: Event) -> int:
    return int(b.price - a.price)


def _operators(pattern: Any, mode: str, out_of_orderness: int | None, now: list[int]) -> list[CepOperator]:
    ops = [
        make(
            pattern,
            key_by=lambda e: e.volume,
            timestamp=lambda e: e.ts,
            out_of_orderness=out_of_orderness,
            comparator=_by_price if mode.endswith("comparator") else None,
            processing_time=mode.startswith("processing"),
            clock=lambda: now[0],
        )
        for make in (CepOperator, ReferenceOperator)
    ]
    assert ops[0].fast_paths_enabled and not ops[1].fast_paths_enabled
    return ops


def _step(name: str, contiguity: str | None = None) -> dict[str, Any]:
    """A step of ``pattern_specs``: one event named ``name``."""
    return dict(
        names=(name,),
        quant="one",
        inner="relaxed",
        optional_loop=False,
        greedy=False,
        contiguity=contiguity,
        negation=None,
    )


def _state(op: CepOperator) -> bytes:
    """The operator's snapshot without the arrival counters of the buffer all keys share, which
    the reference forgets at other times (those of timestamps no element can come at any more)."""
    return dumps(attrs.evolve(op._snapshot_record(), event_counts=None).payload())  # noqa: SLF001


def _same(fast: list[Output], reference: list[Output], ops: list[CepOperator]) -> None:
    assert fast == reference
    for op in ops:
        op._check()  # noqa: SLF001
    assert ops[0].next_deadline() == ops[1].next_deadline()
    assert ops[0].stats() == ops[1].stats()
    assert _state(ops[0]) == _state(ops[1])


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(pattern_specs(), elements, st.sampled_from(MODES), st.sampled_from([None, None, 0, 2]))
# a key fired while it buffers an element past its new window timer: due at the timer (4), not at
# the element (10)
@example(
    dict(steps=[_step("a"), _step("b", "followed_by")], window=3, skip="no_skip"),
    [("a", 1, 0, 0, 0, "nothing", 0), ("x", 9, 0, 0, 0, "watermark", 8), ("x", 0, 0, 0, 0, "watermark", 5)],
    "event",
    None,
)
# an element at the last of a key's several buffered timestamps (1, 3, 5): buffered beside the
# element of 5, not of 3
@example(
    dict(steps=[_step("a"), _step("b", "followed_by")], window=None, skip="no_skip"),
    [
        ("a", 1, 0, 0, 0, "nothing", 0),
        ("x", 2, 0, 0, 0, "nothing", 0),
        ("x", 2, 0, 0, 0, "nothing", 0),
        ("x", 0, 0, 0, 0, "nothing", 0),
    ],
    "event",
    None,
)
def test_the_fast_paths_give_the_outputs_and_state_of_their_references(
    spec: dict[str, Any],
    stream: list[tuple[str, int, int, int, int, str, int]],
    mode: str,
    out_of_orderness: int | None,
) -> None:
    pattern, _ = compile_or_reject(spec)
    now = [0]
    ops = _operators(pattern, mode, out_of_orderness, now)
    t = 0
    for i, (name, step, behind, key, price, then, lag) in enumerate(stream, start=1):
        t += step
        now[0] = t
        event = Event(name=name, ts=max(t - behind, 1), id=i, volume=float(key), price=float(price))
        _same(*[op.process_element(event) for op in ops], ops)
        if then == "watermark":
            _same(*[op.process_watermark(t - lag) for op in ops], ops)
        elif then == "snapshot":  # and restored: the operators go on from their snapshots
            for op in ops:
                op.restore(op.snapshot())
    now[0] = t + 100
    _same(*[op.flush() for op in ops], ops)


def test_a_watermark_that_fires_several_keys_at_once_fires_them_alike_both_ways() -> None:
    # three keys due by one watermark: the firing of many keys (by due time, then first
    # appearance), not the one-key shortcut
    pattern, _ = compile_or_reject(
        dict(steps=[_step("a"), _step("b", "followed_by")], window=5, skip="no_skip")
    )
    ops = _operators(pattern, "event", None, [0])
    stream = [
        Event("a", ts=1, id=1, volume=0.0),
        Event("a", ts=1, id=2, volume=1.0),
        Event("x", ts=3, id=3, volume=0.0),
        Event("b", ts=2, id=4, volume=2.0),
        Event("b", ts=4, id=5, volume=1.0),
    ]
    for e in stream:
        _same(*[op.process_element(e) for op in ops], ops)
    outputs = [op.process_watermark(10) for op in ops]
    _same(*outputs, ops)
    assert [(o.kind, o.key, o.timestamp) for o in outputs[0]] == [("timeout", 0.0, 6), ("match", 1.0, 4)]
