"""The loop of a chain pattern (``flowcep.runtime.chainloop``): ordered input of one key whose
pattern is single steps joined by ``next`` or ``followed_by``, runs grouped by step. Random
chains and mostly ordered streams, fed in batches, give the same outputs, the same state and the
same snapshots through ``CepOperator`` with the loop, without it, and ``ReferenceOperator``."""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from core.helpers import Event, events, named
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import AfterMatchSkipStrategy, Pattern, WithinType
from flowcep.runtime import CepOperator, Output
from flowcep.runtime.chainloop import KEPT_TIMERS, ChainLoop, chain_of
from flowcep.runtime.reference import ReferenceOperator
from runtime.test_fast_paths import _same
from runtime.test_fused_step import BAD, BAD_PRICE, _key, _timestamp
from runtime.test_generated_step import _abc


class LoopOperator(CepOperator):
    """``CepOperator`` with a chain pattern's loop, whatever its default."""

    __slots__ = ()
    CHAIN_LOOP = True


class Stop(BaseException):
    """Not a bad record: a stop, which propagates (as a Java exception fails a Flink job)."""


STOP_PRICE = 4.0  # an event with this price makes the conditions raise Stop, once per operator


def _condition(name: str, stopped: set[int]) -> Any:
    """The event is named ``name``; a ``BAD_PRICE`` event raises (a bad record), a
    ``STOP_PRICE`` event stops the stream the first time a condition sees it."""
    plain = named(name)

    def cond(e: Event) -> bool:
        if e.price == BAD_PRICE:
            raise ValueError("bad price")
        if e.price == STOP_PRICE and e.id not in stopped:
            stopped.add(e.id)
            raise Stop()
        return bool(plain(e))

    return cond


# a chain step: (its event's name, how it joins the one before, times(n), consecutive)
chain_steps = st.tuples(
    st.sampled_from("abcx"),
    st.sampled_from(["next", "followed_by"]),
    st.sampled_from([1, 1, 1, 2, 3]),
    st.booleans(),
)


def _chain(steps: list[tuple[str, str, int, bool]], window: int | None, stopped: set[int]) -> Pattern:
    pattern: Any = None
    for i, (name, join, times, consecutive) in enumerate(steps):
        step = f"s{i}"
        if pattern is None:
            pattern = Pattern.begin(step)
        else:
            pattern = getattr(pattern, join)(step)
        pattern = pattern.where(_condition(name, stopped))
        if times > 1:
            pattern = pattern.times(times)
            if consecutive:
                pattern = pattern.consecutive()
    if window is not None:
        pattern = pattern.within(window)
    return pattern  # type: ignore[no-any-return]


def _operators(
    steps: list[tuple[str, str, int, bool]], window: int | None, timeouts: bool, ooo: int, keys: int
) -> list[CepOperator]:
    ops = []
    for make, loop in ((LoopOperator, True), (LoopOperator, False), (ReferenceOperator, False)):
        op = make(
            _chain(steps, window, set()),
            key_by=_key(keys),
            timestamp=_timestamp,
            out_of_orderness=ooo,
            on_error="side_output",
            timeout_handling=timeouts,
        )
        if not loop:
            op._chain = None  # noqa: SLF001  (the operator's fused step without the loop)
        ops.append(op)
    return ops


def _feed(ops: list[CepOperator], batch: list[Event]) -> list[list[Output] | str]:
    """Each operator's outputs for ``batch``, or "stopped" if a condition stopped it."""
    results: list[list[Output] | str] = []
    for op in ops:
        try:
            results.append(op.process_elements(batch))
        except Stop:
            results.append("stopped")
    return results


def _all_same(results: list[list[Output] | str], ops: list[CepOperator]) -> None:
    assert results[0] == results[2]
    assert results[1] == results[2]
    _same(results[0], results[2], [ops[0], ops[2]])  # type: ignore[arg-type]
    _same(results[1], results[2], [ops[1], ops[2]])  # type: ignore[arg-type]
    assert ops[0].snapshot() == ops[1].snapshot() == ops[2].snapshot()


