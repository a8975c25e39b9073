"""A stop: a condition raises an exception that is not an ``Exception`` (as ``KeyboardInterrupt``
is not) in the middle of a key's firing. It is no bad record: it propagates at once, the element
it stopped on is dropped, and the next call finishes the firing (docs/runtime.md §6). The
outputs the stopped call had made (lost with it), then those of the calls after it, are those of
a run without the stop where that element is a bad record instead: here, with the other elements
of its time, those of an uninterrupted run over the other elements. Through ``CepOperator`` and
``ReferenceOperator``, for keys whose shared buffer keeps the paths of matches (skip strategies
that prune by them) and for those whose buffer keeps none."""

from __future__ import annotations

from typing import Any

import pytest
from core.helpers import Event, named
from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import CepOperator, Output
from flowcep.runtime.reference import ReferenceOperator
from runtime.test_fast_paths import _step

LONG_MAX = 2**63 - 1


class Stop(BaseException):
    """Not an ``Exception``: a condition raising it is no bad record, it stops the stream."""


def _stopping_once(stop_id: int | None) -> Any:
    """A condition that accepts every element, but raises ``Stop`` the first time it sees the
    element ``stop_id`` (it is not asked again: the stop drops the element)."""
    seen: set[int] = set()

    def accept(e: Event) -> bool:
        if e.id == stop_id and e.id not in seen:
            seen.add(e.id)
            raise Stop
        return True

    return accept


def _a_then_bs(skip: Any, condition: Any) -> Pattern:
    """``a``, then strictly one or more ``b``, within 3 ms; every element is an ``a`` and a ``b``."""
    return Pattern.begin("a", skip).where(condition).next("b").where(condition).one_or_more().within(3)


def _recorded_calls(make: type[CepOperator]) -> type[CepOperator]:
    """``make`` keeping the output list of its call in progress (``recorded``): what a call
    that stopped had made before the stop (lost with it)."""

    class Recorded(make):  # type: ignore[valid-type,misc]
        recorded: list[Output]

        def _elements(self, events: Any, timestamp: Any, out: list[Output]) -> None:
            self.recorded = out
            super()._elements(events, timestamp, out)

        def _resume_firing(self, out: list[Output]) -> None:
            self.recorded = out
            super()._resume_firing(out)

        def _fire(self, watermark: int, out: list[Output]) -> None:
            self.recorded = out
            super()._fire(watermark, out)

    return Recorded


def _ids(outputs: list[Output]) -> list[tuple[str, dict[str, list[int]], int | None]]:
    return [
        (o.kind, {page: [e.id for e in events] for page, events in o.value.items()}, o.timestamp)
        for o in outputs
    ]


# four elements of one time: all stop in the flush that fires them
A1_TO_A4 = [Event("a", ts=2, id=i) for i in range(1, 5)]

OPERATORS = [CepOperator, ReferenceOperator]


def _stopped_flush(
    make: type[CepOperator], skip: Any, stop_id: int, out_of_orderness: int | None = 0
) -> tuple[list[Output], list[Output], CepOperator]:
    """The four elements, then ``flush()``, which stops on element ``stop_id``, then ``flush()``
    again: what the stopped flush had made (lost with it), what the second flush gives."""
    op: Any = _recorded_calls(make)(
        _a_then_bs(skip, _stopping_once(stop_id)),
        key_by=lambda e: 0,
        timestamp="ts",
        out_of_orderness=out_of_orderness,
    )
    assert op.process_elements(A1_TO_A4) == []
    with pytest.raises(Stop):
        op.flush()
    lost = op.recorded
    op._check()  # noqa: SLF001
    return lost, op.flush(), op


def _uninterrupted(skip: Any, events: list[Event]) -> list[Output]:
    op = CepOperator(_a_then_bs(skip, _stopping_once(None)), key_by=lambda e: 0, timestamp="ts")
    return op.process_elements(events) + op.flush()


