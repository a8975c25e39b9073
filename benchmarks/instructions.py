"""Instructions per event of each workload on flowcep, counted by valgrind's cachegrind.

    python benchmarks/instructions.py                 # every workload, its default size here
    python benchmarks/instructions.py --only W1 W3 --size 50000

Wall time on a shared machine moves by 10-20 % between identical runs; the number of
instructions the interpreter executes does not (to a few per mille), so this is the measure to
judge a change of a few per cent by. Each workload runs twice under cachegrind, with its size and
with one event; the difference divided by the size is the cost of an event without the start-up.
Needs ``valgrind`` on the PATH. Garbage-collector time shows only partly here (its cost is
memory latency): measure many-key jobs by wall time too.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# sizes that keep a run under cachegrind (about 50x slower) to seconds
SIZES = {"W1": 20_000, "W2": 1_000, "W3": 20_000, "W4a": 20_000, "W4b": 20_000, "W5": 20_000, "W6": 20_000}

_CHILD = """
import sys
sys.path.insert(0, {benchmarks!r})
sys.path.insert(0, {src!r})
from run import run_flowcep
from workloads import WORKLOADS
workload = WORKLOADS[sys.argv[1]]
result = run_flowcep(workload, workload.events(int(sys.argv[2]), 7))
print(result["matches"], result["timeouts"])
"""


def instructions(workload: str, size: int) -> tuple[int, str]:
    """Instructions of one run of ``workload`` over ``size`` events, and what it printed."""
    code = _CHILD.format(benchmarks=str(HERE), src=str(HERE.parent / "src"))
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-c",
            code,
            workload,
            str(size),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), proc.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="workload names (default: all)")
    ap.add_argument("--size", type=int, help="events per workload (default: its size in SIZES)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    print(f"{'workload':8} {'events':>8} {'matches timeouts':>17} {'instructions/event':>19}")
    for name in args.only or list(SIZES):
        size = args.size or SIZES[name]
        total, counts = instructions(name, size)
        base, _ = instructions(name, 1)
        print(f"{name:8} {size:>8,} {counts:>17} {(total - base) // size:>19,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