# (name, time step, what is bad about it (None: nothing; "stop": a stop), key, how many elements
# this batch ends after (0: it goes on), snapshot after the batch)
ordered_streams = st.lists(
    st.tuples(
        st.sampled_from("abcx"),
        st.sampled_from([1, 1, 1, 1, 2, 0, -1]),
        st.sampled_from([None] * 25 + sorted(BAD) + ["stop"]),
        st.sampled_from([0, 0, 0, 0, 1]),
        st.sampled_from([0, 0, 0, 1, 5]),
        st.booleans(),
    ),
    min_size=8,
    max_size=80,
)


def _cases(steps: Any, examples: int) -> Any:
    """The property tests' cases: ``steps``, then the window, whether timeouts are reported, the
    stream, the out-of-orderness and the number of keys."""
    return lambda test: settings(
        max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )(
        given(
            steps,
            st.sampled_from([None, 1, 3, 6, 10]),
            st.booleans(),
            ordered_streams,
            st.sampled_from([0, 0, 0, 1]),
            st.sampled_from([1, 1, 2]),
        )(test)
    )


@_cases(st.lists(chain_steps, min_size=2, max_size=4), 300)
def test_chains_give_the_outputs_state_and_snapshots_of_the_reference(
    steps: list[tuple[str, str, int, bool]],
    window: int | None,
    timeouts: bool,
    stream: list[tuple[str, int, str | None, int, int, bool]],
    ooo: int,
    keys: int,
) -> None:
    _check(_operators(steps, window, timeouts, ooo, keys), stream)


@_cases(st.tuples(st.sampled_from("abcx"), st.sampled_from("abcx"), st.sampled_from("abcx")), 200)
def test_fan_outs_give_the_outputs_state_and_snapshots_of_the_reference(
    names: tuple[str, str, str],
    window: int | None,
    timeouts: bool,
    stream: list[tuple[str, int, str | None, int, int, bool]],
    ooo: int,
    keys: int,
) -> None:
    # begin(a).followed_by_any(b).followed_by_any(c): runs that branch (the fan-out shape)
    steps = [
        (names[0], "", 1, False),
        (names[1], "followed_by_any", 1, False),
        (names[2], "followed_by_any", 1, False),
    ]
    _check(_operators(steps, window, timeouts, ooo, keys), stream)


def _check(ops: list[CepOperator], stream: list[tuple[str, int, str | None, int, int, bool]]) -> None:
    """Feed ``stream`` to ``ops`` in its batches, comparing after each (and after restoring
    snapshots where it says so), then flush them."""
    assert isinstance(ops[0]._chain, ChainLoop)  # noqa: SLF001  (every such pattern is a chain)
    t = 0
    batch: list[Event] = []
    for i, (name, step, bad, key, ends, snapshot) in enumerate(stream, start=1):
        t = max(t + step, 1)
        price = STOP_PRICE if bad == "stop" else BAD[bad] if bad else 0.0
        batch.append(Event(name=name, ts=t, id=i, volume=float(key), price=price))
        if ends and len(batch) >= ends:
            _all_same(_feed(ops, batch), ops)
            batch = []
            if snapshot:  # and restored: the operators go on from their snapshots
                for op in ops:
                    op.restore(op.snapshot())
    _all_same(_feed(ops, batch), ops)
    flushed = []
    for op in ops:
        for _ in range(len(stream) + 1):  # a stop in the last firing: flush again
            try:
                flushed.append(op.flush())
                break
            except Stop:
                continue
    assert flushed[0] == flushed[2]
    assert flushed[1] == flushed[2]


