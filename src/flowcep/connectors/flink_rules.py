"""Rules as a broadcast stream in PyFlink: ``detect_rules(keyed_stream, rule_stream, ...)``.

The rule stream is broadcast to every parallel instance, where each rule record is loaded
(``loader``, default ``load_rule``) and kept in Flink's broadcast state (checkpointed with the
job). Each key's ``MultiPatternOperator`` snapshot lives in keyed state; whenever a key gets a
record or a timer, its operator is restored into the rule set of that moment
(``MultiPatternOperator.restore(data, patterns)``): so a rule change reaches each key the next
time the key is touched, and takes effect at that key's watermark (docs/multi-pattern.md,
section 6). Event time only: records need timestamps (``assign_timestamps_and_watermarks``).

Results: a stream of ``PatternOutput`` (matches and timeouts, pickled; ``key`` is the Flink
key); late records go to ``CEP.LATE_DATA``, and with ``on_error="side_output"`` records a
condition raised on, and rule records that do not load, to ``CEP.BAD_RECORDS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
from pyflink.common import Types
from pyflink.datastream import DataStream, KeyedStream
from pyflink.datastream.functions import KeyedBroadcastProcessFunction
from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor

from flowcep.connectors.flink import BAD_RECORDS, LATE_DATA, ResultStream, _register_side_outputs, _worker_tag
from flowcep.runtime import LONG_MIN, BadRecordError, MultiPatternOperator, PatternOutput, PatternUpdate
from flowcep.runtime.multistream import STAGE_RULE
from flowcep.runtime.options import OperatorOptions, check_on_error
from flowcep.runtime.output import BAD_RECORD, LATE, BadRecord
from flowcep.runtime.updates import Loader, load_rule

__all__ = ["RULES_STATE", "detect_rules"]

#: The broadcast state of the rules: rule id -> (version, rule record).
RULES_STATE = MapStateDescriptor("flowcep-rules", Types.STRING(), Types.PICKLED_BYTE_ARRAY())
STATE_NAME = "flowcep-multi-pattern"

_NO_TIMESTAMP = (
    "flowcep: a record reached the rules operator without a timestamp; call "
    "assign_timestamps_and_watermarks(...) on the input stream"
)


def detect_rules(
    keyed: KeyedStream, rules: DataStream, *, loader: Loader | None = None, on_error: str = "raise"
) -> ResultStream:
    """Match the rules of ``rules`` (a stream of rule records, or ``PatternUpdate``s) over
    ``keyed``, per key, in event time; a stream of ``PatternOutput``."""
    if not isinstance(keyed, KeyedStream):
        raise TypeError(f"detect_rules needs a PyFlink KeyedStream, got {keyed!r}")
    if not isinstance(rules, DataStream):
        raise TypeError(f"detect_rules needs a PyFlink DataStream of rule records, got {rules!r}")
    function = RuleFunction(loader, check_on_error(on_error))
    result = keyed.connect(rules.broadcast(RULES_STATE)).process(
        function, output_type=Types.PICKLED_BYTE_ARRAY()
    )
    result.name("flowcep rules")
    _register_side_outputs(result, [LATE_DATA, BAD_RECORDS] if on_error == "side_output" else [LATE_DATA])
    return ResultStream(result._j_data_stream)


class RuleFunction(KeyedBroadcastProcessFunction):
    """The ``KeyedBroadcastProcessFunction`` of ``detect_rules`` (see the module doc)."""

    def __init__(self, loader: Loader | None, on_error: str) -> None:
        self.loader = loader
        self.on_error = on_error

    def open(self, runtime_context: Any) -> None:
        self._state = runtime_context.get_state(ValueStateDescriptor(STATE_NAME, Types.PICKLED_BYTE_ARRAY()))
        self._late = _worker_tag(LATE_DATA)
        self._bad = _worker_tag(BAD_RECORDS)
        # the loaded rules of this worker, by (rule id, version): a rule is loaded once
        self._loaded: dict[tuple[str, int], PatternUpdate] = {}
        # one operator, restored per key: its patterns stay compiled while the rules stay
        self._op = MultiPatternOperator.from_options(
            OperatorOptions(out_of_orderness=None, on_error="side_output")
        )

    # -------------------------------------------------------------- rules

    def process_broadcast_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        try:
            update = value if isinstance(value, PatternUpdate) else self._load(value)
        except Exception as exc:
            if self.on_error == "raise":
                raise
            bad = BadRecord(value, f"rule record not applied: {type(exc).__name__}: {exc}", STAGE_RULE)
            return ((self._bad, bad),)
        state = ctx.get_broadcast_state(RULES_STATE)
        if update.pattern is None:
            state.remove(update.name)
        else:
            self._loaded[(update.name, update.version)] = update  # type: ignore[index]
            state.put(update.name, (update.version, value))
        return ()

    def _load(self, record: Any) -> PatternUpdate:
        update = (self.loader or load_rule)(record)
        if not isinstance(update, PatternUpdate):
            raise TypeError(f"the rule loader returned {update!r}, not a PatternUpdate")
        return update

    def _rules(self, ctx: Any) -> list[PatternUpdate]:
        """The rule set now (rules restored from a checkpoint are loaded again, once)."""
        rules: list[PatternUpdate] = []
        for name, (version, record) in ctx.get_broadcast_state(RULES_STATE).items():
            update = self._loaded.get((name, version))
            if update is None:
                update = record if isinstance(record, PatternUpdate) else self._load(record)
                self._loaded[(name, version)] = update
            rules.append(update)
        return rules

    # -------------------------------------------------------------- records and timers

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        timestamp = ctx.timestamp()
        if timestamp is None or timestamp == LONG_MIN:
            raise ValueError(_NO_TIMESTAMP)
        timer_service = ctx.timer_service()
        if timestamp <= timer_service.current_watermark():
            return ((self._late, value),)
        op = self._operator(ctx)
        outputs = op.process_element(value, timestamp)
        timer_service.register_event_time_timer(timestamp)
        self._store(op)
        return self._emit(outputs, ctx.get_current_key())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        if self._state.value() is None:
            return ()  # a timer left from a key whose state has been cleared
        op = self._operator(ctx)
        watermark = max(timestamp, ctx.timer_service().current_watermark())
        outputs = op.process_watermark(watermark)
        deadline = op.next_deadline()
        if deadline is not None:
            ctx.timer_service().register_event_time_timer(deadline)
        self._store(op)
        return self._emit(outputs, ctx.get_current_key())

    def _operator(self, ctx: Any) -> MultiPatternOperator:
        """The key's operator, in the rule set of now."""
        op = self._op
        rules = self._rules(ctx)
        data = self._state.value()
        if data is None:
            op.reset()
            op.sync(rules)
        else:
            op.restore(data, rules)
        return op

    def _store(self, op: MultiPatternOperator) -> None:
        if op.has_state():
            self._state.update(op.snapshot(canonical=False))
        else:
            self._state.clear()

    def _emit(self, outputs: list[PatternOutput], key: Any) -> list[Any]:
        out: list[Any] = []
        for o in outputs:
            if o.kind == BAD_RECORD:
                if self.on_error == "raise":  # a condition raised: fail the job, as Flink does
                    raise RuntimeError(f"flowcep: {BadRecordError(o.value)}")
                out.append((self._bad, o.value))
            elif o.kind == LATE:
                out.append((self._late, o.value))
            else:
                out.append(attrs.evolve(o, key=key))
        return out
