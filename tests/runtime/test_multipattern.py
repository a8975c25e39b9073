"""The multi-pattern operator: named, versioned patterns over one stream, changed while it runs
(docs/multi-pattern.md)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from flowcep import CEP, MultiPatternOperator, Pattern, PatternOutput, PatternUpdate, RichIterativeCondition
from flowcep.runtime import BadRecordError, CepOperator, RuntimeContext, SnapshotError

from .support import Ev, ab_within, abc_within, is_


def multi(patterns: Any = (), **kwargs: Any) -> MultiPatternOperator:
    kwargs.setdefault("timestamp", "ts")
    kwargs.setdefault("key_by", "key")
    return MultiPatternOperator(patterns, **kwargs)


def brief(outputs: list[PatternOutput]) -> list[tuple[Any, ...]]:
    """("match", "ab", 1, key, "a1 b2", ts); late: ("late", None, None, key, "x3", 3)."""
    result = []
    for o in outputs:
        if o.kind in ("match", "timeout"):
            text = " ".join(f"{e.name}{e.ts}" for events in o.value.values() for e in events)
        elif o.kind == "late":
            text = f"{o.value.name}{o.value.ts}"
        else:
            text = o.value.stage
        result.append((o.kind, o.pattern, o.version, o.key, text, o.timestamp))
    return result


def push(op: MultiPatternOperator, spec: str, key: str = "k") -> list[PatternOutput]:
    """Push ``"a1 b2 c4"`` (name + timestamp) one by one."""
    out: list[PatternOutput] = []
    for token in spec.split():
        out.extend(op.process_element(Ev(token[0], int(token[1:]), key)))
    return out


def a_then_c(window: int = 10) -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("c").where(is_("c")).within(window)


# ---------------------------------------------------------------- results carry name and version


def test_each_result_carries_its_patterns_name_and_version() -> None:
    op = multi({"ab": (1, ab_within()), "ac": (7, a_then_c())})
    out = push(op, "a1 b2 c3 x4") + op.flush()
    assert brief(out) == [
        ("match", "ab", 1, "k", "a1 b2", 2),
        ("match", "ac", 7, "k", "a1 c3", 3),
    ]


def test_a_late_element_comes_out_once_and_belongs_to_no_pattern() -> None:
    op = multi({"ab": (1, ab_within()), "ac": (1, a_then_c())})
    out = push(op, "a5 b6 x7 a2")
    assert brief(out) == [("match", "ab", 1, "k", "a5 b6", 6), ("late", None, None, "k", "a2", 2)]
    assert op.stats()["late"] == 1
    assert [s["late"] for s in op.stats()["patterns"].values()] == [0, 0]


def test_an_element_without_a_key_is_one_bad_record() -> None:
    op = multi(
        {"ab": (1, ab_within()), "ac": (1, a_then_c())}, key_by=lambda e: e.missing, on_error="side_output"
    )
    out = op.process_element(Ev("a", 1))
    assert brief(out) == [("bad_record", None, None, None, "key", 1)]


def test_a_condition_raising_is_a_bad_record_of_its_pattern_and_raises_at_the_end_of_the_call() -> None:
    def boom(e: Ev) -> bool:
        raise ZeroDivisionError("no")

    op = multi({"boom": (2, Pattern.begin("a").where(boom)), "ab": (1, ab_within())})
    with pytest.raises(BadRecordError) as caught:
        op.process_elements([Ev("a", 1), Ev("b", 2), Ev("x", 3)])
    assert caught.value.stage == "condition" and caught.value.step == "a"
    # the call finished first: the other pattern's match is in the error
    assert brief(caught.value.outputs) == [("match", "ab", 1, "k", "a1 b2", 2)]  # type: ignore[arg-type]


# ---------------------------------------------------------------- add, replace, remove


def test_an_added_pattern_matches_from_the_watermark_on_including_elements_not_matched_yet() -> None:
    op = multi({"ac": (1, a_then_c())})
    push(op, "a1 a2")  # watermark 1: a1 matched by "ac", a2 taken, not matched yet
    op.add("ab", ab_within(), version=3)
    out = push(op, "b3 x4") + op.flush()
    assert brief(out) == [
        ("match", "ab", 3, "k", "a2 b3", 3),  # (x4's call)
        ("timeout", "ac", 1, "k", "a1", 11),  # (the flush)
        ("timeout", "ac", 1, "k", "a2", 12),
    ]


def test_a_replaced_pattern_matches_as_a_fresh_operator_started_at_the_watermark() -> None:
    op = multi({"ab": (1, ab_within())})
    push(op, "a1 a2")  # watermark 1: a1 matched by version 1, a2 taken, not matched yet
    op.replace("ab", ab_within(), version=2)
    out = push(op, "b3 x4") + op.flush()
    # version 1's partial match a1 is dropped; version 2 gets a2
    assert brief(out) == [("match", "ab", 2, "k", "a2 b3", 3)]
    fresh = CepOperator(ab_within(), key_by="key", timestamp="ts")
    fresh.process_watermark(1)
    alone = fresh.process_elements([Ev("a", 2), Ev("b", 3), Ev("x", 4)]) + fresh.flush()
    assert [(o.kind, o.key, o.value, o.timestamp) for o in out] == [
        (o.kind, o.key, o.value, o.timestamp) for o in alone
    ]


def test_a_replace_gets_an_element_the_old_version_could_not_start_with_before_it_fired() -> None:
    # version 1 starts with b: a2 cannot start it, and key "q" holds nothing, so a CepOperator
    # alone drops a2 at once (it would fire without effect at the next watermark). Here version 2,
    # which starts with a, takes over before a2 fires (the watermark is 1) and must get it.
    op = multi({"p": (1, Pattern.begin("b").where(is_("b")))})
    assert push(op, "a2", key="q") == []
    op.replace("p", Pattern.begin("a").where(is_("a")), version=2)
    assert brief(op.flush()) == [("match", "p", 2, "q", "a2", 2)]


def test_other_patterns_keep_their_partial_matches_when_one_is_added_replaced_or_removed() -> None:
    op = multi({"abc": (1, abc_within()), "ab": (1, ab_within())})
    push(op, "a1 b2")
    op.add("ac", a_then_c())
    op.replace("ab", ab_within(20), version=2)
    op.remove("ac")
    out = push(op, "c3 x4") + op.flush()
    assert brief(out) == [("match", "abc", 1, "k", "a1 b2 c3", 3)]


def test_a_removed_pattern_frees_its_state_and_its_events() -> None:
    class Held:
        __slots__ = ("name", "ts", "key", "__weakref__")

        def __init__(self, name: str, ts: int) -> None:
            self.name, self.ts, self.key = name, ts, "k"

    a = Held("a", 1)
    op = multi({"ab": (1, ab_within(1000)), "ac": (1, a_then_c(1000))})
    op.process_elements([a, Held("x", 2), Held("x", 3)])
    assert op.stats()["patterns"]["ab"]["partial_matches"] == 1
    op.remove("ab")
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is not None  # "ac" still holds a1 in a partial match
    op.remove("ac")
    gc.collect()
    assert ref() is None
    assert op.stats()["patterns"] == {} and not op.has_state() and op.keys() == []


def a_then(second: str, window: int = 10) -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("b").where(is_(second)).within(window)


def test_a_replace_may_keep_the_partial_matches_of_a_version_of_the_same_shape() -> None:
    op = multi({"ab": (1, a_then("b"))})
    push(op, "a1 a2")  # watermark 1: a1 in a partial match, a2 taken, not matched yet
    op.replace("ab", a_then("c", window=20), version=2, keep_partial_matches=True)
    out = push(op, "b3 c4 x5")
    # version 2 judges the kept partial matches by its own condition (c, not b)
    assert brief(out) == [("match", "ab", 2, "k", "a1 c4", 4), ("match", "ab", 2, "k", "a2 c4", 4)]


def test_keeping_partial_matches_across_another_shape_is_refused() -> None:
    op = multi({"ab": (1, a_then("b"))})
    push(op, "a1 x2")
    with pytest.raises(ValueError, match="'ab': version 2 cannot keep version 1's partial matches"):
        op.replace("ab", abc_within(), version=2, keep_partial_matches=True)
    assert op.patterns["ab"][0] == 1 and op.stats()["patterns"]["ab"]["partial_matches"] == 1


def test_a_restore_into_a_new_version_may_keep_its_partial_matches() -> None:
    op = multi({"ab": (1, a_then("b")), "abc": (1, abc_within())})
    push(op, "a1 b2")
    data = op.snapshot()
    keep = multi()
    keep.restore(
        data,
        [
            PatternUpdate.put("ab", 2, a_then("c"), keep_partial_matches=True),
            PatternUpdate.put("abc", 2, a_then("c"), keep_partial_matches=True),  # another shape
        ],
    )
    out = push(keep, "c3 x4")
    assert brief(out) == [("match", "ab", 2, "k", "a1 c3", 3)]  # "abc" version 2 started afresh


def test_putting_the_hosted_version_again_changes_nothing() -> None:
    op = multi({"ab": (1, ab_within())})
    push(op, "a1 x2")
    assert op.update(PatternUpdate.put("ab", 1, ab_within())) is False
    assert op.stats()["patterns"]["ab"]["partial_matches"] == 1
    assert op.update(PatternUpdate.remove("nope")) is False


def test_sync_hosts_exactly_the_given_set() -> None:
    op = multi({"ab": (1, ab_within()), "ac": (1, a_then_c()), "abc": (1, abc_within())})
    changed = op.sync({"ab": (1, ab_within()), "abc": (2, abc_within()), "new": (1, a_then_c())})
    assert changed is True
    assert {n: v for n, (v, _) in op.patterns.items()} == {"ab": 1, "abc": 2, "new": 1}
    assert op.sync({"ab": (1, ab_within()), "abc": (2, abc_within()), "new": (1, a_then_c())}) is False


def test_mistakes_in_changes_name_the_pattern() -> None:
    op = multi({"ab": (1, ab_within())})
    with pytest.raises(ValueError, match="'ab' is hosted already"):
        op.add("ab", ab_within())
    with pytest.raises(ValueError, match="'ab' is at version 1 already"):
        op.replace("ab", ab_within(), 1)
    with pytest.raises(KeyError, match="no pattern named 'zz'"):
        op.remove("zz")
    with pytest.raises(ValueError, match="version is an int"):
        op.add("x", ab_within(), version="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a Pattern"):
        op.add("x", "a -> b")  # type: ignore[arg-type]
    assert list(op.patterns) == ["ab"]


# ---------------------------------------------------------------- snapshots


def test_a_restored_snapshot_continues_as_if_uninterrupted() -> None:
    patterns = {"ab": (1, ab_within()), "abc": (4, abc_within())}
    straight = multi(patterns)
    first = push(straight, "a1 b2")
    data = straight.snapshot()
    rest = push(straight, "c3 b4 x5") + straight.flush()
    restored = multi(patterns)
    restored.restore(data)
    assert brief(push(restored, "c3 b4 x5") + restored.flush()) == brief(rest)
    assert brief(first + rest) == [
        ("match", "ab", 1, "k", "a1 b2", 2),
        ("match", "abc", 4, "k", "a1 b2 c3", 3),
    ]


def test_a_snapshot_restores_into_another_pattern_set_replacing_and_removing() -> None:
    op = multi({"ab": (1, ab_within()), "abc": (1, abc_within()), "ac": (1, a_then_c())})
    push(op, "a1 b2 a3")  # watermark 2: a3 taken, not matched yet
    data = op.snapshot()
    other = multi()
    other.restore(data, {"abc": (1, abc_within()), "ab": (2, ab_within()), "new": (1, a_then_c())})
    assert {n: v for n, (v, _) in other.patterns.items()} == {"ab": 2, "abc": 1, "new": 1}
    out = push(other, "b4 c5 x6") + other.flush()
    assert brief(out) == [
        ("match", "ab", 2, "k", "a3 b4", 4),  # the new version got a3
        ("match", "abc", 1, "k", "a1 b2 c5", 5),  # kept its partial match
        ("match", "abc", 1, "k", "a3 b4 c5", 5),
        ("match", "new", 1, "k", "a3 c5", 5),  # added at watermark 2
    ]


def test_a_snapshot_of_python_patterns_needs_them_hosted_to_restore() -> None:
    op = multi({"ab": (1, ab_within())})
    data = op.snapshot()
    with pytest.raises(SnapshotError, match="pattern 'ab' version 1, which this operator does not host"):
        multi().restore(data)
    with pytest.raises(SnapshotError, match="taken in event-time mode"):
        multi(processing_time=True).restore(data)


# ---------------------------------------------------------------- the pull API and control records


def test_control_records_in_the_stream_change_the_pattern_set_between_elements() -> None:
    items = [
        Ev("a", 1),
        Ev("b", 2),
        PatternUpdate.put("ac", 1, a_then_c()),
        Ev("a", 3),
        PatternUpdate.remove("ab"),
        Ev("b", 4),
        Ev("c", 5),
    ]
    out = list(CEP.patterns(items, {"ab": (1, ab_within())}, key_by="key", timestamp="ts"))
    assert brief(out) == [
        ("match", "ab", 1, "k", "a1 b2", 2),
        ("match", "ac", 1, "k", "a3 c5", 5),  # b4 came after "ab" was removed
    ]


def test_control_records_of_the_users_shape_go_through_the_loader() -> None:
    rules = {"ab": ab_within(), "ac": a_then_c()}

    def load(record: dict[str, Any]) -> PatternUpdate:
        return PatternUpdate.put(record["rule"], record["version"], rules[record["rule"]])

    items = [{"rule": "ac", "version": 2}, Ev("a", 1), Ev("c", 2), Ev("x", 3)]
    stream = CEP.patterns(
        items, key_by="key", timestamp="ts", is_control=lambda i: isinstance(i, dict), loader=load
    )
    assert brief(list(stream)) == [("match", "ac", 2, "k", "a1 c2", 2)]
    assert stream.operator.stats()["patterns"]["ac"]["matches"] == 1


def test_a_control_record_that_cannot_be_loaded_is_a_bad_record_or_an_error() -> None:
    items = [{"rule": "nope"}, Ev("a", 1), Ev("b", 2)]

    def load(record: dict[str, Any]) -> PatternUpdate:
        raise ValueError(f"unknown rule {record['rule']!r}")

    side = CEP.patterns(
        items,
        {"ab": (1, ab_within())},
        key_by="key",
        timestamp="ts",
        on_error="side_output",
        is_control=lambda i: isinstance(i, dict),
        loader=load,
    )
    out = list(side)
    assert [(o.kind, o.value.stage, o.value.error) for o in out if o.kind == "bad_record"] == [
        ("bad_record", "rule", "control record not applied: ValueError: unknown rule 'nope'")
    ]
    assert brief([o for o in out if o.kind == "match"]) == [("match", "ab", 1, "k", "a1 b2", 2)]
    with pytest.raises(ValueError, match="unknown rule 'nope'"):
        list(
            CEP.patterns(
                items, key_by="key", timestamp="ts", is_control=lambda i: isinstance(i, dict), loader=load
            )
        )


def test_a_bad_record_in_the_pull_api_comes_after_what_its_call_produced() -> None:
    def boom(e: Ev) -> bool:
        if e.ts == 4:
            raise ZeroDivisionError("no")
        return e.name == "b"

    patterns = {
        "ab": (1, Pattern.begin("a").where(is_("a")).followed_by("b").where(boom)),
        "ay": (1, Pattern.begin("a").where(is_("a")).followed_by("y").where(is_("y"))),
    }
    items = [Ev("a", 1), Ev("b", 2), Ev("a", 3), Ev("y", 4), Ev("z", 5)]
    stream = CEP.patterns(items, patterns, key_by="key", timestamp="ts")
    assert brief([next(stream), next(stream), next(stream)]) == [
        ("match", "ab", 1, "k", "a1 b2", 2),
        # z5's call, which also found y4 bad for "ab": its matches come out first
        ("match", "ay", 1, "k", "a1 y4", 4),
        ("match", "ay", 1, "k", "a3 y4", 4),
    ]
    with pytest.raises(BadRecordError, match="bad record y@4 at pattern step 'b'"):
        next(stream)


# ---------------------------------------------------------------- processing time


def test_in_processing_time_every_pattern_sees_an_element_at_one_reading_of_the_clock() -> None:
    now = [100]
    readings: list[int] = []

    def clock() -> int:
        readings.append(now[0])
        now[0] += 1
        return now[0]

    op = MultiPatternOperator(
        {"ab": (1, ab_within()), "ab2": (2, ab_within())}, key_by="key", processing_time=True, clock=clock
    )
    out = op.process_elements([Ev("a", 0), Ev("b", 0)])
    assert [(o.pattern, o.timestamp) for o in out] == [("ab", 102), ("ab2", 102)]
    assert len(readings) == 2


def test_in_processing_time_a_watermark_call_releases_what_a_comparator_held_back() -> None:
    now = [100]
    op = MultiPatternOperator(
        {"ab": (1, ab_within())},
        key_by="key",
        processing_time=True,
        clock=lambda: now[0],
        comparator=lambda x, y: x.value - y.value,
    )
    assert op.process_elements([Ev("a", 0), Ev("b", 0)]) == []  # held back within their millisecond
    now[0] = 101
    assert [(o.pattern, o.timestamp) for o in op.process_watermark(0)] == [("ab", 100)]


class _Logged(RichIterativeCondition):
    """``type == "b"``, logging its ``open`` and ``close`` under its name."""

    def __init__(self, name: str, log: list[Any]) -> None:
        self.name = name
        self.log = log

    def open(self, context: Any) -> None:
        self.log.append(("open", self.name, context.get_job_parameter("job")))

    def close(self) -> None:
        self.log.append(("close", self.name))

    def filter(self, value: Any, ctx: Any) -> bool:
        return bool(value.name == "b")


def _rich(name: str, log: list[Any]) -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("b").where(_Logged(name, log))


def test_rich_conditions_open_with_the_operator_and_close_as_their_pattern_leaves() -> None:
    log: list[Any] = []
    op = MultiPatternOperator({"one": (1, _rich("one", log))}, key_by="key", timestamp="ts")
    op.open(RuntimeContext(op.stats, {"job": "j"}))
    op.add("two", _rich("two", log))  # hosted while open: opened as it comes
    op.replace("one", _rich("one-v2", log), 2)  # the old version closed, the new opened
    outputs = op.process_elements([Ev("a", 1), Ev("b", 2), Ev("x", 3)])
    assert [(o.pattern, o.version, o.kind) for o in outputs] == [("one", 2, "match"), ("two", 1, "match")]
    op.remove("two")
    op.close()
    assert log == [
        ("open", "one", "j"),
        ("open", "two", "j"),
        ("open", "one-v2", "j"),
        ("close", "one"),
        ("close", "two"),
        ("close", "one-v2"),
    ]