def test_a_chain_of_one_key_runs_in_the_loop_and_reports_its_matches_and_timeouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a -> b -> c within 10 ms: a1 b2 a3 c4 matches (a1 b2 c4); a3 and a7 both take b9; x14
    # moves the watermark to 13, where a3's run times out; a7's times out at the end (17)
    calls: list[int] = []
    loop = ChainLoop.loop

    def counted(self: ChainLoop) -> Any:
        calls.append(1)
        return loop(self)

    monkeypatch.setattr(ChainLoop, "loop", counted)
    op = LoopOperator(_abc(), timestamp=lambda e: e.ts)
    a1, b2, a3, c4, x5, x6, a7, x8, b9, x14 = events("a1 b2 a3 c4 x5 x6 a7 x8 b9 x14")
    outputs = op.process_elements([a1, b2, a3, c4, x5, x6, a7, x8, b9, x14])
    assert calls == [1]  # the second element took the loop, which went on to the end
    assert [(o.kind, o.value, o.timestamp) for o in outputs] == [
        ("match", {"a": [a1], "b": [b2], "c": [c4]}, 4),
        ("timeout", {"a": [a3], "b": [b9]}, 13),
    ]
    assert [(o.kind, o.value, o.timestamp) for o in op.flush()] == [
        ("timeout", {"a": [a7], "b": [b9]}, 17),
    ]


def test_a_chain_keeps_every_run_that_waits_at_a_step():
    # followed_by: both a1 and a2 wait for b; b3 moves both on; c4 completes both, oldest first
    op = LoopOperator(_abc(), timestamp=lambda e: e.ts)
    a1, a2, b3, c4, x5 = events("a1 a2 b3 c4 x5")
    outputs = op.process_elements([a1, a2, b3, c4, x5])
    assert [(o.kind, o.value, o.timestamp) for o in outputs] == [
        ("match", {"a": [a1], "b": [b3], "c": [c4]}, 4),
        ("match", {"a": [a2], "b": [b3], "c": [c4]}, 4),
    ]


def test_a_next_step_ends_the_runs_that_do_not_take_the_event():
    # a next b: a1 x2 ends a1's run; a3 b4 matches
    pattern = Pattern.begin("a").where(named("a")).next("b").where(named("b"))
    op = LoopOperator(pattern, timestamp=lambda e: e.ts)
    a1, x2, a3, b4, x5 = events("a1 x2 a3 b4 x5")
    outputs = op.process_elements([a1, x2, a3, b4, x5])
    assert [(o.kind, o.value) for o in outputs] == [("match", {"a": [a3], "b": [b4]})]


def test_a_times_step_lists_its_events_under_its_name():
    # a next b times(2) consecutive: a1 b2 b3 matches with both b under "b"
    pattern = Pattern.begin("a").where(named("a")).next("b").where(named("b")).times(2).consecutive()
    op = LoopOperator(pattern, timestamp=lambda e: e.ts)
    a1, b2, b3, x4 = events("a1 b2 b3 x4")
    outputs = op.process_elements([a1, b2, b3, x4])
    assert [(o.kind, o.value) for o in outputs] == [("match", {"a": [a1], "b": [b2, b3]})]