@pytest.mark.parametrize("make", OPERATORS)
def test_a_stop_on_the_third_of_four_elements_of_one_time_drops_it_and_the_next_flush_finishes(
    make: type[CepOperator],
) -> None:
    # skip_to_last("a") prunes by the paths of matches: the key's buffer keeps them. The stop on
    # a3 comes after a1 a2 were matched ({a1, b2} came out with the stopped call); the next flush
    # goes on with a4, then the final watermark (the timeouts at 2 + 3, and {a2, b4}, held back
    # behind the partial match of a1 until it timed out). Before the fix the stopped firing had
    # let the buffer forget how many elements of time 2 it numbered: a4 took a1's id and the
    # second flush raised KeyError (2, 0).
    skip = AfterMatchSkipStrategy.skip_to_last("a")
    lost, resumed, op = _stopped_flush(make, skip, 3)
    assert _ids(lost) == [("match", {"a": [1], "b": [2]}, 2)]
    assert _ids(resumed) == [
        ("match", {"a": [1], "b": [2, 4]}, 2),
        ("match", {"a": [2], "b": [4]}, LONG_MAX),
        ("timeout", {"a": [1], "b": [2, 4]}, 5),
        ("timeout", {"a": [2], "b": [4]}, 5),
        ("timeout", {"a": [4]}, 5),
    ]
    assert lost + resumed == _uninterrupted(skip, [e for e in A1_TO_A4 if e.id != 3])
    assert not op.has_state()


@pytest.mark.parametrize("make", OPERATORS)
def test_a_stop_on_the_last_element_of_a_firing_leaves_the_key_due_until_the_next_call_finishes_it(
    make: type[CepOperator],
) -> None:
    # the stop on a4 ends the firing before the key is advanced to the final watermark: the key
    # stays due at time 2, where it fired, and the next flush times its partial matches out
    skip = AfterMatchSkipStrategy.no_skip()
    lost, resumed, op = _stopped_flush(make, skip, 4)
    assert _ids(lost) == [
        ("match", {"a": [1], "b": [2]}, 2),
        ("match", {"a": [1], "b": [2, 3]}, 2),
        ("match", {"a": [2], "b": [3]}, 2),
    ]
    assert _ids(resumed) == [
        ("timeout", {"a": [1], "b": [2, 3]}, 5),
        ("timeout", {"a": [2], "b": [3]}, 5),
        ("timeout", {"a": [3]}, 5),
    ]
    assert lost + resumed == _uninterrupted(skip, A1_TO_A4[:3])
    assert not op.has_state()


SKIPS = {
    "skip_to_last_a": AfterMatchSkipStrategy.skip_to_last("a"),
    "skip_to_last_b": AfterMatchSkipStrategy.skip_to_last("b"),
    "skip_to_first_a": AfterMatchSkipStrategy.skip_to_first("a"),
    "skip_past_last_event": AfterMatchSkipStrategy.skip_past_last_event(),
    "no_skip": AfterMatchSkipStrategy.no_skip(),
}


@pytest.mark.parametrize("make", OPERATORS)
@pytest.mark.parametrize("skip", list(SKIPS.values()), ids=list(SKIPS))
# (with the operator's own watermark a1's stop comes while the batch is read: see the next test;
# with watermarks from the host, out_of_orderness None, all four stop in the flush)
@pytest.mark.parametrize(
    ("stop_id", "out_of_orderness"), [(2, 0), (3, 0), (4, 0), (1, None), (2, None), (3, None), (4, None)]
)
def test_a_stop_on_any_element_of_a_firing_gives_the_uninterrupted_outputs_without_it(
    make: type[CepOperator], skip: Any, stop_id: int, out_of_orderness: int | None
) -> None:
    lost, resumed, op = _stopped_flush(make, skip, stop_id, out_of_orderness)
    assert lost + resumed == _uninterrupted(skip, [e for e in A1_TO_A4 if e.id != stop_id])
    op._check()  # noqa: SLF001
    assert not op.has_state()


