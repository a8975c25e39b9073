"""Run a benchmark workload on the real Flink CEP 2.3 (the oracle's bench mode).

``run_flink(workload_spec, events)`` writes the events to a CSV file and runs
``FlinkCepOracle bench`` (tests/oracle/FlinkCepOracle.java): one local Flink job, parallelism 1,
event time with a per-event watermark (max ts - out_of_orderness - 1), ``keyBy(key)``,
``CEP.pattern(...)``, a process function counting matches. ``seconds`` covers the first source
element to the close of the CEP operator (JVM and job start-up excluded), after a warm-up run
over a prefix of the events. See docs/oracle-format.md.

workload_spec: ``{"calls" or "pattern": [...oracle calls...], "skip": "no_skip" | [..],
"out_of_orderness": 0, "time": "event" | "processing", "watermarks": "per_event" | "periodic",
"warmup_events": 20000}``; events: dicts (or objects) with key, name, price, volume, ts.
Returns ``{"events", "matches", "timeouts", "seconds", "events_per_s", "job_seconds", "warmup"}``,
or None (with a message on stderr) when no JDK is available.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ORACLE_DIR = Path(__file__).resolve().parent.parent / "tests" / "oracle"
if str(ORACLE_DIR) not in sys.path:
    sys.path.insert(0, str(ORACLE_DIR))

from flink_oracle import OracleUnavailable, get_oracle  # noqa: E402

# conditions whose step argument may be left out in workload specs (W2: both look at step "a")
_DEFAULT_STEP = {"stock_rise": "a", "volume_drop": "a"}


def _normalize_calls(calls: list[Any]) -> list[Any]:
    out = []
    for c in calls:
        c = list(c)
        if c[0] in ("where", "or", "until") and len(c) == 2 and c[1] in _DEFAULT_STEP:
            c.append(_DEFAULT_STEP[c[1]])
        if len(c) > 1 and isinstance(c[1], list):
            c[1] = _normalize_calls(c[1])
        out.append(c)
    return out


def _normalize_skip(skip: Any) -> list[Any] | None:
    if skip is None or isinstance(skip, list):
        return skip
    return [str(skip)]


def _field(e: Any, name: str) -> Any:
    return e[name] if isinstance(e, dict) else getattr(e, name)


def write_events_csv(events: Iterable[Any], path: Path) -> int:
    n = 0
    with open(path, "w") as f:
        f.write("key,name,price,volume,ts\n")
        for e in events:
            key = str(_field(e, "key"))
            name = str(_field(e, "name"))
            if "," in key or "," in name:
                raise ValueError("keys and names must not contain commas")
            f.write(
                f"{key},{name},{float(_field(e, 'price'))!r},{float(_field(e, 'volume'))!r},{int(_field(e, 'ts'))}\n"
            )
            n += 1
    return n


def run_flink(workload_spec: dict[str, Any], events: Iterable[Any]) -> dict[str, Any] | None:
    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:
        print(f"Flink side unavailable: {exc}", file=sys.stderr)
        return None
    calls = workload_spec.get("pattern") or workload_spec.get("calls")
    if not calls:
        raise ValueError("workload_spec needs 'calls' (or 'pattern'): the oracle call list")
    spec = {
        "pattern": _normalize_calls(calls),
        "skip": _normalize_skip(workload_spec.get("skip")),
        "out_of_orderness": int(workload_spec.get("out_of_orderness", 0)),
        "time": workload_spec.get("time", "event"),
        "watermarks": workload_spec.get("watermarks", "per_event"),
        "warmup_events": int(workload_spec.get("warmup_events", 20_000)),
    }
    with tempfile.TemporaryDirectory(prefix="flowcep-flink-bench-") as tmp:
        path = Path(tmp) / "events.csv"
        n = write_events_csv(events, path)
        result = oracle.run_bench(spec, path)
    if result.get("events") != n:
        raise RuntimeError(f"Flink read {result.get('events')} events, {n} written")
    return result


def main() -> int:
    import argparse
    import json

    ap = argparse.ArgumentParser(description="Run one workload spec (JSON) over events (CSV) on Flink")
    ap.add_argument("spec")
    ap.add_argument("events_csv")
    args = ap.parse_args()
    spec = json.loads(Path(args.spec).read_text())
    spec.setdefault("pattern", spec.pop("calls", None))
    spec["pattern"] = _normalize_calls(spec["pattern"])
    spec["skip"] = _normalize_skip(spec.get("skip"))
    print(json.dumps(get_oracle().run_bench(spec, args.events_csv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
