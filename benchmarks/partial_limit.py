"""A start every millisecond under a one-hour window, for an hour of event time, with a limit on
partial matches: state and work per event over the run (issue 32, item 1).

    python benchmarks/partial_limit.py                       # 3.6 M events, limit 100, .venv
    python benchmarks/partial_limit.py --limit 1000 --policy drop_newest --skip next
    python benchmarks/partial_limit.py --minutes 10 --unbounded   # the same without a limit
    python benchmarks/partial_limit.py --seconds 60 --keys 1000 --limit 1000 --per-operator

Every event is an ``a`` that starts a partial match of ``a followedBy b within 1 h``; no ``b``
ever comes, so without a limit the key would hold 3.6 million partial matches at the end. Per
``--every`` minutes of event time it prints the partial matches, shared-buffer entries and
window timers the operator holds, the partial matches dropped, the ``b`` condition's calls per
event (an iterative condition: asked once per partial match and event, the NFA's work), the
memory Python has allocated (tracemalloc, with ``--trace``: slower) and events/s. ``--skip
next`` uses skip_to_next, whose keys keep the reference-counted shared buffer; the default,
no_skip, keeps partial matches in the runs. ``--keys N`` spreads the starts over N keys in turn,
and ``--per-operator`` makes the limit the operator's instead of each key's: past it, each start
drops the oldest partial match of all keys.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from flowcep import AfterMatchSkipStrategy, Pattern  # noqa: E402
from flowcep.runtime import CepOperator, PartialMatchLimit, tune_gc  # noqa: E402

HOUR = 3_600_000
MINUTE = 60_000


def rss_mb() -> float:
    """The process's resident memory now (Linux), in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=int, default=60, help="event time to run (default: 60)")
    parser.add_argument("--limit", type=int, default=100, help="partial matches per key (default: 100)")
    parser.add_argument("--policy", default="drop_oldest", choices=["drop_oldest", "drop_newest"])
    parser.add_argument("--skip", default="no", choices=["no", "next"])
    parser.add_argument("--every", type=int, default=5, help="minutes between report lines (default: 5)")
    parser.add_argument("--trace", action="store_true", help="report tracemalloc's current bytes")
    parser.add_argument("--unbounded", action="store_true", help="no limit (Flink's behaviour)")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="gc.collect() before each line (PyPy's RSS then shows live memory)",
    )
    parser.add_argument("--seconds", type=int, default=0, help="run this many seconds of event time instead")
    parser.add_argument("--keys", type=int, default=1, help="keys the starts go to in turn (default: 1)")
    parser.add_argument(
        "--per-operator", action="store_true", help="the limit bounds the operator, not each key"
    )
    args = parser.parse_args()

    calls = [0]

    def b(event: Any, ctx: Any) -> bool:
        calls[0] += 1
        return event[0] == "b"

    skip = AfterMatchSkipStrategy.skip_to_next() if args.skip == "next" else AfterMatchSkipStrategy.no_skip()
    pattern = Pattern.begin("a", skip).where(lambda e: e[0] == "a").followed_by("b").where(b).within(HOUR)
    bound = {"per_operator" if args.per_operator else "per_key": args.limit}
    limit = None if args.unbounded else PartialMatchLimit(**bound, policy=args.policy)
    keys = args.keys
    key_by = None if keys == 1 else (lambda e: e[1] % keys)
    op = CepOperator(pattern, timestamp=lambda e: e[1], key_by=key_by, partial_match_limit=limit)
    tune_gc()
    if args.trace:
        import tracemalloc  # (CPython only)

        tracemalloc.start()
    print(
        f"{sys.implementation.name} {sys.version.split()[0]}, limit "
        f"{'none' if limit is None else f'{args.limit} per {next(iter(bound))[4:]}, {args.policy}'}, "
        f"skip {args.skip}, keys {keys}"
    )
    print(
        "minute  events      partial  entries  timers  dropped     calls/event  traced_MB  rss_MB  events/s"
    )
    step = args.every * MINUTE
    total_ms = args.minutes * MINUTE
    if args.seconds:
        step = total_ms = args.seconds * 1_000
        step = max(1_000, step // 5)
    began = last_time = time.perf_counter()
    last_calls = 0
    for start in range(1, total_ms + 1, step):
        # in calls of 10,000 (as benchmarks/steady.py): the rate is the operator's, not the call's
        for t in range(start, start + step, 10_000):
            op.process_elements([("a", u) for u in range(t, min(t + 10_000, start + step))])
        now = time.perf_counter()
        if args.collect:
            gc.collect()
        stats = op.stats()
        timers = sum(len(ks.timers) for ks in op._keys.values())
        traced = f"{tracemalloc.get_traced_memory()[0] / 1e6:9.2f}" if args.trace else "        -"  # noqa: F821
        print(
            f"{(start + step - 1) / MINUTE:6.2f}  {stats['events_in']:10,d}  {stats['partial_matches']:7,d}  "
            f"{stats['shared_buffer_entries']:7,d}  {timers:6,d}  {stats['dropped_partial_matches']:10,d}"
            f"  {(calls[0] - last_calls) / step:11.1f}  {traced}  {rss_mb():6.0f}  {step / (now - last_time):8,.0f}",
            flush=True,
        )
        last_calls = calls[0]
        last_time = now
    total = time.perf_counter() - began
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{total_ms:,} events in {total:.0f} s ({total_ms / total:,.0f} events/s), peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
