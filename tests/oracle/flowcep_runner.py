"""Run oracle cases through flowcep, with the semantics of FlinkCepOracle.java.

Same condition library, same pattern calls, same watermarks (after every event, the operator
gets ``max_ts - out_of_orderness - 1``; at the end the final watermark), same JSON results,
with when each match and timeout was emitted (``match_at``, ``timeout_at``).
See docs/oracle-format.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from flowcep import AfterMatchSkipStrategy, Pattern, WithinType
from flowcep.runtime import CepOperator

STEP_OPS = ("begin", "next", "followed_by", "followed_by_any", "not_next", "not_followed_by")


class Event:
    """The event of every case (Java: FlinkCepOracle.Event)."""

    __slots__ = ("id", "key", "name", "price", "volume", "ts")

    def __init__(self, id: int, key: str, name: str, price: float, volume: float, ts: int) -> None:
        self.id = id
        self.key = key
        self.name = name
        self.price = price
        self.volume = volume
        self.ts = ts

    def __repr__(self) -> str:
        return f"{self.name}#{self.id}@{self.ts}"


def event_from_json(d: dict[str, Any], idx: int) -> Event:
    return Event(
        d.get("id", idx), d.get("key", "k"), d["name"], d.get("price", 0.0), d.get("volume", 0.0), d["ts"]
    )


# ---------------------------------------------------------------------- conditions


def _events(ctx: Any, step: str) -> list[Any]:
    return list(ctx.get_events_for_pattern(step))


def condition(call: list[Any]) -> Callable[..., bool] | None:
    """["where", kind, args...] -> a flowcep condition (1 argument: simple; 2: iterative)."""
    kind = call[1]
    if kind is None:
        return None
    args = call[2:]
    if kind == "true":
        return lambda e: True
    if kind == "name_eq":
        n = args[0]
        return lambda e: e.name == n
    if kind == "name_ne":
        n = args[0]
        return lambda e: e.name != n
    if kind == "name_in":
        names = tuple(args[0])
        return lambda e: e.name in names
    if kind == "price_gt":
        x = args[0]
        return lambda e: e.price > x
    if kind == "price_lt":
        x = args[0]
        return lambda e: e.price < x
    if kind == "volume_gt":
        x = args[0]
        return lambda e: e.volume > x
    if kind == "volume_lt":
        x = args[0]
        return lambda e: e.volume < x
    step = args[0]
    if kind == "sum_lt":
        limit = args[1]

        def sum_lt(e: Any, ctx: Any) -> bool:
            total = 0.0
            for p in ctx.get_events_for_pattern(step):
                total += p.price
            return total + e.price < limit

        return sum_lt
    if kind == "gt_last":

        def gt_last(e: Any, ctx: Any) -> bool:
            prev = _events(ctx, step)
            return not prev or e.price > prev[-1].price

        return gt_last
    if kind == "lt_last":

        def lt_last(e: Any, ctx: Any) -> bool:
            prev = _events(ctx, step)
            return not prev or e.price < prev[-1].price

        return lt_last
    if kind == "count_lt":
        limit = args[1]
        return lambda e, ctx: len(_events(ctx, step)) < limit
    if kind == "ts_since_first_lt":
        limit = args[1]

        def ts_since_first_lt(e: Any, ctx: Any) -> bool:
            prev = _events(ctx, step)
            return not prev or ctx.timestamp() - prev[0].ts < limit

        return ts_since_first_lt
    if kind == "stock_rise":

        def stock_rise(e: Any, ctx: Any) -> bool:
            prev = _events(ctx, step)
            if not prev:
                return e.volume > 1000
            total = 0.0
            for p in prev:
                total += p.price
            return e.price > total / len(prev)

        return stock_rise
    if kind == "volume_drop":

        def volume_drop(e: Any, ctx: Any) -> bool:
            prev = _events(ctx, step)
            return bool(prev) and e.volume < 0.8 * prev[-1].volume

        return volume_drop
    raise ValueError(f"unknown condition {kind!r}")


# ---------------------------------------------------------------------- patterns


def skip_strategy(skip: list[Any] | None) -> Any:
    if not skip:
        return AfterMatchSkipStrategy.no_skip()
    kind = skip[0]
    throw = len(skip) > 2 and bool(skip[2])
    if kind == "no_skip":
        return AfterMatchSkipStrategy.no_skip()
    if kind == "skip_to_next":
        return AfterMatchSkipStrategy.skip_to_next()
    if kind == "skip_past_last_event":
        return AfterMatchSkipStrategy.skip_past_last_event()
    if kind in ("skip_to_first", "skip_to_last"):
        s = getattr(AfterMatchSkipStrategy, kind)(skip[1])
        return s.throw_exception_on_miss() if throw else s
    raise ValueError(f"unknown skip strategy {kind!r}")


def _has(call: list[Any], i: int) -> bool:
    return len(call) > i and call[i] is not None


def build(
    calls: list[list[Any]], skip: Any = None, conditions: Callable[[list[Any], str], Any] | None = None
) -> Pattern:
    """The flowcep Pattern of a call list (groups are nested call lists); ``conditions(call,
    step)`` makes the conditions (default: the callables of ``condition``)."""
    make = conditions if conditions is not None else (lambda call, step: condition(call))
    p: Any = None
    own = ""  # the step the conditions are for
    for i, c in enumerate(calls):
        op = c[0]
        arg = c[1] if len(c) > 1 else None
        if i == 0 and op != "begin":
            raise ValueError("a pattern starts with begin")
        if op in STEP_OPS:
            own = arg if isinstance(arg, str) else "GroupPattern"
        if op == "begin":
            target = build(arg, conditions=conditions) if isinstance(arg, list) else arg
            p = Pattern.begin(target) if skip is None else Pattern.begin(target, skip)
        elif op in ("next", "followed_by", "followed_by_any"):
            p = getattr(p, op)(build(arg, conditions=conditions) if isinstance(arg, list) else arg)
        elif op in ("not_next", "not_followed_by"):
            p = getattr(p, op)(arg)
        elif op == "where":
            p = p.where(make(c, own))
        elif op == "or":
            p = p.or_(make(c, own))
        elif op == "until":
            p = p.until(make(c, own))
        elif op == "times":
            window = c[3] if _has(c, 3) else None
            if _has(c, 2):
                p = p.times(c[1], c[2], window=window)
            else:
                p = p.times(c[1], window=window)
        elif op == "times_or_more":
            p = p.times_or_more(c[1], window=c[2] if _has(c, 2) else None)
        elif op == "one_or_more":
            p = p.one_or_more(window=c[1] if _has(c, 1) else None)
        elif op in ("optional", "greedy", "consecutive", "allow_combinations"):
            p = getattr(p, op)()
        elif op == "within":
            if _has(c, 2):
                p = p.within(c[1], WithinType[c[2]])
            else:
                p = p.within(c[1])
        else:
            raise ValueError(f"unknown call {op!r}")
    return p  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- running


def _ids(match: dict[str, list[Any]]) -> dict[str, list[int]]:
    return {step: [e.id for e in events] for step, events in match.items()}


def _error(exc: BaseException, stage: str) -> dict[str, Any]:
    return {"type": type(exc).__name__, "message": str(exc), "stage": stage}


LONG_MIN = -(2**63)


def run_case(case: dict[str, Any], pattern: Pattern | None = None) -> dict[str, Any]:
    """One case through flowcep (with ``pattern`` instead of the case's, if given); the result has
    the shape of the Java oracle's."""
    result: dict[str, Any] = {"id": case["id"], "error": None, "matches": [], "timeouts": [], "late": []}
    if pattern is None:
        try:
            pattern = build(case["pattern"], skip_strategy(case.get("skip")))
        except Exception as exc:
            result["error"] = _error(exc, "build")
            return result
    try:
        op = CepOperator(
            pattern,
            key_by=lambda e: e.key,
            out_of_orderness=None,
            timeout_handling=bool(case.get("timeout", True)),
        )
    except Exception as exc:
        result["error"] = _error(exc, "compile")
        return result
    ooo = int(case.get("out_of_orderness", 0))
    # each output with when it was emitted: the index of the event whose watermark released it
    # (None: the end of input), as the oracle's "match_at" and "timeout_at"
    outputs: list[tuple[Any, int | None]] = []
    max_ts = LONG_MIN
    try:
        for idx, d in enumerate(case["events"]):
            e = event_from_json(d, idx)
            emitted = op.process_element(e, timestamp=e.ts)
            if e.ts > max_ts:
                max_ts = e.ts
            emitted += op.process_watermark(max_ts - ooo - 1)
            outputs += [(o, idx) for o in emitted]
        outputs += [(o, None) for o in op.flush()]
    except Exception as exc:
        result["error"] = _error(exc, "runtime")
        return result
    result["match_at"] = []
    result["timeout_at"] = []
    for o, at in outputs:
        if o.kind == "match":
            result["matches"].append(_ids(o.value))
            result["match_at"].append(at)
        elif o.kind == "timeout":
            result["timeouts"].append([_ids(o.value), o.timestamp])
            result["timeout_at"].append(at)
        elif o.kind == "late":
            result["late"].append(o.value.id)
        else:
            result["error"] = {"type": "BadRecord", "message": repr(o.value), "stage": "runtime"}
    return result


def run_cases(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [run_case(c) for c in cases]


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Run oracle cases through flowcep")
    ap.add_argument("cases")
    args = ap.parse_args()
    text = Path(args.cases).read_text()
    cases = (
        json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines() if x]
    )
    for r in run_cases(cases):
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
