"""Timeouts and late data: orders that are not paid within 15 minutes, out-of-order input.

Shows a PatternProcessFunction that also handles timed-out partial matches, a bounded
out-of-orderness watermark, the late-data side output, and the push API (CepOperator) with a
snapshot taken and restored half-way. Run it: ``python examples/timeouts_and_late_data.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from flowcep.pattern import Pattern
from flowcep.runtime import (
    CEP,
    CepOperator,
    Collector,
    Context,
    Output,
    OutputTag,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
)

MINUTE = 60_000


@dataclass(frozen=True)
class OrderEvent:
    order: str
    kind: str  # "created" or "paid"
    ts: int  # epoch milliseconds


EVENTS = [
    OrderEvent("o1", "created", 0 * MINUTE),
    OrderEvent("o2", "created", 1 * MINUTE),
    OrderEvent("o1", "paid", 5 * MINUTE),
    OrderEvent("o3", "created", 4 * MINUTE),  # out of order, within the 2-minute bound
    OrderEvent("o3", "paid", 12 * MINUTE),
    OrderEvent("o4", "created", 30 * MINUTE),
    OrderEvent("o2", "paid", 20 * MINUTE),  # late: the watermark is already past minute 27
    OrderEvent("o5", "created", 31 * MINUTE),
]

PAID_IN_TIME = (
    Pattern.begin("created")
    .where(lambda e: e.kind == "created")
    .followed_by("paid")
    .where(lambda e: e.kind == "paid")
    .within(timedelta(minutes=15))
)

UNPAID = OutputTag("unpaid")


class Payments(PatternProcessFunction, TimedOutPartialMatchHandler):
    def process_match(self, match: dict[str, list[OrderEvent]], ctx: Context, out: Collector) -> None:
        created, paid = match["created"][0], match["paid"][0]
        out.collect(f"{ctx.key} paid after {(paid.ts - created.ts) // MINUTE} min")

    def process_timed_out_match(self, match: dict[str, list[OrderEvent]], ctx: Context) -> None:
        ctx.output(UNPAID, f"{ctx.key} unpaid, timed out at minute {minute(ctx.timestamp())}")


def minute(ts: int | None) -> str:
    return "?" if ts is None else str(ts // MINUTE)


def pull_api() -> None:
    result = CEP.pattern(
        EVENTS,
        PAID_IN_TIME,
        key_by=lambda e: e.order,
        timestamp=lambda e: e.ts,
        out_of_orderness=timedelta(minutes=2),
    ).process(Payments())
    for line in result:
        print(line)
    for line in result.get_side_output(UNPAID):
        print(line)
    for event in result.get_side_output(CEP.LATE_DATA):
        print(f"late: {event.order} {event.kind} at minute {event.ts // MINUTE}")


def push_api() -> None:
    """The same detection driven by hand, with a snapshot/restore in the middle."""

    def operator() -> CepOperator:
        return CepOperator(
            PAID_IN_TIME, key_by=lambda e: e.order, timestamp=lambda e: e.ts, out_of_orderness=2 * MINUTE
        )

    op = operator()
    outputs: list[Output] = []
    for event in EVENTS[:4]:
        outputs += op.process_element(event)
    saved = op.snapshot()  # bytes: store them anywhere
    op = operator()
    op.restore(saved)
    for event in EVENTS[4:]:
        outputs += op.process_element(event)
    outputs += op.flush()
    for o in outputs:
        print(f"{o.kind:8} key={o.key} at minute {minute(o.timestamp)}")


if __name__ == "__main__":
    print("-- pull API (CEP.pattern)")
    pull_api()
    print("-- push API (CepOperator)")
    push_api()
