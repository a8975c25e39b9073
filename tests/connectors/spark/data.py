"""Patterns and event generators shared by the Spark tests (pickled by value to the workers)."""

from __future__ import annotations

import random
from typing import Any

from pyspark.sql import Row

from flowcep import Pattern

SCHEMA = "id long, user string, type string, amount double, ms long"


def abc_pattern(window: int = 40) -> Pattern:
    """a, then one or more b, then c, within ``window`` ms: matches and timeouts."""
    return (
        Pattern.begin("a")
        .where(lambda e: e.type == "a")
        .followed_by("b")
        .where(lambda e: e.type == "b")
        .one_or_more()
        .followed_by("c")
        .where(
            lambda e, ctx: (
                e.type == "c" and e.amount >= sum(x.amount for x in ctx.get_events_for_pattern("a"))
            )
        )
        .within(window)
    )


def absence_pattern(window: int = 30) -> Pattern:
    """a not followed by c within ``window`` ms: a match is released only when the window closes."""
    return (
        Pattern.begin("a")
        .where(lambda e: e.type == "a")
        .not_followed_by("c")
        .where(lambda e: e.type == "c")
        .within(window)
    )


def events(n: int, users: int, seed: int = 7, start: int = 1_000, step: int = 3) -> list[Row]:
    """``n`` rows over ``users`` keys, in ascending event time, distinct timestamps per key."""
    rnd = random.Random(seed)
    rows: list[Row] = []
    t = start
    for i in range(n):
        t += rnd.randint(1, step)
        rows.append(
            Row(
                id=i,
                user=f"u{rnd.randrange(users)}",
                type=rnd.choice("aabbc"),
                amount=float(rnd.randint(1, 9)),
                ms=t,
            )
        )
    return rows


def as_dicts(rows: list[Row]) -> list[dict[str, Any]]:
    return [r.asDict() for r in rows]