@pytest.mark.parametrize("make", OPERATORS)
def test_a_stop_while_a_batch_is_read_drops_that_element_and_reads_no_further(
    make: type[CepOperator],
) -> None:
    # with the operator's own watermark (out_of_orderness=0) a1 makes the watermark 1: no element
    # before time 2 can come, so a key without state asks the start condition whether a1 could
    # start a match before it gives the key any; the stop comes from there, out of
    # process_elements. a1 is dropped and a2 a3 a4 are not read: fed again, they match as in a
    # run without a1.
    skip = AfterMatchSkipStrategy.skip_to_last("a")
    op = make(_a_then_bs(skip, _stopping_once(1)), key_by=lambda e: 0, timestamp="ts")
    with pytest.raises(Stop):
        op.process_elements(A1_TO_A4)
    assert not op.has_state()
    outputs = op.process_elements(A1_TO_A4[1:]) + op.flush()
    assert outputs == _uninterrupted(skip, A1_TO_A4[1:])
    assert _ids(outputs) == [
        ("match", {"a": [2], "b": [3]}, 2),
        ("match", {"a": [2], "b": [3, 4]}, 2),
        ("match", {"a": [3], "b": [4]}, LONG_MAX),
        ("timeout", {"a": [2], "b": [3, 4]}, 5),
        ("timeout", {"a": [3], "b": [4]}, 5),
        ("timeout", {"a": [4]}, 5),
    ]


class _LoneHeads(CepOperator):
    """``CepOperator`` with its loop for many keys due at once on every interpreter (on CPython
    only by default)."""

    __slots__ = ()
    LONE_HEADS = True


@pytest.mark.parametrize("make", [CepOperator, ReferenceOperator, _LoneHeads])
def test_the_key_that_stopped_goes_first_when_the_firing_resumes_as_it_was_due_first(
    make: type[CepOperator],
) -> None:
    # key 0 (made first) is due at 4, the window timer of a1; key 1 at 4 too, its b4. The
    # watermark of 5 fires key 0: a1 times out, then x5 stops it, which leaves b5. Resumed, key 0
    # goes on first, with b5, and then key 1, as without the stop; key 0 stays due at its timer,
    # not at b5's time, where key 1 would have gone first.
    def a_b_or_stop(name: str) -> Any:
        def cond(e: Event) -> bool:
            if e.name == "x":
                raise Stop
            return e.name == name

        return cond

    pattern = Pattern.begin("a").where(a_b_or_stop("a")).followed_by("b").where(a_b_or_stop("b")).within(3)
    op: Any = _recorded_calls(make)(
        pattern, key_by=lambda e: int(e.volume), timestamp="ts", out_of_orderness=None
    )
    key0 = [Event("a", ts=1, id=1), Event("a", ts=3, id=3), Event("x", ts=5, id=5), Event("b", ts=5, id=6)]
    key1 = [Event("a", ts=2, id=2, volume=1.0), Event("b", ts=4, id=4, volume=1.0)]
    assert op.process_elements(sorted(key0 + key1, key=lambda e: e.id)) == []
    op.recorded = []
    with pytest.raises(Stop):
        op.process_watermark(5)
    assert [(o.key, *t) for o, t in zip(op.recorded, _ids(op.recorded))] == [(0, "timeout", {"a": [1]}, 4)]
    resumed = op.process_watermark(5)
    assert [(o.key, *t) for o, t in zip(resumed, _ids(resumed))] == [
        (0, "match", {"a": [3], "b": [6]}, 5),
        (1, "match", {"a": [2], "b": [4]}, 4),
    ]
    op._check()  # noqa: SLF001


def _raising_at(stop_id: int, exception: type[BaseException]) -> Any:
    """``named``, as a condition factory whose conditions raise ``exception`` whenever they see
    the element ``stop_id`` (each time: a dropped element is not asked again)."""

    def condition(*names: str) -> Any:
        plain = named(*names)

        def cond(e: Event) -> bool:
            if e.id == stop_id:
                raise exception
            return bool(plain(e))

        return cond

    return condition


