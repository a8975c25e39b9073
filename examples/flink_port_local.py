"""A Flink CEP job ported line by line: password guessing that ends in a successful login.

The Java job (Flink 2.3) this file ports:

    DataStream<LoginEvent> logins = env
        .fromSource(loginSource, WatermarkStrategy
            .<LoginEvent>forBoundedOutOfOrderness(Duration.ofSeconds(5))
            .withTimestampAssigner((e, ts) -> e.getTime()), "logins");

    Pattern<LoginEvent, ?> guessed = Pattern
        .<LoginEvent>begin("fails", AfterMatchSkipStrategy.skipPastLastEvent())
            .where(SimpleCondition.of(e -> e.getResult().equals("fail")))
            .timesOrMore(3).consecutive()
        .next("success")
            .where(SimpleCondition.of(e -> e.getResult().equals("success")))
        .within(Duration.ofMinutes(2));

    DataStream<String> alerts = CEP
        .pattern(logins.keyBy(LoginEvent::getUser), guessed)
        .select(m -> m.get("success").get(0).getUser() + " logged in after "
                     + m.get("fails").size() + " failed attempts");

Below is its flowcep twin. The pattern keeps Flink's camelCase names (``timesOrMore``,
``skipPastLastEvent``), which flowcep accepts as aliases of ``times_or_more`` and
``skip_past_last_event``; a lambda stands in for ``SimpleCondition.of``; ``Duration`` becomes
``timedelta``; ``keyBy`` and the watermark strategy become arguments of ``CEP.pattern``, the
embedded runtime. It finds what the Java job finds (same semantics): three or more failed
logins in a row, immediately followed by a success, all within two minutes.

Run it:  python examples/flink_port_local.py
or:      flowcep run examples/flink_port_local.py examples/data/logins.csv --key user --timestamp time --out-of-orderness 5s
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from flowcep import CEP, AfterMatchSkipStrategy, Pattern
from flowcep.cli_support import read_events

TITLE = "A Flink job ported (3+ failed logins in a row, then a success, within 2 min; per user)"
DATA = Path(__file__).resolve().parent / "data" / "logins.csv"

# The Java pattern above, name for name.
guessed = (
    Pattern.begin("fails", AfterMatchSkipStrategy.skipPastLastEvent())
    .where(lambda e: e.result == "fail")
    .timesOrMore(3)
    .consecutive()
    .next("success")
    .where(lambda e: e.result == "success")
    .within(timedelta(minutes=2))
)
pattern = guessed  # the name `flowcep run` looks for


def select(m) -> str:
    return f"{m['success'][0].user} logged in after {len(m['fails'])} failed attempts"


def main(data: Path = DATA) -> list[str]:
    logins = read_events(data)
    alerts = CEP.pattern(
        logins,
        guessed,
        key_by=lambda e: e.user,  # .keyBy(LoginEvent::getUser)
        timestamp=lambda e: e.time,  # .withTimestampAssigner((e, ts) -> e.getTime())
        out_of_orderness=timedelta(seconds=5),  # forBoundedOutOfOrderness(Duration.ofSeconds(5))
    ).select(select)
    return list(alerts)


def report(alerts: list[str]) -> list[str]:
    return [f"ALERT {a}" for a in alerts] + [f"{len(alerts)} alerts"]


if __name__ == "__main__":
    for line in report(main()):
        print(line)
