"""A fraud rule set edited while the stream runs (the embedded runtime, docs/multi-pattern.md).

Two rules watch every card from the start:

    probe-then-big  v1  a purchase under 5.00, then one over 500.00 in another country, within 15 min
    big-spree       v1  three purchases over 100.00 within 10 min

Halfway through the stream an analyst edits the rule set, as control records in the same stream:
``probe-then-big`` goes to version 2 (the big purchase only needs to be over 300.00), and
``big-spree`` is removed. Results say which rule and which version found them. The rules here are
Python patterns; with the JSON rule format they would be rule files (``load_rule``).

Run it:  python examples/fraud_rules.py
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from flowcep import CEP, AfterMatchSkipStrategy, Pattern, PatternUpdate
from flowcep.cli_support import parse_timestamp, read_events

TITLE = "Fraud rules edited while the stream runs (probe-then-big v1 -> v2, big-spree removed halfway)"
DATA = Path(__file__).resolve().parent / "data" / "card_transactions.csv"


def probe_then_big(threshold: float) -> Pattern:
    def big_abroad(payment: Any, ctx: Any) -> bool:
        probe = ctx.get_events_for_pattern("probe")[0]
        return payment.amount > threshold and payment.country != probe.country

    return (
        Pattern.begin("probe", AfterMatchSkipStrategy.skip_past_last_event())
        .where(lambda p: p.amount < 5)
        .followed_by("big")
        .where(big_abroad)
        .within(timedelta(minutes=15))
    )


big_spree = (
    Pattern.begin("spree", AfterMatchSkipStrategy.skip_past_last_event())
    .where(lambda p: p.amount > 100)
    .times(3)
    .within(timedelta(minutes=10))
)


def main(data: Path = DATA) -> list[str]:
    payments = read_events(data)
    half = len(payments) // 2
    items: list[Any] = [
        *payments[:half],
        PatternUpdate.put("probe-then-big", 2, probe_then_big(300.0)),
        PatternUpdate.remove("big-spree"),
        *payments[half:],
    ]
    rules = {"probe-then-big": (1, probe_then_big(500.0)), "big-spree": (1, big_spree)}
    results = CEP.patterns(
        items, rules, key_by="card", timestamp=lambda p: parse_timestamp(p.time), out_of_orderness=0
    )
    lines = [f"   (rule set edited after {payments[half - 1].time[11:19]})"]
    for o in results:
        if o.kind != "match":
            continue
        events = [e for step in o.value.values() for e in step]
        amounts = " -> ".join(f"{e.amount:.2f} ({e.country})" for e in events)
        lines.append(
            f"{o.pattern} v{o.version}  {o.key}  {events[0].time[11:19]}-{events[-1].time[11:19]}  {amounts}"
        )
    return lines + [f"{len(lines) - 1} alerts"]


if __name__ == "__main__":
    for line in main():
        print(line)
