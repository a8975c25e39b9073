"""Bad input: a clear exception naming record and problem, or a bad-record output; never a silent drop."""

from __future__ import annotations

from typing import Any

import pytest

from flowcep.pattern import AfterMatchSkipStrategy, ConditionError, FlinkRuntimeException, Pattern
from flowcep.runtime import BadRecord, BadRecordError, Output

from .support import Ev, ab_within, brief, events, is_, operator, run


class Index:
    """An integer-like timestamp (as numpy integers are)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def explode(_: Any) -> Any:
    raise KeyError("ts")


# ---------------------------------------------------------------- timestamps


def test_a_raising_timestamp_extractor_raises_an_error_naming_the_record() -> None:
    op = operator(ab_within(10), timestamp=explode)
    with pytest.raises(BadRecordError) as info:
        op.process_element(Ev("a", 1))
    assert (
        str(info.value) == "bad record a@1 at the timestamp stage: timestamp extractor raised KeyError: 'ts'"
    )
    assert info.value.stage == "timestamp"
    assert info.value.record == Ev("a", 1)
    assert isinstance(info.value.__cause__, KeyError)


def test_a_raising_timestamp_extractor_gives_a_bad_record_output_on_request() -> None:
    op = operator(ab_within(10), timestamp=explode, on_error="side_output")
    assert op.process_element(Ev("a", 1)) == [
        Output(
            "bad_record",
            None,
            BadRecord(Ev("a", 1), "timestamp extractor raised KeyError: 'ts'", "timestamp"),
            None,
        )
    ]
    assert op.stats()["bad_records"] == 1


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("12", "timestamp '12' (str) is not an int of milliseconds"),
        (None, "timestamp None (NoneType) is not an int of milliseconds"),
        (True, "a bool (True) is not a timestamp; expected an int of milliseconds"),
        (1.5, "timestamp 1.5 is not a whole number of milliseconds; expected an int"),
        (float("nan"), "timestamp nan is not a whole number of milliseconds; expected an int"),
        (2**63, "timestamp 9223372036854775808 is outside the 64-bit range of Flink timestamps"),
    ],
)
def test_a_timestamp_that_is_not_an_integer_is_a_bad_record(value: Any, problem: str) -> None:
    op = operator(ab_within(10), timestamp=lambda e: value, on_error="side_output")
    [output] = op.process_element(Ev("a", 1))
    assert output.value == BadRecord(Ev("a", 1), problem, "timestamp")


def test_a_whole_float_timestamp_is_accepted() -> None:
    op = operator(ab_within(10), timestamp=lambda e: float(e.ts))
    assert brief(run(op, events("a1 b2"))) == [("match", "k", "a1 b2", 2)]


def test_an_integer_like_timestamp_is_accepted() -> None:
    op = operator(ab_within(10), timestamp=lambda e: Index(e.ts))
    assert brief(run(op, events("a1 b2"))) == [("match", "k", "a1 b2", 2)]


def test_an_event_without_any_timestamp_is_a_bad_record() -> None:
    op = operator(ab_within(10), timestamp=None)
    with pytest.raises(BadRecordError, match="no timestamp"):
        op.process_element(Ev("a", 1))


def test_a_bad_timestamp_leaves_the_stream_going() -> None:
    op = operator(ab_within(10), timestamp=lambda e: e.ts if e.name != "x" else "?", on_error="side_output")
    outputs = run(op, events("a1 x2 b3"))
    assert brief(outputs) == [("bad_record", None, "timestamp", None), ("match", "k", "a1 b3", 3)]


# ---------------------------------------------------------------- keys


def test_a_raising_key_extractor_raises_an_error_naming_the_record() -> None:
    op = operator(ab_within(10), key_by=lambda e: e.missing)
    with pytest.raises(
        BadRecordError, match=r"^bad record a@1 at the key stage: key extractor failed: AttributeError"
    ):
        op.process_element(Ev("a", 1))


def test_a_raising_key_extractor_gives_a_bad_record_output_with_the_timestamp() -> None:
    op = operator(ab_within(10), key_by=lambda e: e.missing, on_error="side_output")
    [output] = op.process_element(Ev("a", 1))
    assert (output.kind, output.key, output.value.stage, output.timestamp) == ("bad_record", None, "key", 1)


def test_an_unhashable_key_is_a_bad_record() -> None:
    op = operator(ab_within(10), key_by=lambda e: [e.key], on_error="side_output")
    [output] = op.process_element(Ev("a", 1))
    assert output.value.error == "key extractor failed: TypeError: unhashable type: 'list'"


# ---------------------------------------------------------------- conditions


def fragile_b(e: Ev) -> bool:
    if e.value < 0:
        raise ValueError("negative value")
    return e.name == "b"


FRAGILE = Pattern.begin("a").where(is_("a")).followed_by("b").where(fragile_b).within(10)


def test_a_raising_condition_raises_an_error_naming_the_event_and_the_step() -> None:
    op = operator(FRAGILE)
    op.process_element(Ev("a", 1))
    op.process_element(Ev("b", 2, value=-1))
    with pytest.raises(BadRecordError) as info:
        op.process_element(Ev("b", 3))
    assert (
        str(info.value) == "bad record b@2 at pattern step 'b': condition raised ValueError: negative value"
    )
    assert (info.value.stage, info.value.step, info.value.key) == ("condition", "b", "k")
    assert isinstance(info.value.__cause__, ConditionError)


def test_the_error_carries_the_outputs_of_the_failing_call() -> None:
    op = operator(FRAGILE, out_of_orderness=None)
    run(op, [Ev("a", 1, "p"), Ev("b", 2, "p"), Ev("a", 1, "q"), Ev("b", 2, "q", value=-1)], flush=False)
    with pytest.raises(BadRecordError) as info:
        op.process_watermark(5)
    assert brief(info.value.outputs) == [("match", "p", "a1 b2", 2)]


def test_the_failing_call_finishes_its_work_before_raising() -> None:
    op = operator(FRAGILE, out_of_orderness=None)
    run(op, [Ev("a", 1, "q"), Ev("b", 2, "q", value=-1), Ev("a", 1, "p"), Ev("b", 2, "p")], flush=False)
    with pytest.raises(BadRecordError) as info:
        op.process_watermark(5)
    # key q ran first and failed; key p still ran in the same call
    assert brief(info.value.outputs) == [("match", "p", "a1 b2", 2)]
    assert op.process_watermark(6) == []


def test_all_bad_records_of_a_call_are_reported() -> None:
    op = operator(FRAGILE, out_of_orderness=None)
    run(op, [Ev("a", 1), Ev("b", 2, value=-1), Ev("b", 3, value=-2)], flush=False)
    with pytest.raises(BadRecordError, match=r"\(and 1 more bad records in this call\)$") as info:
        op.process_watermark(5)
    assert [b.record for b in info.value.bad_records] == [Ev("b", 2, value=-1), Ev("b", 3, value=-2)]
    assert op.stats()["bad_records"] == 2


def test_after_a_raised_condition_error_the_key_continues_without_the_bad_event() -> None:
    op = operator(FRAGILE)
    run(op, [Ev("a", 1), Ev("b", 2, value=-1)], flush=False)
    with pytest.raises(BadRecordError):
        op.process_element(Ev("b", 3))
    assert brief(run(op, [Ev("x", 4)])) == [("match", "k", "a1 b3", 3)]


def test_a_raising_condition_gives_a_bad_record_output_on_request() -> None:
    op = operator(FRAGILE, on_error="side_output")
    outputs = run(op, [Ev("a", 1), Ev("b", 2, value=-1), Ev("b", 3)])
    assert outputs == [
        Output(
            "bad_record",
            "k",
            BadRecord(Ev("b", 2, value=-1), "condition raised ValueError: negative value", "condition", "b"),
            2,
        ),
        Output("match", "k", {"a": [Ev("a", 1)], "b": [Ev("b", 3)]}, 3),
    ]


def not_x_then_c(e: Ev, ctx: Any) -> bool:
    if e.ts == 5 and ctx.get_events_for_pattern("a")[0].value == 2:
        raise ZeroDivisionError("boom")
    return e.name == "c"


def test_a_condition_error_leaves_the_partial_matches_of_its_key_intact() -> None:
    pattern = (
        Pattern.begin("a")
        .where(is_("a"))
        .not_followed_by("x")
        .where(is_("x"))
        .followed_by("c")
        .where(not_x_then_c)
        .within(100)
    )
    op = operator(pattern, on_error="side_output")
    outputs = run(op, [Ev("a", 1, value=1), Ev("a", 2, value=2), Ev("x", 5), Ev("c", 6)])
    assert brief(outputs) == [
        ("bad_record", "k", "condition", 5),
        ("match", "k", "a1 c6", 6),
        ("match", "k", "a2 c6", 6),
    ]


def test_after_a_raised_condition_error_the_partial_matches_of_its_key_are_intact() -> None:
    pattern = (
        Pattern.begin("a")
        .where(is_("a"))
        .not_followed_by("x")
        .where(is_("x"))
        .followed_by("c")
        .where(not_x_then_c)
        .within(100)
    )
    op = operator(pattern)
    run(op, [Ev("a", 1, value=1), Ev("a", 2, value=2), Ev("x", 5)], flush=False)
    with pytest.raises(BadRecordError, match="bad record x@5 at pattern step 'c'"):
        op.process_element(Ev("c", 6))
    assert brief(run(op, [])) == [("match", "k", "a1 c6", 6), ("match", "k", "a2 c6", 6)]


def test_on_error_must_be_raise_or_side_output() -> None:
    with pytest.raises(ValueError, match="on_error"):
        operator(ab_within(10), on_error="ignore")


def test_process_elements_consumes_every_element_and_then_raises() -> None:
    op = operator(ab_within(10))
    with pytest.raises(BadRecordError) as info:
        op.process_elements([Ev("a", 1), Ev("b", 2), "garbage", Ev("a", 4), Ev("b", 5), Ev("x", 6)])
    assert brief(info.value.outputs) == [("match", "k", "a1 b2", 2), ("match", "k", "a4 b5", 5)]
    assert info.value.record == "garbage"


def test_other_exceptions_propagate_and_the_next_call_finishes_the_interrupted_watermark() -> None:
    skip = AfterMatchSkipStrategy.skip_to_first("b").throw_exception_on_miss()
    pattern = (
        Pattern.begin("a", skip)
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .optional()
        .followed_by("c")
        .where(is_("c"))
    )
    op = operator(pattern, out_of_orderness=None)
    run(
        op, [Ev("a", 1, "p"), Ev("c", 2, "p"), Ev("a", 1, "q"), Ev("b", 2, "q"), Ev("c", 3, "q")], flush=False
    )
    with pytest.raises(FlinkRuntimeException, match="Could not skip to b"):
        op.process_watermark(5)
    assert brief(op.process_watermark(5)) == [("match", "q", "a1 b2 c3", 3)]


class Interrupt(BaseException):
    """Not an ``Exception``: a condition raising it fails the call, as it would fail a Flink job."""


def b_or_interrupt(e: Ev) -> bool:
    if e.name == "boom":
        raise Interrupt
    return bool(e.name == "b")


def interrupting_ab() -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("b").where(b_or_interrupt).within(10)


def test_an_element_that_interrupts_processing_is_consumed_and_the_next_call_goes_on() -> None:
    op = operator(interrupting_ab())
    op.process_elements([Ev("a", 1), Ev("boom", 2)])
    with pytest.raises(Interrupt):
        op.process_element(Ev("b", 3))  # its watermark (2) fires boom
    assert brief(op.flush()) == [("match", "k", "a1 b3", 3)]


def test_an_interrupting_element_is_consumed_but_not_the_next_of_its_timestamp() -> None:
    op = operator(interrupting_ab())
    op.process_elements([Ev("a", 1), Ev("boom", 2), Ev("b", 2)])
    with pytest.raises(Interrupt):
        op.process_element(Ev("x", 3))
    assert brief(op.flush()) == [("match", "k", "a1 b2", 2)]


def test_in_processing_time_an_interrupting_element_is_consumed_and_the_next_call_goes_on() -> None:
    clock = [1]
    op = operator(interrupting_ab(), processing_time=True, clock=lambda: clock[0], comparator=lambda x, y: 0)
    op.process_element(Ev("a", 0))
    clock[0] = 2
    op.process_element(Ev("boom", 0))  # releases a (millisecond 1); boom waits for 3
    clock[0] = 3
    with pytest.raises(Interrupt):
        op.process_element(Ev("b", 0))  # releases boom; b waits for 4
    assert brief(op.flush()) == [("match", "k", "a0 b0", 3)]
