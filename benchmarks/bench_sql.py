"""MATCH_RECOGNIZE against the same pattern written with the Python API, on the same events.

    python benchmarks/bench_sql.py [--events 200000] [--repeat 3]

Both run through ``CEP.pattern`` in event time over one stream of dict rows (100 symbols): the
query's pattern and conditions are compiled by ``flowcep.sql``, the hand-written one uses lambdas
and ``ctx.get_events_for_pattern``. Prints events/s (median of ``--repeat`` runs) and the ratio;
the match counts must agree. Timings are wall-clock on this machine; tests never assert them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from flowcep import CEP, AfterMatchSkipStrategy, Pattern
from flowcep.sql import run

QUERY = """
SELECT * FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY symbol
    ORDER BY ts
    MEASURES A.price AS startPrice, LAST(B.price) AS bottom, C.price AS endPrice, COUNT(B.price) AS drops
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B+ C) WITHIN INTERVAL '10' SECOND
    DEFINE B AS B.price < LAST(B.price, 1) OR (LAST(B.price, 1) IS NULL AND B.price < A.price),
           C AS C.price > LAST(B.price) + 5
)
"""


def hand_written() -> Pattern:
    def falling(e: Any, ctx: Any) -> bool:
        before = ctx.get_events_for_pattern("B")
        if before:
            return bool(e["price"] < before[-1]["price"])
        return bool(e["price"] < ctx.get_events_for_pattern("A")[-1]["price"])

    def rising(e: Any, ctx: Any) -> bool:
        return bool(e["price"] > ctx.get_events_for_pattern("B")[-1]["price"] + 5)

    return (
        Pattern.begin("A", AfterMatchSkipStrategy.skip_past_last_event())
        .next("B")
        .where(falling)
        .one_or_more()
        .consecutive()
        .greedy()
        .next("C")
        .where(rising)
        .within(10_000)
    )


def select(m: dict[str, list[Any]]) -> dict[str, Any]:
    b = m["B"]
    return {
        "symbol": m["A"][0]["symbol"],
        "startPrice": m["A"][0]["price"],
        "bottom": b[-1]["price"],
        "endPrice": m["C"][0]["price"],
        "drops": len(b),
    }


def events(n: int) -> list[dict[str, Any]]:
    rnd = random.Random(7)
    prices = [100] * 100
    out = []
    for i in range(n):
        s = rnd.randrange(100)
        prices[s] = max(1, prices[s] + rnd.randint(-4, 6))
        out.append({"symbol": f"S{s}", "ts": i * 10, "price": prices[s]})
    return out


def timed(fn: Any) -> tuple[float, int]:
    start = time.perf_counter()
    count = sum(1 for _ in fn())
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = events(args.events)
    pattern = hand_written()
    runs: dict[str, list[float]] = {"sql": [], "api": []}
    counts = {}
    for _ in range(args.repeat):
        seconds, counts["sql"] = timed(lambda: run(QUERY, data))
        runs["sql"].append(seconds)
        seconds, counts["api"] = timed(
            lambda: CEP.pattern(
                data, pattern, key_by=lambda e: e["symbol"], timestamp=lambda e: e["ts"]
            ).select(select)
        )
        runs["api"].append(seconds)
    assert counts["sql"] == counts["api"], counts
    rate = {k: args.events / statistics.median(v) for k, v in runs.items()}
    print(f"{args.events} events, {counts['sql']} matches")
    print(f"MATCH_RECOGNIZE  {rate['sql']:>10,.0f} events/s")
    print(f"Python API       {rate['api']:>10,.0f} events/s")
    print(f"ratio API/SQL    {rate['api'] / rate['sql']:.2f}x")


if __name__ == "__main__":
    main()
