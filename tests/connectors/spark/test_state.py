"""The streaming state path without a JVM: a bucket's processor over a fake Spark handle.

Spark calls ``handleInputRows(bucket, rows, timerValues)`` and ``handleExpiredTimer`` on the
processor; the processor reads and writes one value state and moves one timer. The fake handle
below keeps those in dicts, so the state's bytes and errors can be checked directly.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pyspark.sql import Row

from flowcep import Pattern
from flowcep.connectors.spark import StateFormatError
from flowcep.connectors.spark.chunks import chunk_blob
from flowcep.connectors.spark.matcher import INTERNAL_FIELDS, Matcher
from flowcep.connectors.spark.streaming import STATE_FORMAT, BucketProcessor

FIELDS = ["id", "user", "type", "ms"]
CHUNK = Row("bucket", "events")  # what Spark hands the processor: the bucket's events in chunks


class FakeHandle:
    """One value state per bucket, and the registered timers per bucket."""

    def __init__(self) -> None:
        self.values: dict[int, tuple[Any, ...]] = {}
        self.timers: dict[int, set[int]] = {}
        self.bucket = 0

    def getValueState(self, name: str, schema: str) -> FakeHandle:  # noqa: N802
        return self

    def exists(self) -> bool:
        return self.bucket in self.values

    def get(self) -> tuple[Any, ...] | None:
        return self.values.get(self.bucket)

    def update(self, value: tuple[Any, ...]) -> None:
        self.values[self.bucket] = value

    def clear(self) -> None:
        self.values.pop(self.bucket, None)

    def registerTimer(self, ms: int) -> None:  # noqa: N802
        self.timers.setdefault(self.bucket, set()).add(ms)

    def deleteTimer(self, ms: int) -> None:  # noqa: N802
        self.timers[self.bucket].discard(ms)


class Clock:
    def __init__(self, watermark: int, expiry: int = 0) -> None:
        self.watermark = watermark
        self.expiry = expiry

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802
        return self.watermark

    def getExpiryTimeInMs(self) -> int:  # noqa: N802
        return self.expiry


def ab_pattern() -> Pattern:
    return (
        Pattern.begin("a")
        .where(lambda e: e.type == "a")
        .followed_by("b")
        .where(lambda e: e.type == "b")
        .within(100)
    )


def default_matcher(pattern: Pattern, fields: list[str], timestamp: str) -> Matcher:
    """The matcher of ``detect(df, pattern, key="user", timestamp=timestamp)`` over ``fields``."""
    return Matcher(
        pattern,
        user_fields=fields,
        key_names=["user"],
        timestamp=timestamp,
        mode="default",
        select=None,
        output_fields=INTERNAL_FIELDS,
        on_invalid="output",
        recursive=False,
    )


def processor(pattern: Pattern, handle: FakeHandle, buckets: int = 4) -> BucketProcessor:
    p = BucketProcessor(default_matcher(pattern, FIELDS, "ms"), 0, None, buckets)
    p.init(handle)  # type: ignore[arg-type]
    return p


def feed(
    p: BucketProcessor, handle: FakeHandle, bucket: int, watermark: int, *rows: tuple[Any, ...]
) -> list[Row]:
    handle.bucket = bucket
    spark_rows = [CHUNK(bucket, chunk_blob([(i, user, kind, ms, ms) for i, user, kind, ms in rows]))]
    return list(p.handleInputRows((bucket,), iter(spark_rows), Clock(watermark)))


def fire(p: BucketProcessor, handle: FakeHandle, bucket: int, watermark: int) -> list[Row]:
    """The bucket's timer at ``watermark`` fires; then Spark deletes it, as pyspark does."""
    handle.bucket = bucket
    out = list(p.handleExpiredTimer((bucket,), Clock(watermark), Clock(watermark, watermark)))
    handle.deleteTimer(watermark)
    return out


def test_keys_of_one_bucket_share_one_state_row_and_one_timer():
    handle = FakeHandle()
    p = processor(ab_pattern(), handle)
    assert feed(p, handle, 1, 0, (1, "ann", "a", 1_000), (2, "bob", "a", 1_050)) == []
    fmt, buckets, timer, snapshot, latest = handle.values[1]
    assert (fmt, buckets, timer, latest) == (STATE_FORMAT, 4, 1_100, None)  # ann's window ends first
    assert handle.timers == {1: {1_100}}
    timeouts = fire(p, handle, 1, 1_120)
    assert [(r.key, r.kind, r.timestamp) for r in timeouts] == [("ann", "timeout", 1_100)]
    assert handle.values[1][2] == 1_150 and handle.timers == {1: {1_150}}  # bob's, still open


def test_a_bucket_whose_keys_hold_nothing_has_no_state_and_no_timer():
    handle = FakeHandle()
    p = processor(ab_pattern(), handle)
    feed(p, handle, 2, 0, (1, "ann", "a", 1_000))
    matches = feed(p, handle, 2, 1_000, (2, "ann", "b", 1_010))
    assert [(r.key, r.kind) for r in matches] == [("ann", "match")]
    # as in Flink, the window timer of ann's partial match (1000 + 100) stays registered
    assert handle.values[2][2] == 1_100 and handle.timers == {2: {1_100}}
    assert fire(p, handle, 2, 1_100) == []
    assert handle.values == {} and handle.timers == {2: set()}


