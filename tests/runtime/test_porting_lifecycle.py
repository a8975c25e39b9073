"""Porting gaps of issue 32: ``RichIterativeCondition`` with ``open``/``close``, the operator's
clock in conditions, ``open``/``close`` of timeout functions, and the ``RuntimeContext``."""

from __future__ import annotations

from typing import Any

from flowcep import CEP, Pattern, RichIterativeCondition, and_
from flowcep.runtime import CepOperator, PatternProcessFunction, RuntimeContext

from .support import Ev, is_


class Above(RichIterativeCondition):
    """``value > threshold``, the threshold read from the job's parameters in ``open``."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.threshold = None

    def open(self, context: Any) -> None:
        self.threshold = context.get_job_parameter("threshold")
        self.log.append(("open", self.threshold, self.get_runtime_context() is context))

    def close(self) -> None:
        self.log.append(("close",))

    def filter(self, value: Ev, ctx: Any) -> bool:
        return value.value > self.threshold


def big_b(condition: Any) -> Pattern:
    return Pattern.begin("a").where(is_("a")).followed_by("b").where(is_("b")).where(condition)


def test_a_rich_condition_is_opened_once_before_and_closed_once_after_the_stream() -> None:
    log: list[Any] = []
    events = [Ev("a", 1), Ev("b", 2, value=5), Ev("a", 3), Ev("b", 4, value=50)]
    result = CEP.pattern(events, big_b(Above(log)), timestamp="ts", job_parameters={"threshold": 10}).select(
        lambda m: m["b"][0].ts
    )
    assert log == []  # nothing runs before the stream is read
    assert list(result) == [4, 4]
    assert log == [("open", 10, True), ("close",)]


def test_a_rich_condition_inside_and_or_not_or_used_twice_is_opened_once() -> None:
    log: list[Any] = []
    above = Above(log)
    pattern = Pattern.begin("a").where(and_(is_("a"), above)).followed_by("b").where(is_("b")).or_(above)
    events = [Ev("a", 1, value=20), Ev("x", 2, value=30)]
    result = CEP.pattern(events, pattern, timestamp="ts", job_parameters={"threshold": 10})
    assert list(result.select(lambda m: [e.ts for es in m.values() for e in es])) == [[1, 2]]
    assert log == [("open", 10, True), ("close",)]


def test_the_push_api_opens_and_closes_with_the_operator() -> None:
    log: list[Any] = []
    op = CepOperator(big_b(Above(log)), timestamp=lambda e: e.ts)
    op.open(RuntimeContext(op.stats, {"threshold": 1}))
    op.process_element(Ev("a", 1))
    assert log == [("open", 1, True)]
    op.close()
    assert log == [("open", 1, True), ("close",)]


def test_with_an_operator_opens_its_conditions_with_a_runtime_context() -> None:
    seen: list[Any] = []

    class Remember(RichIterativeCondition):
        def open(self, context: Any) -> None:
            seen.append((type(context).__name__, context.get_metrics()["events_in"]))

        def filter(self, value: Any, ctx: Any) -> bool:
            return True

    with CepOperator(big_b(Remember()), timestamp=lambda e: e.ts) as op:
        op.process_element(Ev("a", 1))
    assert seen == [("RuntimeContext", 0)]


def test_a_condition_reads_the_operators_clock() -> None:
    now = [1_000]
    pattern = (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by("b")
        .where(lambda e, ctx: e.name == "b" and ctx.current_processing_time() - e.value < 100)
    )
    events = [Ev("a", 1), Ev("b", 2, value=950), Ev("b", 3, value=800)]
    result = CEP.pattern(events, pattern, timestamp="ts", clock=lambda: now[0]).select(lambda m: m["b"][0].ts)
    assert list(result) == [2]


def test_a_condition_of_a_bounded_evaluator_reads_the_operators_clock() -> None:
    # (the bounded evaluators serve followed_by_any)
    pattern = (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by_any("b")
        .where(lambda e, ctx: e.name == "b" and ctx.current_processing_time() == 77)
    )
    events = [Ev("a", 1), Ev("b", 2)]
    for evaluator in ("optiseq", "tree"):
        result = CEP.pattern(events, pattern, timestamp="ts", clock=lambda: 77, evaluator=evaluator)
        assert list(result.select(lambda m: m["b"][0].ts)) == [2], evaluator


def test_a_timeout_function_of_its_own_is_opened_and_closed() -> None:
    log: list[Any] = []

    class Timeout:
        def open(self, context: Any) -> None:
            log.append(("open timeout", context.get_job_parameter("name")))

        def timeout(self, match: Any, ts: int) -> Any:
            return ("timed out", ts)

        def close(self) -> None:
            log.append(("close timeout",))

    pattern = Pattern.begin("a").where(is_("a")).followed_by("b").where(is_("b")).within(5)
    result = CEP.pattern(
        [Ev("a", 1), Ev("x", 10)], pattern, timestamp="ts", job_parameters={"name": "t"}
    ).select(lambda m: m, timeout_fn=Timeout())
    assert list(result) == []
    assert list(result.get_side_output(CEP.TIMED_OUT)) == [("timed out", 6)]
    assert log == [("open timeout", "t"), ("close timeout",)]


def test_the_runtime_context_carries_the_key_the_metrics_and_the_job_parameters() -> None:
    seen: list[Any] = []

    class Describe(PatternProcessFunction):
        def open(self, context: Any) -> None:
            self.context = context
            seen.append(("open", context.get_current_key(), context.get_job_parameters()))

        def process_match(self, match: Any, ctx: Any, out: Any) -> None:
            rc = self.context
            seen.append((rc.get_current_key(), rc.get_metrics()["matches"], rc.get_job_parameter("env")))

    pattern = Pattern.begin("a").where(is_("a")).followed_by("b").where(is_("b"))
    events = [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("b", 3, "y"), Ev("b", 4, "x")]
    result = CEP.pattern(
        events, pattern, key_by="key", timestamp="ts", job_parameters={"env": "test"}
    ).process(Describe())
    assert list(result) == []
    assert seen == [("open", None, {"env": "test"}), ("y", 1, "test"), ("x", 2, "test")]


class KeySeen(RichIterativeCondition):
    """``kind == "b"``; appends the runtime context's current key at each call."""

    def __init__(self, keys: list[Any]) -> None:
        self.keys = keys

    def filter(self, value: Any, ctx: Any) -> bool:
        self.keys.append((value.ts, self.get_runtime_context().get_current_key()))
        return bool(value.name == "b")


