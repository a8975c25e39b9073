"""A fraud rule set edited while the stream runs (the embedded runtime, docs/multi-pattern.md).

The rules are JSON rule files (docs/rules.md for the pattern format). From the start of the day,
``examples/rules/fraud/``:

    probe-then-big       v1  a purchase under 5.00, then one over 500.00 in another country, within 15 min
    big-spree            v1  two purchases over 500.00 within 10 min

At 15:30 an analyst publishes ``examples/rules/fraud-edited/``, and the running stream takes it
between two payments, as control records (``PatternUpdate``) in the same stream:

    probe-then-big       v2  over 300.00 abroad, within 30 min (replaces v1)
    probe-then-big-home  v1  over 500.00 in the probe's own country, within 10 min (new)
    big-spree                removed

Results say which rule and which version found them.

Run it:  python examples/fraud_rules.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowcep import CEP, PatternUpdate
from flowcep.cli_support import parse_timestamp, read_events
from flowcep.runtime import RuleDirectory

TITLE = "Fraud rules edited while the stream runs (JSON rule files, a new version, a new rule, one removed)"
HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "card_transactions.csv"
RULES = HERE / "rules" / "fraud"
EDITED = HERE / "rules" / "fraud-edited"
EDIT_AT = "15:30:00"


def edits(before: dict[str, Any], after: dict[str, Any]) -> list[PatternUpdate]:
    """The control records that take the rule set ``before`` to ``after``."""
    removed = [PatternUpdate.remove(name) for name in before if name not in after]
    return removed + [PatternUpdate.put(name, version, pattern) for name, (version, pattern) in after.items()]


def main(data: Path = DATA) -> list[str]:
    payments = read_events(data)
    rules = RuleDirectory(RULES).current()
    edited = RuleDirectory(EDITED).current()
    at = next(i for i, p in enumerate(payments) if p.time[11:19] >= EDIT_AT)
    items = [*payments[:at], *edits(rules, edited), *payments[at:]]
    results = CEP.patterns(items, rules, key_by="card", timestamp=lambda p: parse_timestamp(p.time))
    lines = []
    edit_shown = False
    for o in results:
        if o.kind != "match":
            continue
        events = [e for step in o.value.values() for e in step]
        if not edit_shown and events[0].time[11:19] >= EDIT_AT:
            lines.append(
                f"   -- {EDIT_AT} rule set edited: probe-then-big v2, probe-then-big-home added, big-spree removed"
            )
            edit_shown = True
        amounts = " -> ".join(f"{e.amount:.2f} ({e.country})" for e in events)
        span = f"{events[0].time[11:19]}-{events[-1].time[11:19]}"
        lines.append(f"{o.pattern} v{o.version}  {o.key}  {span}  {amounts}")
    return lines + [f"{sum(1 for line in lines if not line.startswith(' '))} alerts"]


if __name__ == "__main__":
    for line in main():
        print(line)