def test_state_of_another_pattern_is_refused_and_the_other_buckets_keep_theirs():
    handle = FakeHandle()
    feed(processor(ab_pattern(), handle), handle, 0, 0, (1, "ann", "a", 1_000))
    feed(processor(ab_pattern(), handle), handle, 3, 0, (2, "cid", "a", 1_000))
    other = Pattern.begin("a").where(lambda e: e.type == "a").followed_by("c").where(lambda e: e.type == "c")
    p = processor(other, handle)
    with pytest.raises(
        StateFormatError, match="cannot restore bucket 0: snapshot was taken with a different pattern"
    ):
        feed(p, handle, 0, 0, (3, "ann", "c", 1_010))
    # the failed call wrote nothing: bucket 3 (and bucket 0) still hold what they held
    assert handle.values[3][0] == STATE_FORMAT and handle.values[0][0] == STATE_FORMAT
    matches = feed(processor(ab_pattern(), handle), handle, 3, 1_000, (4, "cid", "b", 1_020))
    assert [(r.key, r.kind) for r in matches] == [("cid", "match")]


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (
            (STATE_FORMAT, 4, None, b"garbage", None),
            "cannot restore bucket 0: not a flowcep operator snapshot",
        ),
        ((99, 4, None, b"", None), "bucket 0 holds state of layout 99; this flowcep reads layout 1"),
        ((STATE_FORMAT, 8, None, b"", None), "written with buckets=8, this query has buckets=4"),
    ],
)
def test_unreadable_state_is_a_clear_error(stored, message):
    handle = FakeHandle()
    handle.values[0] = stored
    with pytest.raises(StateFormatError, match=message):
        feed(processor(ab_pattern(), handle), handle, 0, 0, (1, "ann", "a", 1_000))


def test_state_ttl_drops_only_the_idle_key_of_a_bucket():
    handle = FakeHandle()
    matcher_pattern = (
        Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(lambda e: e.type == "b")
    )
    p = processor(matcher_pattern, handle)
    p.ttl_ms = 1_000
    feed(p, handle, 0, 0, (1, "ann", "a", 1_000), (2, "bob", "a", 1_900))
    assert pickle.loads(handle.values[0][4]) == {"ann": 1_000, "bob": 1_900}
    assert handle.values[0][2] == 2_000  # the timer: ann's expiry
    assert fire(p, handle, 0, 2_000) == []  # ann dropped, silently
    assert pickle.loads(handle.values[0][4]) == {"bob": 1_900}
    matches = feed(p, handle, 0, 2_000, (3, "ann", "b", 2_100), (4, "bob", "b", 2_200))
    assert [(r.key, r.kind) for r in matches] == [("bob", "match")]


def test_the_events_json_is_the_json_of_the_whole_document():
    import json
    from datetime import UTC, datetime
    from decimal import Decimal

    from flowcep.connectors.spark.values import event_class

    fields = ("id", "user", "amount", "when", "note")
    matcher = default_matcher(ab_pattern(), list(fields), "id")
    event = event_class(fields)
    a = tuple.__new__(event, (1, "zoë", Decimal("2.50"), datetime(2026, 3, 2, 9, 30, tzinfo=UTC), None, 1))
    b = tuple.__new__(event, (2, "zoë", float("nan"), None, 'say "hi"', 2))
    value = {"a": [a], "b": [a, b], "c": []}
    assert matcher.events_json(value, "why") == (
        '{"a": [{"id": 1, "user": "zoë", "amount": 2.5, "when": "2026-03-02T09:30:00+00:00", "note": null}], '
        '"b": [{"id": 1, "user": "zoë", "amount": 2.5, "when": "2026-03-02T09:30:00+00:00", "note": null}, '
        '{"id": 2, "user": "zoë", "amount": null, "when": null, "note": "say \\"hi\\""}], "c": [], "reason": "why"}'
    )
    assert json.loads(matcher.events_json(value))["b"][1]["amount"] is None


def _thresholds_seen() -> tuple[Pattern, list[tuple[int, ...]]]:
    """a then b, the b condition noting the collector's thresholds it runs under."""
    import gc

    seen: list[tuple[int, ...]] = []

    def b(e: Any) -> bool:
        seen.append(gc.get_threshold())
        return bool(e.type == "b")

    return Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(b).within(100), seen


def test_a_bucket_runs_with_the_collectors_thresholds_raised_and_put_back_after():
    import gc

    from flowcep.runtime.gctuning import THROUGHPUT_THRESHOLDS

    pattern, seen = _thresholds_seen()
    handle = FakeHandle()
    p = processor(pattern, handle)
    before = gc.get_threshold()
    out = feed(p, handle, 1, 0, (1, "ann", "a", 1_000), (2, "ann", "b", 1_010))
    assert [r.kind for r in out] == ["match"]
    assert seen and set(seen) == {THROUGHPUT_THRESHOLDS}
    assert gc.get_threshold() == before


def test_a_batch_key_runs_with_the_collectors_thresholds_raised_and_put_back_after():
    import gc

    from flowcep.runtime.gctuning import THROUGHPUT_THRESHOLDS

    pattern, seen = _thresholds_seen()
    m = default_matcher(pattern, FIELDS, "ms")
    make = m.event_class
    rows = [
        tuple.__new__(make, (1, "ann", "a", 1_000, 1_000)),
        tuple.__new__(make, (2, "ann", "b", 1_010, 1_010)),
    ]
    before = gc.get_threshold()
    out: list[Any] = []
    m.run_key(("ann",), rows, out)
    assert [r[1] for r in out] == ["match"]
    assert seen and set(seen) == {THROUGHPUT_THRESHOLDS}
    assert gc.get_threshold() == before
