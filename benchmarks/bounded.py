"""The bounded-data evaluators against the NFA, side by side, on seed 000's and 002's workloads.

    python benchmarks/bounded.py                     # 20,000 ticks, under a minute
    python benchmarks/bounded.py --ticks 1000000     # seed 000's size
    python benchmarks/bounded.py --flink             # also Flink CEP 2.3 (needs a JDK)
    python benchmarks/bounded.py --ticks 1000000 --flink --flink-ticks 100000   # Flink on a prefix
    python benchmarks/bounded.py --gc default        # the interpreter's collector settings

Stock ticks: ``--symbols`` symbols (20), one tick every second on average (exponential gaps),
prices a mean-reverting random walk per symbol, volumes uniform. A step's event type is a symbol (``A`` is
symbol S0, ``B`` S1, ...). Seed 000's query ``PATTERN A;B;C;D WHERE a.price > x AND
a.price > (1+y%)·b.price AND c.price < (1-z%)·d.price WITHIN w`` is written with the
conditions the Flink oracle knows (tests/oracle), so y = z = 0: ``b`` is ``lt_last a`` and
``d`` is ``gt_last c``; ``x`` is the 95th percentile of A's prices, which makes A the rare step
("rare first"). Rows:

- exp 2: 3 to 6 steps, window 2 min;  exp 3: 4 steps, windows 1, 2, 3, 4 and 5 min;
- rare last: the constant condition on the last step instead; no rare step: none at all;
- seed 002: ``A -> !B -> C -> D`` within 2 min (no predicates), and its predicate-placement
  workload ``A -> B -> C -> D`` with a predicate on each adjacent pair.

Every evaluator runs through ``CEP.pattern(ticks, pattern, timestamp="ts", evaluator=...)`` over
the same list; the match counts must agree (the run stops otherwise). Rates are events per CPU
second of this process (``time.process_time``), so that other load on a shared machine counts
less, with flowcep's collector settings for throughput (``tune_gc()``, as ``run.py --gc tuned``
and ``flowcep run`` use them) unless ``--gc default``; Flink's column is its own events/s over
wall time (flink_bench.py). Tests never assert them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "oracle"))

from flowcep_runner import Event, build  # noqa: E402

from flowcep import CEP  # noqa: E402
from flowcep.bounded import plan, timestamps  # noqa: E402
from flowcep.runtime import tune_gc  # noqa: E402

EVALUATORS = ("nfa", "optiseq", "tree", "auto")
MINUTE = 60_000


def ticks(n: int, symbols: int, seed: int = 7) -> list[Event]:
    """``n`` ticks: random symbol, a mean-reverting random walk of prices around 100 per symbol
    (so that comparing two symbols' prices passes about half the time), about one tick a second."""
    rng = random.Random(seed)
    prices = [100.0] * symbols
    out = []
    ts = 0
    for i in range(n):
        s = rng.randrange(symbols)
        prices[s] = 100.0 + 0.95 * (prices[s] - 100.0) + rng.gauss(0.0, 1.0)
        ts += int(rng.expovariate(1.0 / 1000.0))
        out.append(Event(i, "all", f"S{s}", round(prices[s], 2), float(rng.randint(100, 5000)), ts))
    return out


def percentile(events: list[Event], symbol: str, q: float) -> float:
    prices = sorted(e.price for e in events if e.name == symbol)
    return prices[min(len(prices) - 1, int(q * len(prices)))] if prices else 0.0


def stock_query(steps: int, window: int, rare: int | None, x: float) -> list[list[Any]]:
    """Seed 000's query over ``steps`` symbols, the constant ``price > x`` on step ``rare``."""
    calls: list[list[Any]] = []
    for i in range(steps):
        name = chr(ord("a") + i)
        calls.append(["begin", name] if i == 0 else ["followed_by_any", name])
        calls.append(["where", "name_eq", f"S{i}"])
        if rare == i:
            calls.append(["where", "price_gt", x])
        if i == 1:
            calls.append(["where", "lt_last", "a"])  # a.price > b.price
        if i == 3:
            calls.append(["where", "gt_last", "c"])  # c.price < d.price
    calls.append(["within", window])
    return calls


def negation_query(window: int) -> list[list[Any]]:
    """Seed 002's A -> !B -> C -> D."""
    return [
        ["begin", "a"], ["where", "name_eq", "S0"],
        ["not_followed_by", "b"], ["where", "name_eq", "S1"],
        ["followed_by_any", "c"], ["where", "name_eq", "S2"],
        ["followed_by_any", "d"], ["where", "name_eq", "S3"],
        ["within", window],
    ]  # fmt: skip


def placement_query(window: int) -> list[list[Any]]:
    """Seed 002's predicate placement: a predicate on every adjacent pair of A -> B -> C -> D."""
    return [
        ["begin", "a"], ["where", "name_eq", "S0"],
        ["followed_by_any", "b"], ["where", "name_eq", "S1"], ["where", "lt_last", "a"],
        ["followed_by_any", "c"], ["where", "name_eq", "S2"], ["where", "gt_last", "b"],
        ["followed_by_any", "d"], ["where", "name_eq", "S3"], ["where", "lt_last", "c"],
        ["within", window],
    ]  # fmt: skip


def workloads(events: list[Event]) -> list[tuple[str, list[list[Any]]]]:
    out = []
    for steps in (3, 4, 5, 6):
        x = percentile(events, "S0", 0.95)
        out.append((f"exp 2: {steps} steps, 2 min, rare first", stock_query(steps, 2 * MINUTE, 0, x)))
    for minutes in (1, 2, 3, 4, 5):
        x = percentile(events, "S0", 0.95)
        out.append((f"exp 3: 4 steps, {minutes} min, rare first", stock_query(4, minutes * MINUTE, 0, x)))
    out.append(("rare last: 4 steps, 2 min", stock_query(4, 2 * MINUTE, 3, percentile(events, "S3", 0.95))))
    out.append(("no rare step: 4 steps, 2 min", stock_query(4, 2 * MINUTE, None, 0.0)))
    out.append(("seed 002: A -> !B -> C -> D, 2 min", negation_query(2 * MINUTE)))
    out.append(("seed 002: pair predicates, 2 min", placement_query(2 * MINUTE)))
    return out


def measure(events: list[Event], calls: list[list[Any]], evaluator: str) -> tuple[float, int]:
    pattern = build(calls)
    start = time.process_time()
    count = sum(
        1 for _ in CEP.pattern(events, pattern, timestamp="ts", evaluator=evaluator).select(lambda m: m)
    )
    return time.process_time() - start, count


def _ratio(x: float) -> str:
    """``17.2x``, `` 1.0x``, ``.04x`` (five characters)."""
    return f"{x:4.1f}x" if x >= 0.95 else f"{x:.2f}x"[1:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=20_000)
    ap.add_argument("--symbols", type=int, default=20)
    ap.add_argument("--only", help="run the rows whose label contains this text")
    ap.add_argument("--explain", action="store_true", help="print the planner's account of each row")
    ap.add_argument("--repeat", type=int, default=2, help="runs per evaluator (the fastest is kept)")
    ap.add_argument(
        "--flink", action="store_true", help="also run Flink CEP 2.3 (followedByAny), needs a JDK"
    )
    ap.add_argument(
        "--flink-ticks",
        type=int,
        help="Flink over the first N ticks only (its match count is then not compared), for sizes "
        "where its job would run for many minutes",
    )
    ap.add_argument(
        "--gc",
        choices=("tuned", "default"),
        default="tuned",
        help="flowcep's collector settings for throughput, tune_gc() (default), or the interpreter's",
    )
    args = ap.parse_args()
    if args.gc == "tuned":
        tune_gc()
    events = ticks(args.ticks, args.symbols)
    span_min = (events[-1].ts - events[0].ts) / MINUTE
    print(
        f"{args.ticks:,} ticks, {args.symbols} symbols, {span_min:,.0f} min of event time; events/s (x NFA)"
        + (f"; Flink over the first {args.flink_ticks:,}" if args.flink and args.flink_ticks else "")
    )
    columns = list(EVALUATORS) + (["flink"] if args.flink else [])
    header = f"{'workload':40} {'matches':>9} " + " ".join(f"{c:>17}" for c in columns) + "  auto picked"
    print(header)
    print("-" * len(header))
    for label, calls in workloads(events):
        if args.only and args.only not in label:
            continue
        rates: dict[str, float] = {}
        counts = set()
        for _ in range(args.repeat):
            for evaluator in EVALUATORS:
                seconds, count = measure(events, calls, evaluator)
                rates[evaluator] = max(rates.get(evaluator, 0.0), len(events) / seconds)
                counts.add(count)
        if args.flink:
            from flink_bench import run_flink

            part = events[: args.flink_ticks] if args.flink_ticks else events
            result = run_flink({"calls": calls, "warmup_events": min(20_000, len(part))}, part)
            if result is not None:
                rates["flink"] = float(result["events_per_s"])
                if len(part) == len(events):
                    counts.add(int(result["matches"]))
        if len(counts) != 1:
            raise SystemExit(f"{label}: the evaluators disagree on the number of matches: {sorted(counts)}")
        chosen = plan(build(calls), events, timestamps(events, "ts"))
        picked = chosen.evaluator
        cells = []
        for c in columns:
            r = rates.get(c)
            cells.append(f"{r:>9,.0f} ({_ratio(r / rates['nfa'])})" if r is not None else f"{'-':>17}")
        print(f"{label:40} {counts.pop():>9,} " + " ".join(cells) + f"  {picked}")
        if args.explain:
            print("    " + chosen.explain().replace("\n", "\n    "))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