def test_a_condition_that_raises_in_the_loop_makes_a_bad_record_and_leaves_the_runs():
    # b's condition raises on b3 (priced 9): a bad record naming step "b"; a1 still waits for b
    def is_b(e: Event) -> bool:
        if e.price == 9.0:
            raise ValueError("bad price")
        return e.name == "b"

    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(is_b).within(10)
    op = LoopOperator(pattern, timestamp=lambda e: e.ts, on_error="side_output")
    a1, x2, b3, b4, x5 = events("a1 x2 b3$9 b4 x5")
    outputs = op.process_elements([a1, x2, b3, b4, x5])
    assert [o.kind for o in outputs] == ["bad_record", "match"]
    assert outputs[0].value.step == "b"
    assert outputs[0].value.record is b3
    assert outputs[1].value == {"a": [a1], "b": [b4]}


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (
            Pattern.begin("a").where(named("a")).followed_by_any("b").where(named("b")),
            "followed_by_any other than",
        ),
        (
            Pattern.begin("a").where(named("a")).not_followed_by("b").where(named("b")).followed_by("c"),
            "other edges",
        ),
        (Pattern.begin("a").where(named("a")).followed_by("b").where(named("b")).optional(), "other edges"),
        (Pattern.begin("a").where(named("a")).one_or_more().next("b").where(named("b")), "a TAKE"),
        (
            Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
            .where(named("a"))
            .next("b")
            .where(named("b")),
            "a skip strategy",
        ),
        (
            Pattern.begin("a")
            .where(named("a"))
            .next("b")
            .where(named("b"))
            .within(5, WithinType.PREVIOUS_AND_CURRENT),
            "windows per step",
        ),
        (
            Pattern.begin("a").where(named("a")).next("b").where(lambda e, ctx: e.name == "b"),
            "not a chain step",
        ),
        (Pattern.begin("a").where(named("a")), "not a chain of at least two steps"),
    ],
)
def test_patterns_that_are_not_chains_say_why(pattern: Pattern, why: str) -> None:
    op = LoopOperator(pattern, timestamp=lambda e: e.ts)
    reason = chain_of(op.nfa)
    assert isinstance(reason, str)
    assert why in reason
    assert op._chain is None  # noqa: SLF001


def test_a_long_stream_leaves_the_state_and_snapshots_of_the_operator_without_the_loop():
    # 600 elements of one key, a -> b -> c within 5 ms, 50 per call: long enough for the shared
    # buffer to forget the arrival counters of past times several times over
    import random

    rnd = random.Random(7)
    stream = [Event(name=rnd.choice("abcx"), ts=i, id=i) for i in range(1, 601)]
    ops = [LoopOperator(_abc(), timestamp=lambda e: e.ts) for _ in range(2)]
    ops[1]._chain = None  # noqa: SLF001
    for i in range(0, len(stream), 50):
        assert ops[0].process_elements(stream[i : i + 50]) == ops[1].process_elements(stream[i : i + 50])
        assert ops[0].snapshot() == ops[1].snapshot()
    assert ops[0].flush() == ops[1].flush()


def test_a_traceback_through_the_loop_shows_its_lines():
    def b_or_stop(e: Event) -> bool:
        if e.id == 3:
            raise Stop
        return bool(e.name == "b")

    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(b_or_stop)
    op = LoopOperator(pattern, timestamp=lambda e: e.ts)
    with pytest.raises(Stop) as info:
        op.process_elements(events("a1 x2 x3 x4"))
    frames = traceback.extract_tb(info.tb)
    [loop] = [f for f in frames if f.filename.startswith("<flowcep generated loop")]
    assert loop.line == "x1 = F1(h)"


def test_a_long_call_keeps_few_window_timers():
    # one call of 4,000 elements, a new a -> b run every other ms: each registers a window timer;
    # the loop drops those the watermark passed once it holds more than KEPT_TIMERS
    seen: list[int] = []
    watched: list[CepOperator] = []

    def is_a(e: Event) -> bool:
        if watched:
            seen.append(len(watched[0]._keys[None].timers))  # noqa: SLF001  (as the loop keeps them)
        return e.name == "a"

    pattern = Pattern.begin("a").where(is_a).followed_by("b").where(named("b")).within(10)
    op = LoopOperator(pattern, timestamp=lambda e: e.ts)
    reference = LoopOperator(pattern, timestamp=lambda e: e.ts)
    reference._chain = None  # noqa: SLF001
    stream = [Event(name="ab"[i % 2], ts=i, id=i) for i in range(1, 4001)]
    expected = reference.process_elements(stream)
    watched.append(op)
    assert op.process_elements(stream) == expected
    assert 0 < max(seen) <= KEPT_TIMERS + 1
    assert op.snapshot() == reference.snapshot()
