"""Patterns, functions and event streams shared by the PyFlink job tests and the embedded runtime.

They live in an importable module (shipped to the Python workers with ``add_python_file``), so
the very same objects run inside Flink and in ``flowcep.runtime``.
"""

from __future__ import annotations

import random
from typing import Any

from flowcep import Pattern
from flowcep.runtime import OutputTag, PatternProcessFunction, TimedOutPartialMatchHandler

TIMEOUTS = OutputTag("timeouts")


def kind_is(kind: str) -> Any:
    def condition(event: Any) -> bool:
        return bool(event[1] == kind)

    return condition


def rising(event: Any, ctx: Any) -> bool:
    """Iterative condition: the value exceeds every value taken by ``b`` so far."""
    return event[1] == "b" and all(event[3] > e[3] for e in ctx.get_events_for_pattern("b"))


def ts_list(events: list[Any]) -> list[int]:
    return [e[2] for e in events]


def abc_pattern() -> Pattern:
    """a -> b -> c within 20 ms (relaxed contiguity): matches and timeouts."""
    return (
        Pattern.begin("a")
        .where(kind_is("a"))
        .followed_by("b")
        .where(kind_is("b"))
        .followed_by("c")
        .where(kind_is("c"))
        .within(20)
    )


def rising_pattern() -> Pattern:
    """a, then one or more rising b's (iterative condition), then c, within 30 ms."""
    return (
        Pattern.begin("a")
        .where(kind_is("a"))
        .next("b")
        .where(rising)
        .one_or_more()
        .followed_by("c")
        .where(kind_is("c"))
        .within(30)
    )


def any_pattern() -> Pattern:
    """a followed by any b: followedByAny, no window."""
    return Pattern.begin("a").where(kind_is("a")).followed_by_any("b").where(kind_is("b"))


class Describe(PatternProcessFunction, TimedOutPartialMatchHandler):
    """Matches to the main output, timeouts to ``TIMEOUTS``, with key and timestamp."""

    def process_match(self, match: dict[str, list[Any]], ctx: Any, out: Any) -> None:
        out.collect(
            ("match", ctx.get_current_key(), ctx.timestamp(), {k: ts_list(v) for k, v in match.items()})
        )

    def process_timed_out_match(self, match: dict[str, list[Any]], ctx: Any) -> None:
        ctx.output(
            TIMEOUTS,
            ("timeout", ctx.get_current_key(), ctx.timestamp(), {k: ts_list(v) for k, v in match.items()}),
        )


def select_ts(match: dict[str, list[Any]]) -> Any:
    return (match["a"][0][0], {k: ts_list(v) for k, v in match.items()})


def timeout_ts(match: dict[str, list[Any]], timestamp: int) -> Any:
    return (match["a"][0][0], timestamp, {k: ts_list(v) for k, v in match.items()})


def flat_pairs(match: dict[str, list[Any]], out: Any) -> None:
    for a in match["a"]:
        for b in match["b"]:
            out.collect((a[0], a[2], b[2]))


def random_events(seed: int, keys: int = 4, count: int = 400, disorder: int = 5) -> list[tuple[Any, ...]]:
    """(key, kind, ts, value) with timestamps roughly 1 ms apart and up to ``disorder`` ms out of order.

    Timestamps are unique: with a parallel upstream, Flink does not keep the arrival order of
    records, and records with equal timestamps are matched in arrival order.
    """
    rng = random.Random(seed)
    events = []
    used: set[int] = set()
    for i in range(count):
        ts = 1_000 + i + rng.randint(0, disorder)
        while ts in used:
            ts += 1
        used.add(ts)
        events.append((f"k{rng.randrange(keys)}", rng.choice("aabbcx"), ts, rng.randint(0, 9)))
    return events
