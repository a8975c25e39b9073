"""Differential testing: random cases through Flink CEP 2.3 and through flowcep, results compared.

    python tests/oracle/differential.py --seed 1 --n 500 [--keep-going] [--out divergences.json]

prints how many cases exercised each feature, then every divergence: a documented deviation
(docs/semantics.md section 10, ``deviations.py``) with its reference, any other with a reduced
case (events and pattern calls dropped while it still diverges). Exit status 1 if any case
diverged that is not a documented deviation.
Results are compared as multisets (see docs/oracle-format.md), each match and timeout with
the watermark that emitted it; when either side reports an error only the errors (exception
class and message) are compared.
"""

from __future__ import annotations

import copy
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
if str(HERE.parents[1] / "src") not in sys.path:
    sys.path.insert(0, str(HERE.parents[1] / "src"))

import flowcep_runner  # noqa: E402
import generate  # noqa: E402
from deviations import known_deviation  # noqa: E402
from flink_oracle import get_oracle  # noqa: E402

FLOWCEP_CASE_TIMEOUT = 60  # seconds; a hang is reported as a divergence


# ---------------------------------------------------------------------- comparing


def canonical(result: dict[str, Any], emitted: bool = False) -> dict[str, Any]:
    """The comparable part of a result: multisets as sorted JSON texts, errors without stage.

    ``emitted``: each match and timeout with when it was emitted (``match_at``, ``timeout_at``:
    the index of the event whose watermark released it, null for the end of input)."""
    err = result.get("error")
    if err:
        return {"error": {"type": err.get("type"), "message": err.get("message")}}
    matches: list[Any] = result["matches"]
    timeouts: list[Any] = result["timeouts"]
    if emitted:
        matches = [[m, at] for m, at in zip(matches, result["match_at"], strict=True)]
        timeouts = [[t, at] for t, at in zip(timeouts, result["timeout_at"], strict=True)]
    return {
        "error": None,
        "matches": sorted(json.dumps(m) for m in matches),
        "timeouts": sorted(json.dumps(t) for t in timeouts),
        "late": sorted(result["late"]),
    }


def both_emitted(flink: dict[str, Any], flowcep: dict[str, Any]) -> bool:
    """Whether both results say when each result was emitted (the oracle does so with its
    default keying, "chain"; samples recorded before it did not)."""
    return all("match_at" in r and "timeout_at" in r for r in (flink, flowcep))


def differences(flink: dict[str, Any], flowcep: dict[str, Any]) -> list[str]:
    """Human-readable differences (empty: identical), emission times included when both
    results have them."""
    if too_big(flink):
        return []
    emitted = both_emitted(flink, flowcep)
    a, b = canonical(flink, emitted), canonical(flowcep, emitted)
    if a == b:
        return []
    if a["error"] or b["error"]:
        return [f"error: Flink {a['error']} / flowcep {b['error']}"]
    out = []
    for part in ("matches", "timeouts", "late"):
        fa, fb = Counter(map(str, a[part])), Counter(map(str, b[part]))
        if fa != fb:
            only_f = list((fa - fb).elements())
            only_p = list((fb - fa).elements())
            out.append(
                f"{part}: only in Flink {only_f[:8]}{' ...' if len(only_f) > 8 else ''}; "
                f"only in flowcep {only_p[:8]}{' ...' if len(only_p) > 8 else ''}"
            )
    return out


def too_big(flink_result: dict[str, Any]) -> bool:
    """Flink's side stopped the case at the oracle's work limit: not compared."""
    err = flink_result.get("error")
    if not err:
        return False
    if err.get("type") == "StackOverflowError" and err.get("stage") == "compile":
        return False  # the compiler's own recursion, not a work limit: compared (semantics.md 10.5)
    return err.get("type") in ("OracleLimitExceeded", "OutOfMemoryError", "StackOverflowError")


def skipped(case: dict[str, Any], why: str = "skipped") -> dict[str, Any]:
    return {
        "id": case["id"],
        "error": {"type": "OracleLimitExceeded", "message": why},
        "matches": [],
        "timeouts": [],
        "late": [],
    }


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def run_flowcep(case: dict[str, Any], timeout: int = FLOWCEP_CASE_TIMEOUT) -> dict[str, Any]:
    """flowcep_runner.run_case with a time limit and unexpected exceptions reported as errors."""
    use_alarm = hasattr(signal, "SIGALRM")
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout)
    try:
        return flowcep_runner.run_case(case)
    except _Timeout:
        return {
            "id": case["id"],
            "error": {"type": "Timeout", "message": f"flowcep took > {timeout} s"},
            "matches": [],
            "timeouts": [],
            "late": [],
        }
    except Exception as exc:  # a bug of the runner or of flowcep outside the guarded calls
        return {
            "id": case["id"],
            "error": {"type": type(exc).__name__, "message": str(exc)},
            "matches": [],
            "timeouts": [],
            "late": [],
        }
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


