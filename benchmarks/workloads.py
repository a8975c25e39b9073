"""The benchmark workloads W1-W6 of issue 7: events and patterns.

Each workload gives its events (deterministic for a seed and a size) and
builds its pattern twice from one description: as a flowcep ``Pattern`` and
as the oracle's JSON call list, so that flowcep and Flink run the same thing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowcep import AfterMatchSkipStrategy, Pattern


class Event:
    """A benchmark event; slots keep attribute reads cheap on both sides."""

    __slots__ = ("id", "key", "name", "price", "volume", "ts")

    def __init__(self, id: int, key: str, name: str, price: float, volume: int, ts: int) -> None:
        self.id = id
        self.key = key
        self.name = name
        self.price = price
        self.volume = volume
        self.ts = ts

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "key": self.key,
            "name": self.name,
            "price": self.price,
            "volume": self.volume,
            "ts": self.ts,
        }


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    events: Callable[[int, int], list[Event]]  # (size, seed) -> events
    pattern: Callable[[], Pattern]
    calls: list[Any]  # oracle JSON calls (docs/oracle-format.md)
    skip: str = "no_skip"
    default_size: int = 100_000


def _names(size: int, seed: int, alphabet: str, keys: int = 1) -> list[Event]:
    rnd = random.Random(seed)
    choice = rnd.choice
    randrange = rnd.randrange
    return [
        Event(i, f"k{randrange(keys)}" if keys > 1 else "k0", choice(alphabet), 0.0, 0, i)
        for i in range(size)
    ]


def _many_keys(size: int, seed: int, keys: int = 100_000) -> list[Event]:
    """Every key gets its own W1 stream: one event per key per ms, keys round robin."""
    rnd = random.Random(seed)
    choice = rnd.choice
    return [Event(i, f"k{i % keys}", choice("abcd"), 0.0, 0, i // keys) for i in range(size)]


def _is(name: str) -> Callable[[Event], bool]:
    return lambda e: e.name == name


# -- W1 / W5: a -> b -> c within 10 ms ---------------------------------------------
def _abc(skip: AfterMatchSkipStrategy | None = None) -> Pattern:
    return (
        Pattern.begin("a", skip)
        .where(_is("a"))
        .followed_by("b")
        .where(_is("b"))
        .followed_by("c")
        .where(_is("c"))
        .within(10)
    )


_ABC_CALLS: list[Any] = [
    ["begin", "a"],
    ["where", "name_eq", "a"],
    ["followed_by", "b"],
    ["where", "name_eq", "b"],
    ["followed_by", "c"],
    ["where", "name_eq", "c"],
    ["within", 10, "FIRST_AND_LAST"],
]


# -- W2: the seeds' stock query --------------------------------------------------
def _stock_events(size: int, seed: int, symbols: int = 20) -> list[Event]:
    rnd = random.Random(seed)
    prices = [100.0 + rnd.random() * 50 for _ in range(symbols)]
    events = []
    for i in range(size):
        s = i % symbols
        prices[s] = max(1.0, prices[s] + rnd.gauss(0.0, 1.0))
        events.append(Event(i, f"S{s:02d}", "tick", round(prices[s], 2), rnd.randrange(200, 2500), i * 1000))
    return events


def stock_rise(e: Event, ctx: Any) -> bool:
    """First ``a``: volume > 1000; later ``a``: price above the average of earlier ``a``."""
    earlier = ctx.get_events_for_pattern("a")
    if not earlier:
        return bool(e.volume > 1000)
    return bool(e.price > sum(x.price for x in earlier) / len(earlier))


def volume_drop(e: Event, ctx: Any) -> bool:
    """``b``: volume below 80 % of the last ``a``'s volume."""
    earlier = ctx.get_events_for_pattern("a")
    return bool(earlier) and e.volume < 0.8 * earlier[-1].volume


def _stock() -> Pattern:
    return (
        Pattern.begin("a")
        .where(stock_rise)
        .one_or_more()
        .followed_by("b")
        .where(volume_drop)
        .within(3_600_000)
    )