def test_a_condition_reads_the_key_of_the_element_it_is_asked_about() -> None:
    keys: list[Any] = []
    pattern = Pattern.begin("a").where(is_("a")).followed_by("b").where(KeySeen(keys))
    events = [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("b", 3, "y"), Ev("c", 4, "x"), Ev("b", 5, "x")]
    result = CEP.pattern(events, pattern, key_by="key", timestamp="ts").select(lambda m: m["b"][0].ts)
    assert list(result) == [3, 5]
    # b is asked about each element after an a of its key: y's 3; x's 3 (no: another key), 4, 5
    assert keys == [(3, "y"), (4, "x"), (5, "x")]


def test_in_the_push_api_a_condition_reads_the_key_at_work() -> None:
    keys: list[Any] = []
    pattern = Pattern.begin("a").where(is_("a")).followed_by("b").where(KeySeen(keys))
    with CepOperator(pattern, key_by=lambda e: e.key, timestamp=lambda e: e.ts, out_of_orderness=None) as op:
        for e in [Ev("a", 1, "x"), Ev("a", 2, "y"), Ev("b", 3, "y"), Ev("b", 4, "x")]:
            op.process_element(e)
        op.flush()
    assert sorted(keys) == [(3, "y"), (4, "x")]  # (flush runs x, the first key seen, first)
