"""One operator over many events, its rate per chunk: how fast a workload runs once warm.

    python benchmarks/steady.py W1                       # 4 M events under .venv-pypy's PyPy
    python benchmarks/steady.py W4a --size 2000000 --python .venv/bin/python

``run.py`` times whole runs, which are too short for PyPy's steady state on most workloads.
This feeds one operator ``--size`` events (made before the timing, all kept in memory, as in
``run.py``) in calls of 10,000, and prints events/s per ``--chunk`` events, with the collector
settings of ``run.py --gc tuned`` (``tune_gc()``, and ``PYPY_GC_NURSERY`` for PyPy). Its summary
is the median, lowest and highest rate of the chunks after ``--skip`` events. Chunk rates on a
shared machine move with the machine: on this one even a constant loop varies by 1.7x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from workloads import WORKLOADS  # noqa: E402

from flowcep.runtime import CepOperator, tune_gc  # noqa: E402
from flowcep.runtime.gctuning import PYPY_NURSERY  # noqa: E402

PYPY = HERE.parent / ".venv-pypy" / "bin" / "python"


def chunk_rates(name: str, size: int, chunk: int, seed: int) -> list[float]:
    """Events/s of one operator over each ``chunk`` of ``size`` events of workload ``name``."""
    tune_gc()
    workload = WORKLOADS[name]
    events = workload.events(size, seed)
    op = CepOperator(workload.pattern(), key_by=lambda e: e.key, timestamp=lambda e: e.ts)
    rates = []
    for start in range(0, size - chunk + 1, chunk):
        began = time.perf_counter()
        for i in range(start, start + chunk, 10_000):
            op.process_elements(events[i : min(i + 10_000, start + chunk)])
        rates.append(chunk / (time.perf_counter() - began))
    return rates


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", nargs="?", default="W1", choices=sorted(WORKLOADS))
    ap.add_argument("--size", type=int, default=4_000_000)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--skip", type=int, default=1_000_000, help="events before the summary's chunks")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--python", default=str(PYPY), help="interpreter (default: .venv-pypy's PyPy)")
    ap.add_argument("--here", action="store_true", help=argparse.SUPPRESS)  # the child
    args = ap.parse_args(argv)
    if args.chunk < 10_000 or args.chunk % 10_000 or args.size < args.chunk:
        ap.error("--chunk must be a multiple of 10,000 and at most --size")
    if not args.here:
        env = dict(os.environ, PYPY_GC_NURSERY=os.environ.get("PYPY_GC_NURSERY", PYPY_NURSERY))
        forwarded = [args.workload, "--size", str(args.size), "--chunk", str(args.chunk)]
        forwarded += ["--skip", str(args.skip), "--seed", str(args.seed), "--here"]
        return subprocess.run([args.python, __file__, *forwarded], env=env, check=False).returncode
    rates = chunk_rates(args.workload, args.size, args.chunk, args.seed)
    print(f"{args.workload} on {sys.implementation.name}, events/s per {args.chunk:,} events:")
    print(" ".join(f"{rate / 1000:.0f}k" for rate in rates))
    kept = rates[args.skip // args.chunk :]
    if kept:
        print(
            f"after {args.skip:,} events: median {statistics.median(kept):,.0f}, "
            f"lowest {min(kept):,.0f}, highest {max(kept):,.0f} events/s ({len(kept)} chunks)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