# -- W3: followed_by_any fan-out -------------------------------------------------
def _fan_out() -> Pattern:
    return (
        Pattern.begin("a")
        .where(_is("a"))
        .followed_by_any("b")
        .where(_is("b"))
        .followed_by_any("c")
        .where(_is("c"))
        .within(50)
    )


# -- W4: negations ------------------------------------------------------------------
def _negations() -> Pattern:
    return (
        Pattern.begin("a")
        .where(_is("a"))
        .not_followed_by("b")
        .where(_is("b"))
        .followed_by("c")
        .where(_is("c"))
        .within(20)
    )


def _negation_at_end() -> Pattern:
    return (
        Pattern.begin("a")
        .where(_is("a"))
        .followed_by("c")
        .where(_is("c"))
        .not_followed_by("d")
        .where(_is("d"))
        .within(20)
    )


# -- W6: strict contiguity ----------------------------------------------------------
def _strict() -> Pattern:
    return (
        Pattern.begin("a")
        .where(_is("a"))
        .next("b")
        .where(_is("b"))
        .times(3)
        .consecutive()
        .next("c")
        .where(_is("c"))
    )


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload(
            "W1",
            "one key, a->b->c followed_by within 10 ms, 1 event/ms",
            lambda n, seed: _names(n, seed, "abcd"),
            _abc,
            _ABC_CALLS,
            default_size=200_000,
        ),
        Workload(
            "W2",
            "stock: rising a (iterative) one_or_more -> volume drop b within 1 h, 20 symbols",
            _stock_events,
            _stock,
            [
                ["begin", "a"],
                ["where", "stock_rise"],
                ["one_or_more"],
                ["followed_by", "b"],
                ["where", "volume_drop"],
                ["within", 3_600_000, "FIRST_AND_LAST"],
            ],
            default_size=2_000,
        ),
        Workload(
            "W3",
            "followed_by_any fan-out a->b->c within 50 ms, 10 names",
            lambda n, seed: _names(n, seed, "abcdefghij"),
            _fan_out,
            [
                ["begin", "a"],
                ["where", "name_eq", "a"],
                ["followed_by_any", "b"],
                ["where", "name_eq", "b"],
                ["followed_by_any", "c"],
                ["where", "name_eq", "c"],
                ["within", 50, "FIRST_AND_LAST"],
            ],
            default_size=50_000,
        ),
        Workload(
            "W4a",
            "negation in the middle: a !-> b -> c within 20 ms",
            lambda n, seed: _names(n, seed, "abcd"),
            _negations,
            [
                ["begin", "a"],
                ["where", "name_eq", "a"],
                ["not_followed_by", "b"],
                ["where", "name_eq", "b"],
                ["followed_by", "c"],
                ["where", "name_eq", "c"],
                ["within", 20, "FIRST_AND_LAST"],
            ],
        ),
        Workload(
            "W4b",
            "negation at the end: a -> c !-> d within 20 ms",
            lambda n, seed: _names(n, seed, "abcd"),
            _negation_at_end,
            [
                ["begin", "a"],
                ["where", "name_eq", "a"],
                ["followed_by", "c"],
                ["where", "name_eq", "c"],
                ["not_followed_by", "d"],
                ["where", "name_eq", "d"],
                ["within", 20, "FIRST_AND_LAST"],
            ],
        ),
        Workload(
            "W5",
            "100 000 keys, W1's pattern per key, skip_past_last_event",
            _many_keys,
            lambda: _abc(AfterMatchSkipStrategy.skip_past_last_event()),
            _ABC_CALLS,
            skip="skip_past_last_event",
            default_size=400_000,
        ),
        Workload(
            "W6",
            "strict contiguity: a next b times(3) consecutive next c",
            lambda n, seed: _names(n, seed, "abc"),
            _strict,
            [
                ["begin", "a"],
                ["where", "name_eq", "a"],
                ["next", "b"],
                ["where", "name_eq", "b"],
                ["times", 3],
                ["consecutive"],
                ["next", "c"],
                ["where", "name_eq", "c"],
            ],
            default_size=200_000,
        ),
    ]
}
