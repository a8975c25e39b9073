"""Event hierarchies (seed 004): alarms -> incidents -> outages -> escalations, in one pass.

Operators reason in layers. Per datacenter (``key_by="dc"``):

    incident    3 alarms of one host within 2 minutes
    outage      an incident, then an incident of another host, within 10 minutes
    escalation  an outage that nobody acknowledges (a raw ``ack`` event) within 15 minutes

Each layer is a ``Pattern``; ``of_type("incident")`` makes a step read the complex events of a
lower layer, and the composition function gives them attributes (``host``). Every layer is
detected once, in event time, and outages start after the incident before them ended
(docs/semantics.md, section 11). The data (examples/data/outage_events.jsonl) holds background
alarms on 8 hosts in two datacenters over six hours, five incidents, two outages, and one
acknowledgement; ``python examples/server_outages.py --generate`` writes it again.

Run it:  python examples/server_outages.py
or:      flowcep run examples/server_outages.py examples/data/outage_events.jsonl --key dc --timestamp time
         flowcep explain examples/server_outages.py
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from flowcep import Pattern
from flowcep.cli_support.timeparse import format_timestamp
from flowcep.hierarchy import ComplexEvent, Hierarchy, detect, of_type

TITLE = "Server outages, a 3-layer event hierarchy (alarms -> incidents -> outages -> escalations; per datacenter)"
DATA = Path(__file__).resolve().parent / "data" / "outage_events.jsonl"
MINUTE = 60_000


def same_host(event, ctx) -> bool:
    return event["event"] == "alarm" and event["host"] == ctx.get_events_for_pattern("first")[0]["host"]


def other_host(incident: ComplexEvent, ctx) -> bool:
    return incident.host != ctx.get_events_for_pattern("first")[0].host


hierarchy = (
    Hierarchy()
    .define(
        "incident",
        Pattern.begin("first")
        .where(lambda e: e["event"] == "alarm")
        .followed_by("more")
        .where(same_host)
        .times(2)
        .within(2 * MINUTE),
        compose=lambda m: {"host": m["first"][0]["host"]},
    )
    .define(
        "outage",
        Pattern.begin("first")
        .where(of_type("incident"))
        .followed_by("second")
        .where(of_type("incident"))
        .where(other_host)
        .within(10 * MINUTE),
        compose=lambda m: {"hosts": (m["first"][0].host, m["second"][0].host)},
    )
    .define(
        "escalation",
        Pattern.begin("outage")
        .where(of_type("outage"))
        .not_followed_by("ack")
        .where(lambda e: e["event"] == "ack")
        .within(15 * MINUTE),
        compose=lambda m: {"hosts": m["outage"][0].hosts},
    )
)


@dataclass(frozen=True)
class Found:
    level: str
    dc: str
    start: int
    end: int
    what: str


def describe(event: ComplexEvent) -> str:
    if event.type == "incident":
        return event.host
    return " + ".join(event.hosts)


def main(data: Path = DATA) -> list[Found]:
    events = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    out = detect(
        hierarchy,
        events,
        key_by="dc",
        timestamp="time",
        out_of_orderness=0,
        emit=["incident", "outage", "escalation"],
    )
    return [
        Found(o.level, o.key, o.value.start, o.value.end, describe(o.value)) for o in out if o.kind == "match"
    ]


def report(found: list[Found]) -> list[str]:
    lines = [
        f"{f.level:<10} {f.dc}  {format_timestamp(f.start)[11:19]}-{format_timestamp(f.end)[11:19]}  {f.what}"
        for f in sorted(found, key=lambda f: (f.start, f.level))
    ]
    counts = {level: sum(f.level == level for f in found) for level in ("incident", "outage", "escalation")}
    lines.append(", ".join(f"{n} {level}s" for level, n in counts.items()))
    return lines


def generate(seed: int = 29) -> list[dict]:
    """Six hours from 2026-03-02 08:00 UTC: a lone alarm on a random host every ~10 minutes, and
    the bursts below (three alarms of one host within a minute: an incident)."""
    rng = random.Random(seed)
    start = 1772438400000  # 2026-03-02T08:00:00Z
    hosts = {"eu": ["eu-1", "eu-2", "eu-3", "eu-4"], "us": ["us-1", "us-2", "us-3", "us-4"]}
    events = []
    t = start
    while t < start + 360 * MINUTE:
        dc = rng.choice(["eu", "us"])
        events.append({"time": t, "dc": dc, "host": rng.choice(hosts[dc]), "event": "alarm"})
        t += rng.randint(8, 12) * MINUTE
    bursts = [  # (minute, dc, host): incidents; two close ones of different hosts make an outage
        (40, "eu", "eu-2"),
        (45, "eu", "eu-3"),  # outage eu-2 + eu-3, acknowledged at minute 52
        (150, "us", "us-1"),
        (230, "us", "us-4"),
        (236, "us", "us-2"),  # outage us-4 + us-2, never acknowledged: an escalation
    ]
    for minute, dc, host in bursts:
        for second in (0, 20, 45):
            events.append(
                {
                    "time": start + minute * MINUTE + second * 1000 + 500,
                    "dc": dc,
                    "host": host,
                    "event": "alarm",
                }
            )
    events.append({"time": start + 52 * MINUTE, "dc": "eu", "host": "-", "event": "ack"})
    return sorted(events, key=lambda e: e["time"])


if __name__ == "__main__":
    if "--generate" in sys.argv:
        DATA.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in generate()))
    for line in report(main()):
        print(line)