def _call(op: Any, call: Any) -> tuple[list[Output], bool]:
    """``call(op)``'s outputs, or, when it stops, those it had made before it did, and True."""
    op.recorded = []
    try:
        return call(op), False
    except Stop:
        op._check()
        return op.recorded, True


def _per_key(outputs: list[Output]) -> dict[Any, list[Output]]:
    keyed: dict[Any, list[Output]] = {}
    for o in outputs:
        keyed.setdefault(o.key, []).append(o)
    return keyed


# per element: its name, how many ms after the previous one, its key, and whether a watermark
# of the host follows it (out_of_orderness None)
stream_of_keys = st.lists(
    st.tuples(st.sampled_from("abcx"), st.sampled_from([0, 0, 1, 2]), st.integers(0, 2), st.booleans()),
    min_size=1,
    max_size=14,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(
    pattern_specs(),
    stream_of_keys,
    st.integers(0, 13),
    st.sampled_from([None, 0, 1]),
    st.sampled_from([CepOperator, ReferenceOperator, _LoneHeads]),
)
# a2, of a key without state, stops while process_element takes it (is it inert?): dropped, but
# its watermark (0) stands, and the next call fires it: a1 is processed at 0, where a partial
# match registers no window timer, and it never times out (at the final watermark a1 would)
@example(
    dict(steps=[_step("a"), _step("a", "next")], window=3, skip="no_skip"),
    [("a", 0, 0, False), ("a", 1, 1, False)],
    1,
    0,
    CepOperator,
)
def test_a_stop_on_any_element_gives_what_a_bad_record_there_gives(
    spec: dict[str, Any],
    stream: list[tuple[str, int, int, bool]],
    stop_at: int,
    out_of_orderness: int | None,
    make: type[CepOperator],
) -> None:
    # every element goes in by process_element, each call followed by a host's watermark or not;
    # the element stop_id stops whichever call first asks a condition about it. The run to
    # compare with is not interrupted: there a condition raises ValueError on that element, a bad
    # record, which leaves the key's partial matches as they were, as the stop does, and whose
    # time is still one the key advances to. Per key, the outputs of all calls (those a stopped
    # call had made included) are the same, but for the bad record.
    stop_id = stop_at % len(stream) + 1
    pattern, _ = compile_or_reject(
        spec, condition=_raising_at(stop_id, Stop), negation_condition=_raising_at(stop_id, Stop)
    )
    bad, _ = compile_or_reject(
        spec, condition=_raising_at(stop_id, ValueError), negation_condition=_raising_at(stop_id, ValueError)
    )
    options: dict[str, Any] = dict(
        key_by=lambda e: int(e.volume),
        timestamp="ts",
        out_of_orderness=out_of_orderness,
        on_error="side_output",
    )
    stopped: Any = _recorded_calls(make)(pattern, **options)
    uninterrupted = make(bad, **options)
    got: list[Output] = []
    expected: list[Output] = []
    ts = 0
    for i, (name, gap, key, watermark) in enumerate(stream, start=1):
        ts += gap
        event = Event(name, ts=ts, id=i, volume=float(key))
        got += _call(stopped, lambda op: op.process_element(event))[0]  # noqa: B023  (called at once)
        expected += uninterrupted.process_element(event)
        if watermark and out_of_orderness is None:
            got += _call(stopped, lambda op: op.process_watermark(ts))[0]  # noqa: B023
            expected += uninterrupted.process_watermark(ts)
    stops = True
    while stops:  # a stopped flush resumes at the next
        outputs, stops = _call(stopped, lambda op: op.flush())
        got += outputs
    expected += uninterrupted.flush()
    assert _per_key(got) == _per_key([o for o in expected if o.kind != "bad_record"])
    stopped._check()
