"""How fast can CPython run W1 at all?  A hand-written W1 matcher beside flowcep (and Flink).

    python benchmarks/floor.py [--size 200000] [--repeat 3] [--no-flink]

``w1_by_hand`` knows its pattern (``a`` -> ``b`` -> ``c``, followed_by, within 10 ms, no
skip) and nothing else: no NFA, no Dewey versions, no shared buffer, no snapshots, no
bad-record handling, one list per state.  It still does the work every engine must do per
event: call the user's key and timestamp extractors and conditions, buffer the event until the
watermark passes it, time runs out, and build the matches and timeouts it reports.  Its speed
is a ceiling for any general engine written in Python on this interpreter; the script checks
that it finds exactly flowcep's matches and timeouts, so that the ceiling is honest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from handwritten import check_same_results, run_by_hand  # noqa: E402
from run import run_flink, run_flowcep  # noqa: E402
from workloads import WORKLOADS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-flink", action="store_true")
    args = ap.parse_args(argv)
    workload = WORKLOADS["W1"]
    events = workload.events(args.size, args.seed)
    check_same_results(events[: min(len(events), 50_000)])
    runs: dict[str, list[dict[str, Any]]] = {"by hand": [], "flowcep": [], "Flink": []}
    for _ in range(max(1, args.repeat)):  # alternate, so that a slow minute hits all three
        runs["by hand"].append(run_by_hand(events))
        runs["flowcep"].append(run_flowcep(workload, events))
        if not args.no_flink:
            flink = run_flink(workload, events)
            if flink is not None:
                runs["Flink"].append(flink)
    print(f"W1, {len(events):,} events, median of {max(1, args.repeat)} runs")
    counts: set[tuple[int, int]] = set()
    for name, rs in runs.items():
        if not rs:
            continue
        counts.update((r["matches"], r["timeouts"]) for r in rs)
        rate = statistics.median(r["events_per_s"] for r in rs)
        each = ", ".join(f"{r['events_per_s']:,.0f}" for r in rs)
        print(f"  {name:8} {rate:>11,.0f} events/s   ({each})")
    if len(counts) != 1:
        print(f"match and timeout counts differ: {sorted(counts)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
