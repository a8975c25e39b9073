"""The multi-pattern operator against the same patterns in separate CepOperators, 1 to N patterns.

    python benchmarks/multipattern.py                      # 60,000 events, 100 keys, 1 2 3 6 patterns
    python benchmarks/multipattern.py --events 200000 --patterns 1 4 8

Events are dicts ``{"k": key, "t": kind, "ts": ms}``, one per millisecond, kinds ``a``..``d`` and
``x`` uniformly. Pattern i is ``kind1 followedBy kind2 within 10 ms`` over the i-th pair of kinds.
Two ways to run the same patterns over the same batches (of ``--batch`` events):

* hosted: one ``MultiPatternOperator`` (the input read once by it, and once by each pattern's
  operator);
* separate: one ``CepOperator`` per pattern, each fed every batch (what one writes without it).

Each cell is events per CPU second of this process (best of ``--repeat``); the match counts of
both are checked equal. Timings are whatever the machine that runs this gives.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from flowcep import MultiPatternOperator, Pattern  # noqa: E402
from flowcep.runtime import CepOperator  # noqa: E402

KINDS = "abcd"
OPTIONS: dict[str, Any] = dict(key_by="k", timestamp="ts")


def events(n: int, keys: int, seed: int = 1) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [{"k": rnd.randrange(keys), "t": rnd.choice(KINDS + "x"), "ts": i} for i in range(n)]


def pattern(first: str, second: str) -> Pattern:
    return (
        Pattern.begin("first")
        .where(lambda e: e["t"] == first)
        .followed_by("second")
        .where(lambda e: e["t"] == second)
        .within(10)
    )


def patterns(n: int) -> dict[str, tuple[int, Pattern]]:
    pairs = itertools.islice(itertools.cycle(itertools.permutations(KINDS, 2)), n)
    return {f"{a}-{b}-{i}": (1, pattern(a, b)) for i, (a, b) in enumerate(pairs)}


def feed(ops: list[Any], stream: list[dict[str, Any]], batch: int) -> tuple[float, int]:
    """CPU seconds and matches of ``ops`` over ``stream``."""
    matches = 0
    start = time.process_time()
    for i in range(0, len(stream), batch):
        chunk = stream[i : i + batch]
        for op in ops:
            matches += sum(1 for o in op.process_elements(chunk) if o.kind == "match")
    for op in ops:
        matches += sum(1 for o in op.flush() if o.kind == "match")
    return time.process_time() - start, matches


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=60_000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--patterns", type=int, nargs="+", default=[1, 2, 3, 6])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    stream = events(args.events, args.keys)
    print(f"{args.events:,} events, {args.keys} keys, batches of {args.batch}; events per CPU second")
    print(f"{'patterns':>8}  {'hosted':>10}  {'separate':>10}  {'ratio':>6}  matches")
    for n in args.patterns:
        chosen = patterns(n)
        hosted = separate = float("inf")
        for _ in range(args.repeat):
            seconds, hosted_matches = feed([MultiPatternOperator(chosen, **OPTIONS)], stream, args.batch)
            hosted = min(hosted, seconds)
            ops = [CepOperator(p, **OPTIONS) for _, p in chosen.values()]
            seconds, separate_matches = feed(ops, stream, args.batch)
            separate = min(separate, seconds)
            if hosted_matches != separate_matches:
                raise SystemExit(
                    f"{n} patterns: {hosted_matches} matches hosted, {separate_matches} separate"
                )
        print(
            f"{n:>8}  {args.events / hosted:>10,.0f}  {args.events / separate:>10,.0f}  "
            f"{separate / hosted:>6.2f}  {hosted_matches:,}"
        )


if __name__ == "__main__":
    main()
