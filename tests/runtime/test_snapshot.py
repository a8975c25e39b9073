"""Operator snapshots: versioned, deterministic bytes that restore to an identical continuation."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep.pattern import AfterMatchSkipStrategy, Pattern, WithinType
from flowcep.runtime import LONG_MAX, CepOperator, Output, SnapshotError
from flowcep.runtime.snapshot import FORMAT_VERSION, MAGIC, pack, unpack

from .support import Ev, a_not_followed_by_b, ab_within, abc_within, brief, events, is_, operator, run

PATTERNS = {
    "abc within 10": lambda: abc_within(10),
    "a not followed by b within 8": lambda: a_not_followed_by_b(8),
    "a b+ c skip past last within 12": lambda: (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .one_or_more()
        .followed_by("c")
        .where(is_("c"))
        .within(12)
    ),
    "a any b, no window": lambda: Pattern.begin("a").where(is_("a")).followed_by_any("b").where(is_("b")),
    # skip_to_first prunes by the paths of matches: its keys keep the full shared buffer
    "a b+ c skip to first b within 12": lambda: (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_first("b"))
        .where(is_("a"))
        .followed_by_any("b")
        .where(is_("b"))
        .one_or_more()
        .followed_by("c")
        .where(is_("c"))
        .within(12)
    ),
}


def test_a_snapshot_starts_with_magic_and_format_version() -> None:
    data = operator(ab_within(10)).snapshot()
    assert data[:8] == MAGIC == b"FLOWCEP\x00"
    assert int.from_bytes(data[8:10], "big") == FORMAT_VERSION == 4


def test_restore_continues_with_identical_output() -> None:
    stream = events("a1 b2 a3 x5 c6 b8 c9 a20 b21")
    whole = run(operator(abc_within(10)), stream)

    first = operator(abc_within(10))
    before = run(first, stream[:4], flush=False)
    second = operator(abc_within(10))
    second.restore(first.snapshot())
    after = run(second, stream[4:])
    assert before + after == whole
    assert brief(whole) == [
        ("match", "k", "a1 b2 c6", 6),
        ("match", "k", "a3 b8 c9", 9),
        ("timeout", "k", "a20 b21", 30),
    ]


def test_restore_brings_back_counters_and_watermark() -> None:
    op = operator(ab_within(10))
    run(op, events("a1 b2 a5 x9"), flush=False)
    restored = operator(ab_within(10))
    restored.restore(op.snapshot())
    assert restored.stats() == op.stats()
    assert restored.current_watermark == 8


def test_equal_states_give_equal_bytes() -> None:
    stream = events("a1 b2 a3 x5 c6")
    one, two = operator(abc_within(10)), operator(abc_within(10))
    run(one, stream, flush=False)
    run(two, stream, flush=False)
    assert one.snapshot() == two.snapshot()


def test_a_restored_operator_snapshots_to_the_same_bytes() -> None:
    op = operator(abc_within(10))
    run(op, events("a1 b2 a3 x5 c6 a7"), flush=False)
    data = op.snapshot()
    restored = operator(abc_within(10))
    restored.restore(data)
    assert restored.snapshot() == data


def test_restoring_a_snapshot_of_another_pattern_is_refused() -> None:
    data = operator(abc_within(10)).snapshot()
    with pytest.raises(SnapshotError, match="snapshot was taken with a different pattern"):
        operator(abc_within(11)).restore(data)


def test_a_different_condition_is_a_different_pattern() -> None:
    data = operator(Pattern.begin("a").where(lambda e: e.value > 10)).snapshot()
    with pytest.raises(SnapshotError, match="different pattern"):
        operator(Pattern.begin("a").where(lambda e: e.value > 20)).restore(data)


def test_the_same_pattern_built_again_restores() -> None:
    op = operator(abc_within(10))
    run(op, events("a1 b2 x4"), flush=False)
    data = op.snapshot()
    restored = operator(abc_within(10))  # the pattern built again: other condition objects
    restored.restore(data)
    assert restored.has_state()
    assert restored.snapshot() == data
    assert brief(run(restored, events("c6"))) == [("match", "k", "a1 b2 c6", 6)]


def test_bytes_that_are_not_a_snapshot_are_refused() -> None:
    with pytest.raises(SnapshotError, match="not a flowcep operator snapshot"):
        operator(ab_within(10)).restore(b"\x80\x05hello world, this is not a snapshot at all......")


# 1: the buffer's events still held [event, count]; 2: keys without a skip strategy kept a full
# buffer, not their runs' partial matches; 5: not written yet
@pytest.mark.parametrize("version", [2, 5])
def test_a_snapshot_of_another_format_version_is_refused(version: int) -> None:
    data = bytearray(operator(ab_within(10)).snapshot())
    data[8:10] = version.to_bytes(2, "big")
    with pytest.raises(
        SnapshotError,
        match=f"unsupported flowcep snapshot format version {version}; this flowcep reads versions 3 and 4",
    ):
        operator(ab_within(10)).restore(bytes(data))


def _with_version(data: bytes, version: int) -> bytes:
    return data[:8] + version.to_bytes(2, "big") + data[10:]


def test_a_version_3_header_on_six_counters_is_refused() -> None:
    # version 3 has five counters, version 4 six (the dropped partial matches)
    data = operator(ab_within(10)).snapshot()
    with pytest.raises(SnapshotError, match="corrupt flowcep snapshot payload: unexpected layout"):
        operator(ab_within(10)).restore(_with_version(data, 3))


def test_a_version_4_header_on_five_counters_is_refused() -> None:
    data = bytes.fromhex(_WRITTEN_BEFORE["abc"])  # version 3
    with pytest.raises(SnapshotError, match="corrupt flowcep snapshot payload: unexpected layout"):
        operator(abc_within(10), out_of_orderness=2).restore(_with_version(data, 4))


def test_a_corrupt_payload_is_refused() -> None:
    data = operator(ab_within(10)).snapshot()
    with pytest.raises(SnapshotError, match="corrupt"):
        operator(ab_within(10)).restore(data[:-5])


def test_an_event_time_snapshot_does_not_restore_into_processing_time() -> None:
    data = operator(ab_within(10)).snapshot()
    with pytest.raises(
        SnapshotError, match="taken in event-time mode, this operator runs in processing-time"
    ):
        operator(ab_within(10), processing_time=True, clock=lambda: 0).restore(data)


def test_restore_replaces_the_current_state() -> None:
    empty = operator(ab_within(10)).snapshot()
    op = operator(ab_within(10))
    run(op, events("a1 a2"), flush=False)
    op.restore(empty)
    assert not op.has_state()
    assert op.flush() == []


def test_a_processing_time_operator_restores() -> None:
    now = [5]
    op = operator(ab_within(10), processing_time=True, clock=lambda: now[0])
    op.process_element(Ev("a", 0))
    restored = operator(ab_within(10), processing_time=True, clock=lambda: now[0])
    restored.restore(op.snapshot())
    now[0] = 9
    assert brief(restored.process_element(Ev("b", 0))) == [("match", "k", "a0 b0", 9)]


# ---------------------------------------------------------------- property: split anywhere


event_lists = st.lists(
    st.tuples(st.sampled_from("abcx"), st.integers(0, 6), st.sampled_from("pq"), st.integers(0, 3)),
    max_size=40,
).map(lambda raw: _timed(raw))


def _timed(raw: list[tuple[str, int, str, int]]) -> list[Ev]:
    """Mostly increasing timestamps with some disorder (up to 3 ms back)."""
    out, t = [], 0
    for name, step, key, back in raw:
        t += step
        out.append(Ev(name, max(0, t - back), key))
    return out


def _split_run(
    make: object, stream: list[Ev], split: int, ooo: int
) -> tuple[list[Output], list[Output], CepOperator]:
    first = operator(make(), out_of_orderness=ooo)  # type: ignore[operator]
    before = run(first, stream[:split], flush=False)
    data = first.snapshot()
    second = operator(make(), out_of_orderness=ooo)  # type: ignore[operator]
    second.restore(data)
    assert second.snapshot() == data
    after = run(second, stream[split:], flush=False)
    return before, after, second


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(PATTERNS)),
    stream=event_lists,
    split=st.integers(0, 40),
    ooo=st.integers(0, 3),
)
def test_snapshot_and_restore_at_any_point_gives_identical_output(
    name: str, stream: list[Ev], split: int, ooo: int
) -> None:
    make = PATTERNS[name]
    split = min(split, len(stream))
    straight = operator(make(), out_of_orderness=ooo)
    whole = run(straight, stream, flush=False)
    before, after, restored = _split_run(make, stream, split, ooo)
    assert before + after == whole
    # same state, same bytes: whether or not it went through a snapshot
    assert restored.snapshot() == straight.snapshot()
    assert restored.flush() == straight.flush()


# ---------------------------------------------------------------- across processes

_SCRIPT = textwrap.dedent(
    """
    import hashlib, sys
    sys.path.insert(0, sys.argv[1])
    from runtime.support import Ev, operator, run, abc_within
    op = operator(abc_within(50), out_of_orderness=5)
    names = "abcx"
    run(op, [Ev(names[i * 7 % 4], i, f"key{i % 5}") for i in range(60)], flush=False)
    print(hashlib.sha256(op.snapshot()).hexdigest())
    """
)


def test_snapshot_bytes_do_not_depend_on_the_hash_seed() -> None:
    tests_dir = str(Path(__file__).resolve().parents[1])
    digests = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run(
            [sys.executable, "-c", _SCRIPT, tests_dir], env=env, capture_output=True, text=True, check=True
        )
        digests.add(result.stdout.strip())
    assert len(digests) == 1
    # and the same bytes as in this process
    op = operator(abc_within(50), out_of_orderness=5)
    names = "abcx"
    run(op, [Ev(names[i * 7 % 4], i, f"key{i % 5}") for i in range(60)], flush=False)
    assert digests == {hashlib.sha256(op.snapshot()).hexdigest()}


def test_a_fresh_operator_has_a_small_snapshot() -> None:
    assert len(CepOperator(ab_within(10)).snapshot()) < 200


def test_the_window_timers_of_an_emptied_key_survive_snapshot_and_restore() -> None:
    # the match a1 is released at watermark 2 and empties the key; its window timer at 11 stays
    # (as in Flink) and releases the pending match a5 at watermark 11, not at a5's own timer 15
    def pattern() -> Pattern:
        a_not_b = Pattern.begin("a").where(is_("a")).not_followed_by("b").where(is_("b"))
        return a_not_b.within(1, WithinType.PREVIOUS_AND_CURRENT).within(10)

    op = operator(pattern(), out_of_orderness=None)
    op.process_element(Ev("a", 1))
    assert brief(op.process_watermark(2)) == [("match", "k", "a1", 2)]
    restored = operator(pattern(), out_of_orderness=None)
    restored.restore(op.snapshot())
    assert restored.has_state() and restored.next_deadline() == 11
    restored.process_element(Ev("a", 5))
    assert restored.process_watermark(5) == []
    assert brief(restored.process_watermark(11)) == [("match", "k", "a5", 11)]


def test_a_snapshot_taken_before_timers_outlived_their_key_restores() -> None:
    op = operator(abc_within(10), out_of_orderness=None)
    op.process_elements(events("a1 b2"))
    op.process_watermark(2)
    data = op.snapshot()
    old = pack(op.fingerprint, unpack(data, op.fingerprint)[:5])  # no list of timer-only keys
    restored = operator(abc_within(10), out_of_orderness=None)
    restored.restore(old)
    assert restored.snapshot() == data
    assert brief(restored.process_watermark(11)) == [("timeout", "k", "a1 b2", 11)]


# ---------------------------------------------------------------- bytes written by earlier flowcep

# Snapshots (format version 3) taken by flowcep before the operator was split into modules,
# with the outputs the operator that took them gave at flush: restored now, they give the same.
_WRITTEN_BEFORE = dict(
    line.split() for line in (Path(__file__).parent / "data" / "snapshots_v3.txt").read_text().splitlines()
)


def _skip_to_first_a_plus_b() -> Pattern:
    return (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_first("b"))
        .where(is_("a"))
        .one_or_more()
        .followed_by("b")
        .where(is_("b"))
        .within(10)
    )


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        # keys p and q with buffered elements and partial matches; one buffer without paths
        (
            "abc",
            lambda: operator(abc_within(10), out_of_orderness=2),
            [("match", "q", "a2 b8 c9", 9), ("timeout", "p", "a1 b3", 11), ("timeout", "p", "a9", 19)],
        ),
        # key q emptied at watermark 3, its window timer kept (an idle key); p's match pending
        (
            "anb",
            lambda: operator(a_not_followed_by_b(5), out_of_orderness=None),
            [("match", "p", "a1", LONG_MAX)],
        ),
        # a skip strategy that reads paths: a shared buffer per key
        (
            "skip",
            lambda: operator(_skip_to_first_a_plus_b(), out_of_orderness=1),
            [("timeout", "k", "a7", 17)],
        ),
        # processing time: b0 and a0 wait in their millisecond, then run in the comparator's order
        (
            "pt",
            lambda: operator(
                ab_within(10),
                processing_time=True,
                clock=lambda: 20,
                comparator=lambda x, y: x.value - y.value,
            ),
            [("match", "p", "a0 b0", 10)],
        ),
    ],
)
def test_a_snapshot_written_before_restores_and_continues(name: str, make: Any, expected: list[Any]) -> None:
    op = make()
    op.restore(bytes.fromhex(_WRITTEN_BEFORE[name]))
    assert brief(op.flush()) == expected


def test_a_version_3_snapshot_is_written_again_as_version_4_with_no_drops_counted() -> None:
    old = bytes.fromhex(_WRITTEN_BEFORE["abc"])
    assert int.from_bytes(old[8:10], "big") == 3
    op = operator(abc_within(10), out_of_orderness=2)
    op.restore(old)
    counters = op.stats()
    again = op.snapshot()
    assert int.from_bytes(again[8:10], "big") == 4
    assert unpack(again, op.fingerprint)[2] == (*unpack(old, op.fingerprint)[2], 0)
    restored = operator(abc_within(10), out_of_orderness=2)
    restored.restore(again)
    assert restored.stats() == counters
    assert brief(restored.flush()) == [
        ("match", "q", "a2 b8 c9", 9),
        ("timeout", "p", "a1 b3", 11),
        ("timeout", "p", "a9", 19),
    ]
