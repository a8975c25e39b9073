"""Quickstart: find brute-force logins with flowcep's embedded runtime.

Three failed logins of one user followed by a successful one, all within one minute.
Run it: ``python examples/quickstart.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from flowcep.pattern import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import CEP


@dataclass(frozen=True)
class Login:
    user: str
    ok: bool
    ts: int  # epoch milliseconds


EVENTS = [
    Login("alice", False, 1_000),
    Login("bob", False, 2_000),
    Login("alice", False, 3_000),
    Login("alice", False, 4_000),
    Login("bob", True, 5_000),  # bob: only one failure before success
    Login("alice", True, 9_000),  # alice: three failures, then success -> match
    Login("carol", False, 10_000),
    Login("carol", False, 20_000),
    Login("carol", False, 30_000),
    Login("carol", True, 95_000),  # carol: too late, more than a minute after the first failure
]

BRUTE_FORCE = (
    Pattern.begin("failures", AfterMatchSkipStrategy.skip_past_last_event())
    .where(lambda e: not e.ok)
    .times(3)
    .followed_by("success")
    .where(lambda e: e.ok)
    .within(timedelta(minutes=1))
)


def describe(match: dict[str, list[Login]]) -> str:
    failures = match["failures"]
    success = match["success"][0]
    return f"{success.user}: {len(failures)} failures from t={failures[0].ts} then success at t={success.ts}"


def main() -> None:
    alerts = CEP.pattern(EVENTS, BRUTE_FORCE, key_by=lambda e: e.user, timestamp=lambda e: e.ts)
    for alert in alerts.select(describe):
        print(alert)


if __name__ == "__main__":
    main()