PROCEED_LOOP = "The pattern loops through PROCEED edges"


def loops_without_taking(flowcep_result: dict[str, Any]) -> bool:
    """flowcep stopped a PROCEED cycle (docs/semantics.md 10.2): Flink would search it forever
    (or until it runs out of memory) without counting a condition evaluation, so such cases
    are not sent to Flink and not compared."""
    err = flowcep_result.get("error") or {}
    return err.get("type") == "FlinkRuntimeException" and (err.get("message") or "").startswith(PROCEED_LOOP)


def screened(run_flink: Callable[[list[dict]], list[dict]]) -> Callable[[list[dict]], list[dict]]:
    """``run_flink`` for the cases flowcep does not stop as PROCEED loops; the others are
    reported as not run (compared as too big)."""

    def run(cases: list[dict]) -> list[dict]:
        loops = [loops_without_taking(run_flowcep(c, timeout=20)) for c in cases]
        sent = [c for c, loop in zip(cases, loops, strict=True) if not loop]
        answers = iter(run_flink(sent) if sent else [])
        return [
            skipped(c, "not run: a PROCEED loop (docs/semantics.md 10.2)") if loop else next(answers)
            for c, loop in zip(cases, loops, strict=True)
        ]

    return run


# ---------------------------------------------------------------------- shrinking


def _remove_call_variants(calls: list[Any]) -> list[list[Any]]:
    """Call lists with one call (or one whole step) removed, at any nesting depth."""
    out: list[list[Any]] = []
    step_ops = ("begin",) + generate.CONTIGUITIES
    # whole steps (a contiguity call and its modifiers)
    starts = [i for i, c in enumerate(calls) if c[0] in step_ops]
    for k, s in enumerate(starts):
        if s == 0:
            continue
        e = starts[k + 1] if k + 1 < len(starts) else len(calls)
        out.append(calls[:s] + calls[e:])
    for i, c in enumerate(calls):
        if c[0] in step_ops:
            if len(c) > 1 and isinstance(c[1], list):
                # shrink inside the group, or replace the group by its first step
                for sub in _remove_call_variants(c[1]):
                    out.append(calls[:i] + [[c[0], sub] + c[2:]] + calls[i + 1 :])
                first = c[1][0]
                if not isinstance(first[1], list):
                    out.append(calls[:i] + [[c[0], first[1]]] + calls[i + 1 :])
            continue
        out.append(calls[:i] + calls[i + 1 :])
        # simplify arguments: drop windows, lower counts
        if c[0] in ("times", "times_or_more", "one_or_more", "within") and len(c) > 1:
            if c[0] == "within" and len(c) > 2:
                out.append(calls[:i] + [c[:2]] + calls[i + 1 :])
            if c[0] == "times" and len(c) > 3:
                out.append(calls[:i] + [c[:3]] + calls[i + 1 :])
            if c[0] == "times_or_more" and len(c) > 2:
                out.append(calls[:i] + [c[:2]] + calls[i + 1 :])
            if c[0] == "one_or_more" and len(c) > 1:
                out.append(calls[:i] + [c[:1]] + calls[i + 1 :])
        if c[0] in ("where", "or", "until") and c[1] not in ("name_eq", None):
            out.append(calls[:i] + [[c[0], "true"]] + calls[i + 1 :])
    return out


