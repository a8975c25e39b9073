"""Card fraud: a tiny "probe" purchase, then a large purchase in another country, within 15 min.

Fraudsters who buy stolen card numbers first test them with a purchase of a euro or two and,
if it goes through, spend big somewhere else. Per card (``key_by``):

    probe   a purchase under 5.00
    large   followed by a purchase over 500.00 in a different country than the probe's,
            within 15 minutes of the probe

The second condition is *iterative*: it reads the probe already in the partial match through
``ctx.get_events_for_pattern("probe")``. ``skip_past_last_event()`` reports a burst once even
when the card was probed twice before the big purchase.

Run it:  python examples/card_fraud.py
or:      flowcep run examples/card_fraud.py examples/data/card_transactions.csv --key card --timestamp time
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from flowcep import CEP, AfterMatchSkipStrategy, Pattern
from flowcep.cli_support import parse_timestamp, read_events

TITLE = "Card fraud (a probe under 5.00, then over 500.00 in another country within 15 min; per card)"
DATA = Path(__file__).resolve().parent / "data" / "card_transactions.csv"


def large_abroad(payment, ctx) -> bool:
    probe = ctx.get_events_for_pattern("probe")[0]
    return payment.amount > 500 and payment.country != probe.country


pattern = (
    Pattern.begin("probe", AfterMatchSkipStrategy.skip_past_last_event())
    .where(lambda p: p.amount < 5)
    .followed_by("large")
    .where(large_abroad)
    .within(timedelta(minutes=15))
)


@dataclass(frozen=True)
class Fraud:
    card: str
    probe_time: str
    probe_amount: float
    probe_country: str
    time: str
    amount: float
    country: str
    merchant: str


def select(match) -> Fraud:
    probe, large = match["probe"][0], match["large"][0]
    return Fraud(
        card=probe.card,
        probe_time=probe.time,
        probe_amount=probe.amount,
        probe_country=probe.country,
        time=large.time,
        amount=large.amount,
        country=large.country,
        merchant=large.merchant,
    )


def main(data: Path = DATA) -> list[Fraud]:
    payments = read_events(data)
    stream = CEP.pattern(
        payments, pattern, key_by=lambda p: p.card, timestamp=lambda p: parse_timestamp(p.time)
    )
    return sorted(stream.select(select), key=lambda f: f.time)


def report(frauds: list[Fraud]) -> list[str]:
    lines = [
        f"FRAUD {f.card}  probe {f.probe_amount:.2f} ({f.probe_country}) at {f.probe_time[11:19]}, "
        f"then {f.amount:.2f} at {f.merchant} ({f.country}) at {f.time[11:19]}"
        for f in frauds
    ]
    return lines + [f"{len(frauds)} suspicious cards"]


if __name__ == "__main__":
    for line in report(main()):
        print(line)
