"""Server fault alerting: a resource alarm, then failed requests, then no recovery in time.

The monitoring use case of the operator-based CEP work done with Tencent's server fleet:
plain threshold alarms fire too often and repeat; what operators want is the *combination*
"a host raises a resource alarm, its requests start failing, and the alarm is not cleared
within five minutes". Per host (``key_by``):

    alarm      an ``alarm`` event (cpu, memory, disk...)
    failures   then three failed requests (HTTP status >= 500), not necessarily in a row
    recovery   and NO ``alarm_cleared`` after them, until five minutes after the alarm

``not_followed_by`` at the end of a pattern needs a window: the match is complete only when
event time passes the window's end without the forbidden event, i.e. when the watermark
reaches alarm + 5 min. Alarms that never collect three failures in time come out as
timed-out partial matches, which the process function below reports too.

The events arrive slightly out of order (up to a few seconds), so the runtime is given a
30-second bounded out-of-orderness; one event is three minutes late and goes to the late
side output.

Run it:  python examples/server_alerts.py
or:      flowcep run examples/server_alerts.py examples/data/server_events.jsonl \\
             --key host --timestamp time --out-of-orderness 30s
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from flowcep import CEP, AfterMatchSkipStrategy, Pattern, PatternProcessFunction, TimedOutPartialMatchHandler
from flowcep.cli_support import read_events
from flowcep.cli_support.timeparse import format_timestamp

TITLE = "Server fault alerts (alarm, then 3 failed requests, then no recovery within 5 min; per host)"
DATA = Path(__file__).resolve().parent / "data" / "server_events.jsonl"
WINDOW = timedelta(minutes=5)

pattern = (
    Pattern.begin("alarm", AfterMatchSkipStrategy.skip_past_last_event())
    .where(lambda e: e.event == "alarm")
    .followed_by("failures")
    .where(lambda e: e.event == "request" and e.status >= 500)
    .times(3)
    .not_followed_by("recovery")
    .where(lambda e: e.event == "alarm_cleared")
    .within(WINDOW)
)


@dataclass(frozen=True)
class Alert:
    host: str
    alarm_time: int
    metric: str
    value: float
    failure_times: tuple[int, ...]
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Unconfirmed:
    """An alarm that did not collect three failed requests within the window."""

    host: str
    alarm_time: int
    metric: str
    failures: int


def select(match) -> Alert:
    alarm, failures = match["alarm"][0], match["failures"]
    return Alert(
        host=alarm.host,
        alarm_time=alarm.time,
        metric=alarm.metric,
        value=alarm.value,
        failure_times=tuple(f.time for f in failures),
        paths=tuple(dict.fromkeys(f.path for f in failures)),
    )


def timeout(partial) -> Unconfirmed:
    alarm = partial["alarm"][0]
    return Unconfirmed(alarm.host, alarm.time, alarm.metric, len(partial.get("failures", [])))


class AlertFunction(PatternProcessFunction, TimedOutPartialMatchHandler):
    """Matches to the main output; timed-out partial matches kept aside."""

    def __init__(self) -> None:
        self.unconfirmed: list[Unconfirmed] = []

    def process_match(self, match, ctx, out) -> None:
        out.collect(select(match))

    def process_timed_out_match(self, match, ctx) -> None:
        self.unconfirmed.append(timeout(match))


@dataclass
class Result:
    alerts: list[Alert]
    unconfirmed: list[Unconfirmed]
    late: list[dict] = field(default_factory=list)


def main(data: Path = DATA) -> Result:
    events = read_events(data)
    stream = CEP.pattern(
        events,
        pattern,
        key_by=lambda e: e.host,
        timestamp=lambda e: e.time,  # epoch milliseconds in this file
        out_of_orderness=timedelta(seconds=30),
    )
    fn = AlertFunction()
    results = stream.process(fn)
    alerts = list(results)
    late = list(results.get_side_output(CEP.LATE_DATA))  # Flink: sideOutputLateData + getSideOutput
    return Result(
        alerts=sorted(alerts, key=lambda a: a.alarm_time),
        unconfirmed=sorted(fn.unconfirmed, key=lambda u: u.alarm_time),
        late=late,
    )


def report(result: Result) -> list[str]:
    lines = []
    for a in result.alerts:
        lines.append(
            f"ALERT {a.host}  {a.metric} alarm ({a.value}%) at {format_timestamp(a.alarm_time)[11:19]}, "
            f"requests failing from {format_timestamp(a.failure_times[0])[11:19]} on {', '.join(a.paths)}, "
            f"not cleared within {int(WINDOW.total_seconds() // 60)} min"
        )
    for u in result.unconfirmed:
        lines.append(
            f"  no alert: {u.host} {u.metric} alarm at {format_timestamp(u.alarm_time)[11:19]} "
            f"saw only {u.failures} failed request{'s' if u.failures != 1 else ''} in the window"
        )
    for e in result.late:
        lines.append(
            f"  late event (behind the watermark): {e.host} {e.event} at {format_timestamp(e.time)[11:19]}"
        )
    lines.append(
        f"{_n(len(result.alerts), 'alert')}, {_n(len(result.unconfirmed), 'unconfirmed alarm')}, "
        f"{_n(len(result.late), 'late event')}"
    )
    return lines


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


if __name__ == "__main__":
    for line in report(main()):
        print(line)
