"""``flowcep run`` end to end beside the embedded runtime on the same file, in one run.

    python benchmarks/bench_cli.py [--lines 1000000] [--keys 1000] [--per-ms 1] [--seed 7]
                                   [--repeat 1] [--python PATH] [--dir DIR] [--cli-only]
                                   [--src DIR]

The file is the one a new user tries first: a CSV of ``--lines`` logins (``ts`` in integer
milliseconds, ``--per-ms`` events a millisecond; ``user`` one of ``--keys``; ``action``;
``amount``), and a pattern file with two failed logins (``times(2)``) followed by a login that
succeeds, within 5 s. The command runs as a user runs it, in a child process (``--python``, by
default this interpreter), keyed by ``user``, its JSON lines written to a file; it is timed
from start to exit. The embedded runtime is ``CEP.pattern`` over the same records, read from
the file before the clock starts, with ``select`` (no timeouts: the rate the issue compares
against) and again with ``select`` and a ``timeout_fn`` (the matching work the command does,
which writes timeouts too). Under the same collector settings as the command (``tuned_gc``).
``--src DIR`` measures the flowcep sources in DIR (another checkout's, for a before/after).

It prints events per second of wall time and per CPU second (user + system time of the
process: steadier than wall time on a shared machine) of each, and the command's rate as a
share of the embedded one (the goal: at least 0.5). The counts of matches and timeouts must
agree, or the script exits with 1. Timings are whatever the machine gives; tests never assert
them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# --src: the flowcep sources to measure (another checkout's, for a before/after table)
SRC = Path(sys.argv[sys.argv.index("--src") + 1]) if "--src" in sys.argv else HERE.parent / "src"
sys.path.insert(0, str(SRC))

from flowcep import CEP  # noqa: E402
from flowcep.cli_support.inputs import read_events  # noqa: E402
from flowcep.runtime.gctuning import tuned_gc  # noqa: E402

PATTERN_FILE = """\
from datetime import timedelta

from flowcep import Pattern

pattern = (
    Pattern.begin("failed").where(lambda e: e.action == "fail").times(2)
    .followed_by("login").where(lambda e: e.action == "ok")
    .within(timedelta(seconds=5))
)
"""
ACTIONS = ("fail", "ok", "view", "pay")
WEIGHTS = (0.15, 0.15, 0.6, 0.1)


def write_input(path: Path, lines: int, keys: int, seed: int, per_ms: int) -> None:
    """The CSV: ``per_ms`` events a millisecond, users at random, seeded."""
    rng = random.Random(seed)
    users = [f"u{i:04d}" for i in range(keys)]
    start = 1_772_438_400_000  # 2026-03-02T08:00:00Z
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("ts,user,action,amount\n")
        chunk: list[str] = []
        for n in range(lines):
            i = n // per_ms
            action = rng.choices(ACTIONS, WEIGHTS)[0]
            amount = f"{rng.random() * 500:.2f}" if action == "pay" else ""
            chunk.append(f"{start + i},{rng.choice(users)},{action},{amount}\n")
            if len(chunk) == 10_000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))


Timing = tuple[float, float]  # seconds of wall-clock time, of CPU time


def run_cli(python: str, pattern: Path, data: Path, out: Path) -> tuple[Timing, dict[str, int]]:
    """Seconds from start to exit of ``flowcep run``, and the kinds of its output lines."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    command = [python, "-m", "flowcep.cli", "run", str(pattern), str(data)]
    command += ["-k", "user", "-t", "ts", "-o", str(out), "--quiet"]
    before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    seconds = time.perf_counter() - started, _children_cpu() - before
    counts: dict[str, int] = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            kind = json.loads(line)["kind"]
            counts[kind] = counts.get(kind, 0) + 1
    return seconds, counts


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_embedded(pattern: Any, records: list[Any], timeouts: bool) -> tuple[Timing, dict[str, int]]:
    """Seconds of ``CEP.pattern`` over ``records``, and how many matches (and timeouts) came out."""
    counts = {"match": 0, "timeout": 0}

    def on_timeout(partial: Any, timestamp: int) -> None:
        counts["timeout"] += 1

    with tuned_gc():
        started, cpu = time.perf_counter(), time.process_time()
        stream = CEP.pattern(records, pattern, key_by="user", timestamp="ts")
        results = stream.select(lambda m: m, timeout_fn=on_timeout if timeouts else None)
        for _ in results:
            counts["match"] += 1
        seconds = time.perf_counter() - started, time.process_time() - cpu
    return seconds, counts


