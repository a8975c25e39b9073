"""Rules as a broadcast stream (``flowcep.connectors.flink_rules``): the function driven without a
JVM, then one local PyFlink job (docs/multi-pattern.md, section 6)."""

from __future__ import annotations

import pickle
from typing import Any

import cep_scenarios as sc
import pytest
from flink_support import FakeFlink, _FakeContext, collect, event_source, make_env  # noqa: I001 - skips without PyFlink
from pyflink.common import Types, WatermarkStrategy

from flowcep import Pattern, PatternOutput, PatternUpdate
from flowcep.connectors.flink_rules import RuleFunction, detect_rules


def then(first: str, second: str, within: int = 1000) -> Pattern:
    return (
        Pattern.begin("first")
        .where(sc.kind_is(first))
        .followed_by("then")
        .where(sc.kind_is(second))
        .within(within)
    )


def load_tuple(record: tuple[str, int, str, str]) -> PatternUpdate:
    """The jobs' rule records: ``(id, version, first kind, then kind)``, within 10 s."""
    name, version, first, second = record
    return PatternUpdate.put(name, version, then(first, second, 10_000))


class _BroadcastState(dict):  # type: ignore[type-arg]
    def put(self, key: Any, value: Any) -> None:
        self[key] = value

    def remove(self, key: Any) -> None:
        self.pop(key, None)


class _RulesContext(_FakeContext):
    def get_broadcast_state(self, descriptor: Any) -> _BroadcastState:
        return self.flink.rules  # type: ignore[attr-defined, no-any-return]


class FakeBroadcastFlink(FakeFlink):
    """``FakeFlink`` with a broadcast side: ``rule(record)``; the broadcast state is ``rules``."""

    def __init__(self, function: Any, rules: _BroadcastState | None = None, **kwargs: Any) -> None:
        self.rules = rules if rules is not None else _BroadcastState()
        super().__init__(function, **kwargs)

    def rule(self, record: Any) -> list[Any]:
        out = list(self.function.process_broadcast_element(record, _RulesContext(self)) or ())
        self.output.extend(out)
        return out

    def element(self, key: Any, value: Any, timestamp: int | None = None) -> list[Any]:
        self.key, self.timestamp = key, timestamp
        out = list(self.function.process_element(value, _RulesContext(self)) or ())
        self.output.extend(out)
        return out

    def _fire(self, t: int, key: Any) -> list[Any]:
        self.key, self.timestamp = key, t
        out = list(self.function.on_timer(t, _RulesContext(self)) or ())
        self.output.extend(out)
        return out


def brief(outputs: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            o.kind,
            o.pattern,
            o.version,
            o.key,
            [e[2] for events in o.value.values() for e in events],
            o.timestamp,
        )
        for o in outputs
        if isinstance(o, PatternOutput)
    ]


def feed(flink: FakeBroadcastFlink, *records: tuple[str, str, int]) -> None:
    for key, kind, ts in records:
        flink.element(key, (key, kind, ts), ts)


def test_a_broadcast_rule_matches_the_records_after_it_with_its_name_version_and_key() -> None:
    flink = FakeBroadcastFlink(RuleFunction(None, "raise"))
    feed(flink, ("k1", "a", 1))  # no rule yet
    flink.rule(PatternUpdate.put("ab", 3, then("a", "b")))
    feed(flink, ("k1", "a", 10), ("k1", "b", 20), ("k2", "a", 30), ("k2", "b", 40))
    flink.watermark(100)
    assert brief(flink.output) == [
        ("match", "ab", 3, "k1", [10, 20], 20),
        ("match", "ab", 3, "k2", [30, 40], 40),
    ]


def test_a_replace_reaches_a_key_when_it_is_next_touched_and_the_other_rules_keep_their_partial_matches() -> (
    None
):
    flink = FakeBroadcastFlink(RuleFunction(None, "raise"))
    flink.rule(PatternUpdate.put("ab", 1, then("a", "b")))
    flink.rule(PatternUpdate.put("ac", 1, then("a", "c")))
    feed(flink, ("k1", "a", 10))
    flink.watermark(10)  # a10 matched by both rules: partial matches
    flink.rule(PatternUpdate.put("ab", 2, then("a", "b")))
    flink.rule(PatternUpdate.remove("zz"))  # not a rule: nothing changes
    feed(flink, ("k1", "b", 20), ("k1", "c", 30))
    flink.watermark(100)
    # "ab" version 2 started after a10 (its version 1's partial match is dropped); "ac" kept it
    assert brief(flink.output) == [("match", "ac", 1, "k1", [10, 30], 30)]


