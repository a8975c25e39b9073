"""``flowcep demo``: run the examples on their bundled data and show what they find."""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path
from typing import IO, Any

from flowcep.cli_support.errors import EXIT_OK, EXIT_RUNTIME, CliError
from flowcep.cli_support.loader import RUN_NAME

EXAMPLES = ("stock_trend.py", "server_alerts.py", "card_fraud.py", "flink_port_local.py", "server_outages.py")


def find_examples_dir(explicit: str | None = None) -> Path:
    """The examples directory: ``explicit``, else ``./examples``, else the one next to the sources."""
    candidates = []
    if explicit:
        candidates.append(Path(explicit))
    else:
        candidates.append(Path.cwd() / "examples")
        import flowcep

        candidates.append(Path(flowcep.__file__).resolve().parents[2] / "examples")
    for c in candidates:
        if all((c / name).exists() for name in EXAMPLES):
            return c
    where = ", ".join(str(c) for c in candidates)
    raise CliError(
        f"cannot find the examples (looked in {where}); the demo runs from a source checkout: "
        "git clone the project and run `make demo` there, or pass --examples DIR",
        EXIT_RUNTIME,
    )


def _count_rows(path: Path) -> int:
    with open(path, "rb") as f:
        n = sum(1 for line in f if line.strip())
    return n - 1 if path.suffix == ".csv" else n


def run_example(path: Path) -> tuple[dict[str, Any], Any, float]:
    """Run one example's ``main()``; returns its namespace, its result and the seconds taken."""
    namespace = runpy.run_path(str(path), run_name=RUN_NAME)
    started = time.perf_counter()
    result = namespace["main"]()
    return namespace, result, time.perf_counter() - started


def run_demo(examples_dir: str | None = None, out: IO[str] | None = None) -> int:
    out = out if out is not None else sys.stdout
    directory = find_examples_dir(examples_dir)
    total_started = time.perf_counter()
    total_events = 0
    print(
        "flowcep demo: the examples on their bundled data, with the embedded runtime (no Spark, no JVM)",
        file=out,
    )
    failures = 0
    for i, name in enumerate(EXAMPLES, 1):
        path = directory / name
        try:
            namespace, result, seconds = run_example(path)
        except Exception as e:  # show the others even if one breaks
            failures += 1
            print(f"\n{i}. {name}: FAILED: {type(e).__name__}: {e}", file=out)
            continue
        data = namespace.get("DATA")
        events = _count_rows(Path(data)) if data and Path(data).exists() else 0
        total_events += events
        title = namespace.get("TITLE", name)
        rel = path.relative_to(directory.parent) if directory.parent in path.parents else path
        print(f"\n{i}. {title}", file=out)
        source = f"   {rel}"
        if data:
            source += f" on {Path(data).name} ({events:,} events, {seconds * 1000:.0f} ms)"
        print(source, file=out)
        for line in namespace["report"](result):
            print(f"   {line}", file=out)
    elapsed = time.perf_counter() - total_started
    print(
        f"\n{total_events:,} events in {elapsed:.2f} s. Next: `flowcep explain examples/stock_trend.py`, "
        "`flowcep run --help`, and README.md.",
        file=out,
    )
    return EXIT_OK if not failures else EXIT_RUNTIME