def median_run(
    repeat: int, run: Callable[[], tuple[Timing, dict[str, int]]]
) -> tuple[Timing, dict[str, int]]:
    runs = [run() for _ in range(repeat)]
    wall = statistics.median(s[0] for s, _ in runs)
    cpu = statistics.median(s[1] for s, _ in runs)
    return (wall, cpu), runs[0][1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--per-ms", type=int, default=1, help="events a millisecond (more: more matches per key and window)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the median is reported")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs `flowcep run`")
    ap.add_argument("--dir", help="where the input, pattern and output files go (default: a temporary one)")
    ap.add_argument("--cli-only", action="store_true", help="only `flowcep run` (e.g. under a profiler)")
    ap.add_argument("--src", help="the flowcep sources to measure (default: this checkout's src)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.dir or tmp)
        where.mkdir(parents=True, exist_ok=True)
        per_ms = "" if args.per_ms == 1 else f"-{args.per_ms}ms"
        data = where / f"logins-{args.lines}-{args.keys}-{args.seed}{per_ms}.csv"
        if not data.exists():
            write_input(data, args.lines, args.keys, args.seed, args.per_ms)
        pattern_path = where / "failed_logins.py"
        pattern_path.write_text(PATTERN_FILE, encoding="utf-8")
        out = where / "out.jsonl"

        print(
            f"{args.lines:,} lines, {args.keys:,} keys, {args.per_ms} a ms, seed {args.seed}; {sys.implementation.name} "
            f"{sys.version.split()[0]} (the command: {args.python})"
        )
        rows: list[tuple[str, Timing, dict[str, int]]] = []
        cli_s, cli_counts = median_run(args.repeat, lambda: run_cli(args.python, pattern_path, data, out))
        rows.append(("flowcep run (read, match, write)", cli_s, cli_counts))
        if not args.cli_only:
            namespace: dict[str, Any] = {"__name__": "__flowcep__"}
            exec(compile(PATTERN_FILE, str(pattern_path), "exec"), namespace)
            records = read_events(data)
            for label, timeouts in (
                ("CEP.pattern, select", False),
                ("CEP.pattern, select + timeout_fn", True),
            ):
                seconds, counts = median_run(
                    args.repeat,
                    lambda t=timeouts: run_embedded(namespace["pattern"], records, t),  # type: ignore[misc]
                )
                rows.append((label, seconds, counts))

    print("| run | wall s | events/s | CPU s | events/CPU s | matches | timeouts |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, (wall, cpu), counts in rows:
        print(
            f"| {label} | {wall:.2f} | {args.lines / wall:,.0f} | {cpu:.2f} | {args.lines / cpu:,.0f} | "
            f"{counts.get('match', 0):,} | {counts.get('timeout', 0):,} |"
        )
    if args.cli_only:
        return 0
    for label, i in (("select", 1), ("select + timeout_fn", 2)):
        wall, cpu = rows[i][1]
        print(
            f"flowcep run / embedded ({label}): {wall / cli_s[0]:.2f}x by wall time, "
            f"{cpu / cli_s[1]:.2f}x by CPU time"
        )
    print("(goal: flowcep run at least 0.5x the embedded rate with select)")
    agree = cli_counts.get("match") == rows[1][2]["match"] == rows[2][2]["match"]
    agree = agree and cli_counts.get("timeout", 0) == rows[2][2]["timeout"]
    if not agree:
        print("the counts of matches or timeouts differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
