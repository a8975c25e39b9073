"""Bounded partial matches: a limit per key and per operator, with a policy past it.

Memory and work are measured by counts (partial matches, shared-buffer entries, window timers,
condition calls, traced bytes), never by time.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from flowcep.pattern import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import (
    CEP,
    CepOperator,
    DroppedPartialMatch,
    OutputTag,
    PartialMatchLimit,
    PartialMatchLimitError,
)

from .support import Ev, ab_within, abc_within, brief, is_, operator, run

HOUR = 3_600_000


def starts(n: int, key: str = "k", first: int = 1) -> list[Ev]:
    """An ``a`` every millisecond: each starts a partial match of ``ab_within``."""
    return [Ev("a", t, key) for t in range(first, first + n)]


def limited(pattern: Pattern, policy: str = "drop_oldest", **bounds: Any) -> CepOperator:
    return operator(pattern, partial_match_limit=PartialMatchLimit(policy=policy, **bounds))


def test_drop_oldest_keeps_the_latest_partial_matches_of_a_key() -> None:
    op = limited(ab_within(100), per_key=3)
    out = run(op, [*starts(6), Ev("b", 7)])
    assert sorted(t for kind, _, t, _ in brief(out) if kind == "match") == ["a4 b7", "a5 b7", "a6 b7"]
    assert [(o.value.start_timestamp, o.value.dropped_at) for o in out if o.kind == "dropped"] == [
        (1, 4),
        (2, 5),
        (3, 6),
    ]


def test_drop_newest_keeps_the_earliest_partial_matches_of_a_key() -> None:
    op = limited(ab_within(100), "drop_newest", per_key=3)
    out = run(op, [*starts(6), Ev("b", 7)])
    assert sorted(t for kind, _, t, _ in brief(out) if kind == "match") == ["a1 b7", "a2 b7", "a3 b7"]
    assert [(o.value.start_timestamp, o.value.dropped_at) for o in out if o.kind == "dropped"] == [
        (4, 4),
        (5, 5),
        (6, 6),
    ]


def test_fail_raises_naming_the_key_and_the_limit() -> None:
    op = limited(ab_within(100), "fail", per_key=3)
    run(op, starts(4), flush=False)
    with pytest.raises(PartialMatchLimitError, match=r"key 'k' holds 4 partial matches, more than 3") as info:
        op.process_watermark(4)
    assert (info.value.key, info.value.key_count) == ("k", 4)


def test_a_dropped_partial_match_carries_its_key_events_and_times() -> None:
    op = limited(abc_within(100), per_key=1)
    out = run(op, [Ev("a", 1), Ev("b", 2), Ev("a", 3)], flush=False) + op.process_watermark(3)
    [dropped] = [o for o in out if o.kind == "dropped"]
    assert dropped.key == "k" and dropped.timestamp == 3
    assert dropped.value == DroppedPartialMatch("k", {"a": [Ev("a", 1)], "b": [Ev("b", 2)]}, 1, 3, "key")
    assert op.stats()["dropped_partial_matches"] == 1
    assert op.stats()["partial_matches"] == 1


def test_the_operator_limit_drops_the_oldest_of_all_keys() -> None:
    op = limited(ab_within(100), per_operator=2)
    out = run(op, [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("a", 3, "y"), Ev("b", 4, "x"), Ev("b", 5, "y")])
    assert [(o.key, o.value.start_timestamp, o.value.limit) for o in out if o.kind == "dropped"] == [
        ("x", 1, "operator")
    ]
    assert [t for kind, _, t, _ in brief(out) if kind == "match"] == ["a2 b5", "a3 b5"]


def test_the_operator_limit_with_drop_newest_refuses_the_key_that_went_over() -> None:
    op = limited(ab_within(100), "drop_newest", per_operator=2)
    out = run(op, [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("a", 3, "y"), Ev("b", 4, "x"), Ev("b", 5, "y")])
    assert [(o.key, o.value.start_timestamp) for o in out if o.kind == "dropped"] == [("y", 3)]
    assert [t for kind, _, t, _ in brief(out) if kind == "match"] == ["a1 b4", "a2 b5"]


def test_the_operator_limit_counts_partial_matches_that_timed_out_as_gone() -> None:
    events = [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("c", 20, "z"), Ev("a", 21, "x"), Ev("a", 22, "y")]
    out = run(limited(ab_within(10), per_operator=2), events)
    assert sorted((kind, key, t) for kind, key, t, _ in brief(out)) == [
        ("timeout", "x", "a1"),
        ("timeout", "x", "a21"),
        ("timeout", "y", "a2"),
        ("timeout", "y", "a22"),
    ]


def test_the_pull_api_sends_dropped_partial_matches_to_their_side_output() -> None:
    result = CEP.pattern(
        starts(5), ab_within(100), key_by="key", timestamp="ts", max_partial_matches_per_key=2
    ).select(lambda m: m)
    assert list(result) == []
    dropped = list(result.get_side_output(CEP.DROPPED_PARTIAL_MATCHES))
    assert [(d.key, d.match, d.dropped_at) for d in dropped] == [
        ("k", {"a": [Ev("a", 1)]}, 3),
        ("k", {"a": [Ev("a", 2)]}, 4),
        ("k", {"a": [Ev("a", 3)]}, 5),
    ]
    assert result.stats()["dropped_partial_matches"] == 3


def test_side_output_dropped_partial_matches_changes_the_tag() -> None:
    tag = OutputTag("shed")
    stream = CEP.pattern(starts(3), ab_within(100), timestamp="ts", max_partial_matches=1)
    result = stream.side_output_dropped_partial_matches(tag).select(lambda m: m)
    assert list(result) == []
    assert [d.start_timestamp for d in result.get_side_output(tag)] == [1, 2]
    assert list(result.get_side_output(CEP.DROPPED_PARTIAL_MATCHES)) == []


@pytest.mark.parametrize(
    "bounds",
    [{"per_key": 0}, {"per_operator": -1}, {"per_key": 2.5}, {"policy": "drop_random", "per_key": 1}],
)
def test_a_bad_limit_is_refused(bounds: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="partial"):
        PartialMatchLimit(**bounds)


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_newest", "fail"])
def test_a_limit_never_reached_changes_nothing(policy: str) -> None:
    rnd = random.Random(7)
    pattern = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_next())
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .one_or_more()
        .followed_by("c")
        .where(is_("c"))
        .within(30)
    )
    events = [Ev(rnd.choice("abcx"), t, rnd.choice("kl")) for t in range(1, 400)]
    plain = run(operator(pattern), events)
    bounded = run(limited(pattern, policy, per_key=10_000, per_operator=20_000), events)
    assert brief(bounded) == brief(plain)


def test_a_snapshot_restores_the_counts_the_limit_goes_by() -> None:
    op = limited(ab_within(100), per_operator=3)
    run(op, [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("a", 3, "y")], flush=False)
    restored = limited(ab_within(100), per_operator=3)
    restored.restore(op.snapshot())
    out = restored.process_element(Ev("a", 4, "z")) + restored.process_watermark(4)
    assert [(o.key, o.value.start_timestamp) for o in out if o.kind == "dropped"] == [("x", 1)]


def test_the_count_of_dropped_partial_matches_survives_a_snapshot() -> None:
    op = limited(ab_within(100), per_key=2)
    out = run(op, starts(4), flush=False) + op.process_watermark(4)
    assert [o.value.start_timestamp for o in out if o.kind == "dropped"] == [1, 2]
    assert op.stats()["dropped_partial_matches"] == 2
    restored = limited(ab_within(100), per_key=2)
    restored.restore(op.snapshot())
    assert restored.stats()["dropped_partial_matches"] == 2
    out = restored.process_element(Ev("a", 5)) + restored.process_watermark(5)
    assert [o.value.start_timestamp for o in out if o.kind == "dropped"] == [3]
    assert restored.stats()["dropped_partial_matches"] == 3


def test_dropping_releases_the_shared_buffer_entries_of_the_partial_match() -> None:
    # skip_to_next prunes by paths: the key keeps a reference-counted SharedBuffer
    pattern = (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_next())
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .one_or_more()
        .followed_by("c")
        .where(is_("c"))
        .within(HOUR)
    )
    op = limited(pattern, per_key=4)
    events = [Ev("a" if t % 3 == 0 else "b", t) for t in range(1, 301)]
    run(op, events, flush=False)
    ks = op._keys["k"]
    assert op.stats()["partial_matches"] == 4
    # every entry and event left belongs to a partial match left
    reachable = {
        entry
        for run_ in ks.state.queue
        if run_.previous_entry is not None
        for path in ks.buffer.extract_patterns(run_.previous_entry, run_.version)
        for entries in path.values()
        for entry in entries
    }
    assert ks.buffer.event_count() == len(reachable)
    assert ks.buffer.entry_count() <= 2 * len(reachable)


def _steady_limit_run(skip: Any, n: int, limit: int, every: int, trace: Any = None) -> list[tuple[int, ...]]:
    """A start every ms under a one-hour window, ``limit`` partial matches per key: at every
    ``every`` events, (partial matches, shared-buffer entries, window timers, condition calls
    since the last checkpoint, and with ``trace`` (the tracemalloc module) traced bytes)."""
    calls = [0]

    def b_seen_by_each_run(e: Ev, ctx: Any) -> bool:
        calls[0] += 1  # an iterative condition is asked once per partial match and event
        return e.name == "b"

    pattern = Pattern.begin("a", skip).where(is_("a")).followed_by("b").where(b_seen_by_each_run).within(HOUR)
    op = CepOperator(pattern, timestamp=lambda e: e.ts, partial_match_limit=PartialMatchLimit(per_key=limit))
    figures = []
    if trace is not None:
        trace.start()
    try:
        for t in range(1, n + 1):
            op.process_element(Ev("a", t))
            if t % every == 0:
                stats = op.stats()
                figure = (
                    stats["partial_matches"],
                    stats["shared_buffer_entries"],
                    len(op._keys[None].timers),
                    calls[0],
                )
                figures.append(figure if trace is None else (*figure, trace.get_traced_memory()[0]))
                calls[0] = 0
    finally:
        if trace is not None:
            trace.stop()
    return figures


SKIPS = pytest.mark.parametrize(
    "skip",
    [AfterMatchSkipStrategy.no_skip(), AfterMatchSkipStrategy.skip_to_next()],
    ids=["pathless buffer", "reference-counted buffer"],
)


@SKIPS
def test_a_start_every_millisecond_under_a_one_hour_window_keeps_state_and_work_flat(skip: Any) -> None:
    # 12,000 starts, limit 50: unbounded, the key would hold 12,000 partial matches (the full
    # hour, 3.6 million, is benchmarks/partial_limit.py)
    figures = _steady_limit_run(skip, 12_000, 50, 2_000)
    # partial matches, shared-buffer entries and window timers: the limit's, at every checkpoint
    assert [f[:3] for f in figures] == [(50, 50, 50)] * 6
    # work per event: the b condition was asked once per partial match and event, 50 a time
    assert [f[3] for f in figures[1:]] == [2_000 * 50] * 5


@SKIPS
def test_a_start_every_millisecond_under_a_one_hour_window_keeps_memory_flat(skip: Any) -> None:
    tracemalloc = pytest.importorskip("tracemalloc", reason="PyPy has no tracemalloc")
    figures = _steady_limit_run(skip, 12_000, 50, 2_000, tracemalloc)
    # traced memory: the same at every checkpoint after the first, within a few small objects
    traced = [f[4] for f in figures[1:]]
    assert max(traced) - min(traced) < 2_048, traced
