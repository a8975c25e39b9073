"""Cache misses per event of a workload under PyPy, simulated by valgrind's cachegrind.

    python benchmarks/cachesim.py W5                     # 400,000 events after 400,000
    python benchmarks/cachesim.py W1 --size 200000 --warmup 200000 --python .venv/bin/python

Many-key workloads (W5) are bound by memory latency, and on this machine their wall time moves
by 30 % or more between identical runs. Cachegrind's counts do not: it simulates a first-level
and a last-level data cache (here the last level is set to this machine's 32 MB level 3;
left to itself cachegrind simulated a 256 MB one) and counts the instructions and the misses of
each. Each workload runs twice, timing ``--size`` events and 10,000 events, both after the same
``--warmup``; the difference divided by the difference of the sizes is the cost of an event of
the steady state. Making the events is counted too (the same on both sides of a comparison).
Under valgrind PyPy runs about 30 times slower: the default takes about two minutes.

What it showed first (2026-11-26, eighth session, W5): about 72 last-level misses an event, 30
of them reads; at about 100 ns each, the reads alone are most of W5's 3 microseconds an event.
The writes are mostly fresh nursery lines (PyPy's young generation of 128 MB does not fit).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from jitprof import STREAM_CHILD

HERE = Path(__file__).resolve().parent
PYPY = HERE.parent / ".venv-pypy" / "bin" / "python"
BASE_SIZE = 10_000
LAST_LEVEL = "33554432,16,64"  # 32 MB, 16-way, 64-byte lines: this machine's level 3


_COUNTS = {
    "instructions": r"I\s+refs:\s+([\d,]+)",
    "D1 reads": r"D1\s+misses:\s+[\d,]+\s+\(\s*([\d,]+) rd",
    "D1 writes": r"D1\s+misses:.*\+\s+([\d,]+) wr",
    "LL reads": r"LL\s+misses:\s+[\d,]+\s+\(\s*([\d,]+) rd",
    "LL writes": r"LL\s+misses:.*\+\s+([\d,]+) wr",
}


def simulate(python: str, workload: str, size: int, warmup: int) -> dict[str, int]:
    """Cachegrind's totals for one run of ``workload``: ``size`` events after ``warmup``."""
    code = STREAM_CHILD.format(benchmarks=str(HERE), src=str(HERE.parent / "src"))
    env = dict(os.environ, PYPY_GC_NURSERY="128M")  # the benchmark's tuned collector
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--smc-check=all",  # the JIT writes the code it runs
            f"--LL={LAST_LEVEL}",
            "--cachegrind-out-file=/dev/null",
            python,
            "-c",
            code,
            workload,
            str(size),
            str(warmup),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    totals: dict[str, int] = {}
    for name, pattern in _COUNTS.items():
        found = re.search(pattern, proc.stderr)
        if found is None:
            raise RuntimeError(f"no {name} count in valgrind's output:\n{proc.stderr[-2000:]}")
        totals[name] = int(found.group(1).replace(",", ""))
    return totals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="*", default=["W5"])
    ap.add_argument("--size", type=int, default=400_000, help="events timed (after the warm-up)")
    ap.add_argument("--warmup", type=int, default=400_000)
    ap.add_argument("--python", default=str(PYPY), help="the interpreter (default: .venv-pypy's)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.size <= BASE_SIZE:
        print(f"--size must be more than {BASE_SIZE:,}", file=sys.stderr)
        return 2
    print(f"per event, {args.size:,} events after {args.warmup:,} ({args.python})")
    print(f"{'workload':8} " + " ".join(f"{name:>12}" for name in _COUNTS))
    for name in args.workloads:
        total = simulate(args.python, name, args.size, args.warmup)
        base = simulate(args.python, name, BASE_SIZE, args.warmup)
        events = args.size - BASE_SIZE
        print(f"{name:8} " + " ".join(f"{(total[k] - base[k]) / events:>12,.1f}" for k in _COUNTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