def _variants(case: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    events = case["events"]
    n = len(events)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            v = dict(case, events=events[:start] + events[start + size :])
            out.append(v)
        size //= 2
    for calls in _remove_call_variants(case["pattern"]):
        out.append(dict(case, pattern=calls))
    if case.get("skip"):
        out.append(dict(case, skip=None))
        if len(case["skip"]) > 2:
            out.append(dict(case, skip=case["skip"][:2]))
    if case.get("out_of_orderness"):
        out.append(dict(case, out_of_orderness=0))
    if case.get("timeout", True):
        out.append(dict(case, timeout=False))
    keys = {e.get("key") for e in events}
    if len(keys) > 1:
        for k in sorted(keys):
            out.append(dict(case, events=[e for e in events if e.get("key") == k]))
    return out


def _kind(flink: dict[str, Any], mine: dict[str, Any]) -> frozenset[str]:
    return frozenset(d.split(":")[0] for d in differences(flink, mine))


def _size(case: dict[str, Any]) -> tuple[int, int]:
    return (len(json.dumps(case["pattern"])) + 40 * len(case["events"]), len(json.dumps(case)))


def shrink(
    case: dict[str, Any],
    run_flink: Callable[[list[dict]], list[dict]],
    max_rounds: int = 25,
    budget_s: float = 90.0,
) -> dict[str, Any]:
    """Smallest variant found that still diverges (each round: all variants in one Flink batch)."""
    best = copy.deepcopy(case)
    kind = _kind(run_flink([best])[0], run_flowcep(best, timeout=20))
    t0 = time.monotonic()
    for _ in range(max_rounds):
        if time.monotonic() - t0 > budget_s:
            break
        cands = _variants(best)
        for i, c in enumerate(cands):
            c["id"] = f"{case['id']}~{i}"
        flink = run_flink(cands)
        diverging = [
            c
            for c, f in zip(cands, flink, strict=True)
            if not too_big(f) and _kind(f, run_flowcep(c, timeout=20)) == kind
        ]
        if not diverging:
            break
        best = min(diverging, key=_size)
    best["id"] = case["id"] + "-min"
    return best


# ---------------------------------------------------------------------- running


def run(
    seed: int,
    n: int,
    keep_going: bool = True,
    shrink_cases: bool = True,
    batch: int = 100,
    out: str | None = None,
    log: Callable[[str], None] = print,
    cases: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    cases = list(cases) if cases is not None else generate.generate_cases(seed, n)
    oracle = get_oracle()
    report: dict[str, Any] = {"seed": seed, "n": len(cases)}
    with oracle.serve() as server:

        def run_flink(cs: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return screened(lambda sent: server.run_cases(sent, batch=batch))(cs)

        t0 = time.monotonic()
        flink = run_flink(cases)
        t_flink = time.monotonic() - t0
        t0 = time.monotonic()
        mine = [skipped(c) if too_big(f) else run_flowcep(c) for c, f in zip(cases, flink, strict=True)]
        t_flowcep = time.monotonic() - t0
        cov: Counter[str] = generate.coverage(cases)
        for r in flink:
            if too_big(r) and (r["error"]["message"] or "").startswith("not run: a PROCEED loop"):
                cov["skipped:proceed_loop"] += 1
            elif too_big(r):
                cov["skipped:oracle_limit"] += 1
            elif r["error"]:
                cov["flink_error:" + r["error"]["type"]] += 1
            else:
                cov["result:with_matches"] += bool(r["matches"])
                cov["result:with_timeouts"] += bool(r["timeouts"])
                cov["result:with_late"] += bool(r["late"])
        cov["result:matches_total"] = sum(len(r["matches"]) for r in flink)
        cov["result:timeouts_total"] = sum(len(r["timeouts"]) for r in flink)
        report.update(
            flink_seconds=round(t_flink, 2),
            flowcep_seconds=round(t_flowcep, 2),
            coverage=dict(sorted(cov.items())),
        )
        log(
            f"{len(cases)} cases: Flink {t_flink:.1f} s ({len(cases) / max(t_flink, 1e-9):.1f} cases/s), "
            f"flowcep {t_flowcep:.1f} s"
        )
        log("feature coverage (cases exercising each feature):")
        for k, v in sorted(cov.items()):
            log(f"  {k:36} {v}")
        divergences = []
        for case, f, p in zip(cases, flink, mine, strict=True):
            diff = differences(f, p)
            if not diff:
                continue
            known = known_deviation(case, f, p)
            entry: dict[str, Any] = {
                "id": case["id"],
                "differences": diff,
                "known": known,
                "case": case,
                "flink": f,
                "flowcep": p,
            }
            if known:
                divergences.append(entry)
                log(f"\nDIVERGENCE {case['id']} (known: {known}): " + "; ".join(diff))
                continue
            if shrink_cases:
                small = shrink(case, run_flink)
                fs = run_flink([small])[0]
                entry["reduced"] = small
                entry["reduced_flink"] = fs
                entry["reduced_flowcep"] = run_flowcep(small)
                entry["reduced_differences"] = differences(fs, entry["reduced_flowcep"])
            divergences.append(entry)
            log(f"\nDIVERGENCE {case['id']}: " + "; ".join(diff))
            if shrink_cases:
                log("  reduced case: " + json.dumps(entry["reduced"]))
                emitted = both_emitted(entry["reduced_flink"], entry["reduced_flowcep"])
                log("  Flink:   " + json.dumps(canonical(entry["reduced_flink"], emitted)))
                log("  flowcep: " + json.dumps(canonical(entry["reduced_flowcep"], emitted)))
            if not keep_going:
                break
    report["divergences"] = divergences
    known = sum(1 for d in divergences if d["known"])
    log(f"\n{len(divergences)} divergence(s) in {len(cases)} cases, {known} of them documented deviations")
    if out:
        Path(out).write_text(json.dumps(report, indent=1))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--keep-going", action="store_true", help="report every divergence, not only the first")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--batch", type=int, default=100, help="cases per Flink job")
    ap.add_argument("--out", help="write the report (coverage, divergences) as JSON")
    ap.add_argument("--cases", help="run these cases (JSON list) instead of generated ones")
    args = ap.parse_args(argv)
    cases = json.loads(Path(args.cases).read_text()) if args.cases else None
    report = run(
        args.seed,
        args.n,
        keep_going=args.keep_going,
        shrink_cases=not args.no_shrink,
        batch=args.batch,
        out=args.out,
        cases=cases,
    )
    return 1 if any(not d["known"] for d in report["divergences"]) else 0


if __name__ == "__main__":
    sys.exit(main())
