"""Where PyPy's compiled code spends its operations, per source line: a profile for the JIT.

    python benchmarks/jitprof.py W1                 # 1 M events after 400,000 of warm-up
    python benchmarks/jitprof.py W3 --size 600000 --warmup 200000 --lines 60
    python benchmarks/jitprof.py --log FILE --size N    # read a log made before

Line profilers do not work on PyPy and vmprof gives functions only, with the JIT's inlining
blurring them. This runs a workload under PyPy (``.venv-pypy``) with ``PYPYLOG=jit-log-opt,
jit-backend-counts``: the log holds every compiled loop and bridge, its operations each under
the source line they came from, and how often each loop and bridge was entered. An operation
counts once per entry of its loop or bridge (an estimate: a guard that fails early leaves the
rest undone), divided by the events. Runtime calls (dict lookups, string compares) cost far more
than one operation each, so they are listed apart.

What it showed first (2026-11-26, W1): an inner loop of one turn costs about 150 operations
(the trace leaves and re-enters compiled code), so one element per timestamp goes through
without a loop; names in a generated function's globals dict were dict lookups on every use.
The counts move by a few per cent between runs of the same code (memory layout, hash order):
judge changes of more than that, and confirm them in wall time. Until 2026-11-26 (sixth session)
the child made its events per chunk and shifted their timestamps, which for W5 was another
stream (10,000 keys, every run timing out between chunks): W5 profiles from before then mostly
show ``advance_time`` and the making of new keys. On W5's own stream (code of 834aaec) the NFA's
``process`` takes about 560 of about 1,650 operations per event of flowcep's: its run loop, and
the decisions with their 3.8 string comparisons per event (the conditions ``e.name == "a"``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYPY = HERE.parent / ".venv-pypy" / "bin" / "python"

# the child that feeds one operator the workload's own stream in calls of 10,000 events: argv
# workload, size (after the warm-up), warm-up (cachesim.py runs it too)
STREAM_CHILD = """
import sys
sys.path.insert(0, {benchmarks!r})
sys.path.insert(0, {src!r})
from workloads import WORKLOADS
from flowcep.runtime import CepOperator
workload = WORKLOADS[sys.argv[1]]
size, warmup, chunk = int(sys.argv[2]), int(sys.argv[3]), 10_000
op = CepOperator(workload.pattern(), key_by=lambda e: e.key, timestamp=lambda e: e.ts)
# the workload's own stream, made before and kept, as run.py and steady.py do (events made per
# chunk with shifted timestamps gave W5 10,000 keys whose runs all timed out between chunks)
events = workload.events(size + warmup, 7)
for j in range(0, size + warmup, chunk):
    op.process_elements(events[j : j + chunk])
"""

_BLOCK = re.compile(r"\{jit-log-opt-(loop|bridge)\n(.*?)\n\[[0-9a-f]+\] jit-log-opt-(?:loop|bridge)\}", re.S)
_COUNTS = re.compile(r"\{jit-backend-counts\n(.*?)\n\[[0-9a-f]+\] jit-backend-counts\}", re.S)
_MERGE = re.compile(r"debug_merge_point\(.*'(.*?);(.*?):\d+-(\d+)~#\d+ \w+'")
_CALL = re.compile(r"call_\w+\(ConstClass\((\w+)\)")


def profile(log: str) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Operations per source line, runtime calls per source line, calls per callee and line."""
    found = _COUNTS.search(log)
    if found is None:
        raise ValueError("no jit-backend-counts section in the log")
    counts: dict[str, int] = {}
    for line in found.group(1).splitlines():
        name, _, value = line.rpartition(":")
        counts[name.strip()] = int(value)
    ops: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    callees: Counter[str] = Counter()
    for block in _BLOCK.finditer(log):
        kind, lines = block.group(1), block.group(2).splitlines()
        if kind == "bridge":
            guard = re.search(r"Guard (0x[0-9a-f]+)", lines[0])
            entries = counts.get(f"bridge {int(guard.group(1), 16)}", 0) if guard else 0
        else:
            loop = re.search(r"# Loop (\d+)", lines[0])
            entries = counts.get(f"entry {loop.group(1)}", 0) if loop and "entry bridge" in lines[0] else 0
        where = "?"
        for line in lines[1:]:
            merge = _MERGE.search(line)
            if merge is not None:
                where = f"{merge.group(2).rsplit('/', 1)[-1]}:{merge.group(3)} {merge.group(1)}"
                continue
            if "label(" in line:  # a loop's body: counted by its own entries
                token = re.search(r"TargetToken\((\d+)\)", line)
                if token is not None:
                    entries = counts.get(f"TargetToken({token.group(1)})", 0)
                continue
            if entries and re.match(r"\s*\+\d+:", line):
                ops[where] += entries
                if "call_" in line:
                    calls[where] += entries
                    callee = _CALL.search(line)
                    callees[f"{callee.group(1) if callee else '?'} @ {where}"] += entries
    return ops, calls, callees


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", nargs="?", default="W1")
    ap.add_argument("--size", type=int, default=1_000_000, help="events profiled (after the warm-up)")
    ap.add_argument("--warmup", type=int, default=400_000)
    ap.add_argument("--lines", type=int, default=40, help="source lines shown")
    ap.add_argument("--pypy", default=str(PYPY))
    ap.add_argument("--log", help="read this PYPYLOG file instead of running")
    args = ap.parse_args(argv)
    if args.log is None:
        log_path = f"/tmp/flowcep-jitprof-{args.workload}.log"
        code = STREAM_CHILD.format(benchmarks=str(HERE), src=str(HERE.parent / "src"))
        env = dict(os.environ, PYPYLOG=f"jit-log-opt,jit-backend-counts:{log_path}")
        env.setdefault("PYTHONHASHSEED", "0")
        subprocess.run(
            [args.pypy, "-c", code, args.workload, str(args.size), str(args.warmup)], env=env, check=True
        )
        total_events = args.size + args.warmup
    else:
        log_path = args.log
        total_events = args.size
    ops, calls, callees = profile(Path(log_path).read_text())
    n = total_events
    by_function: Counter[str] = Counter()
    for where, count in ops.items():
        by_function[where.split(":")[0] + " " + where.rsplit(" ", 1)[-1]] += count
    print(
        f"{sum(ops.values()) / n:,.0f} operations and {sum(calls.values()) / n:,.1f} runtime calls per event"
    )
    print("\nper function (file, name)")
    for name, count in by_function.most_common(20):
        print(f"{count / n:9.1f}  {name}")
    print("\nper source line: operations, runtime calls")
    for where, count in ops.most_common(args.lines):
        print(f"{count / n:9.1f} {calls[where] / n:6.2f}  {where}")
    print("\nruntime calls per event, by callee")
    for name, count in callees.most_common(20):
        print(f"{count / n:9.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