def test_a_rule_record_may_ask_a_replace_to_keep_the_partial_matches() -> None:
    flink = FakeBroadcastFlink(RuleFunction(None, "raise"))
    flink.rule(PatternUpdate.put("ab", 1, then("a", "b")))
    feed(flink, ("k1", "a", 10))
    flink.watermark(10)
    flink.rule(PatternUpdate.put("ab", 2, then("a", "c"), keep_partial_matches=True))
    feed(flink, ("k1", "b", 20), ("k1", "c", 30))
    flink.watermark(100)
    assert brief(flink.output) == [("match", "ab", 2, "k1", [10, 30], 30)]


def test_a_removed_rule_leaves_a_keys_state_when_the_key_is_next_touched() -> None:
    flink = FakeBroadcastFlink(RuleFunction(None, "raise"), pickle_state=True)
    flink.rule(PatternUpdate.put("ab", 1, then("a", "b", within=50)))
    feed(flink, ("k1", "a", 10))
    flink.watermark(10)
    assert flink.store  # the key holds a partial match
    flink.rule(PatternUpdate.remove("ab"))
    feed(flink, ("k1", "b", 20))
    flink.watermark(100)
    assert brief(flink.output) == [] and flink.store == {}


def test_state_and_rules_survive_a_restart_from_pickled_state() -> None:
    first = FakeBroadcastFlink(RuleFunction(load_tuple, "raise"), pickle_state=True)
    first.rule(("ab", 1, "a", "b"))
    feed(first, ("k1", "a", 10))
    first.watermark(10)
    # a new task: the broadcast state and keyed state come back from the checkpoint, pickled
    function = pickle.loads(pickle.dumps(RuleFunction(load_tuple, "raise")))
    second = FakeBroadcastFlink(function, pickle.loads(pickle.dumps(first.rules)), pickle_state=True)
    second.store = dict(first.store)
    second.watermark_ms = first.watermark_ms
    feed(second, ("k1", "b", 20))
    second.watermark(100)
    assert brief(second.output) == [("match", "ab", 1, "k1", [10, 20], 20)]


def test_rule_records_go_through_the_loader_and_one_that_fails_is_a_bad_record() -> None:
    patterns = {"ab": then("a", "b")}

    def load(record: dict[str, Any]) -> PatternUpdate:
        return PatternUpdate.put(record["id"], record["version"], patterns[record["id"]])

    flink = FakeBroadcastFlink(RuleFunction(load, "side_output"))
    flink.rule({"id": "nope", "version": 1})
    flink.rule({"id": "ab", "version": 1})
    feed(flink, ("k1", "a", 10), ("k1", "b", 20))
    flink.watermark(100)
    assert [(b.stage, b.error) for b in flink.side("bad-records")] == [
        ("rule", "rule record not applied: KeyError: 'nope'")
    ]
    assert brief(flink.output) == [("match", "ab", 1, "k1", [10, 20], 20)]
    with pytest.raises(KeyError):
        FakeBroadcastFlink(RuleFunction(load, "raise")).rule({"id": "nope", "version": 1})


def test_a_late_record_goes_to_the_late_data_side_output() -> None:
    flink = FakeBroadcastFlink(RuleFunction(None, "raise"))
    flink.rule(PatternUpdate.put("ab", 1, then("a", "b")))
    flink.watermark(50)
    feed(flink, ("k1", "a", 40))
    assert flink.side("late-data") == [("k1", "a", 40)]


# ---------------------------------------------------------------- a local PyFlink job

PAUSE = 2.0  # the rule stream is read before the events that follow the pause


def test_a_job_matches_the_rules_of_a_broadcast_stream() -> None:
    env = make_env()
    events = [
        ("k1", "a", 1000, 0, PAUSE),
        ("k1", "b", 2000),
        ("k2", "a", 3000),
        ("k2", "c", 4000),
        ("k2", "b", 5000),
    ]
    source = event_source(env, events, WatermarkStrategy.for_monotonous_timestamps(), with_pauses=True)
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    rule_type = Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING(), Types.STRING()])
    rules = env.from_collection([("ab", 1, "a", "b"), ("ac", 4, "a", "c")], type_info=rule_type)
    result = detect_rules(keyed, rules, loader=load_tuple)
    found = collect(result)["main"]
    assert sorted(brief(found)) == [
        ("match", "ab", 1, "k1", [1000, 2000], 2000),
        ("match", "ab", 1, "k2", [3000, 5000], 5000),
        ("match", "ac", 4, "k2", [3000, 4000], 4000),
        ("timeout", "ac", 4, "k1", [1000], 11000),  # the end of input times out a1000
    ]
