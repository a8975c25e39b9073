"""Seeded random oracle cases: patterns covering every builder feature, small keyed streams.

``generate_cases(seed, n)`` is reproducible: the same seed and n give the same cases. The
case format is documented in docs/oracle-format.md; ``features(case)`` names the builder and
stream features one case exercises (used for the coverage summary).
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from typing import Any

LETTERS = "abcd"

SIMPLE_ITERATIVE = ("sum_lt", "gt_last", "lt_last", "count_lt", "ts_since_first_lt")
ITERATIVE_KINDS = frozenset(SIMPLE_ITERATIVE + ("stock_rise", "volume_drop"))
CONTIGUITIES = ("next", "followed_by", "followed_by_any", "not_next", "not_followed_by")
GROUP_OK = ("next", "followed_by", "followed_by_any")
QUANTIFIERS = ("times", "times_or_more", "one_or_more")
STEP_OPS = ("begin",) + CONTIGUITIES


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counter = 0
        self.names: list[str] = []  # every step name, groups included
        self.alphabet = LETTERS[: rng.choice((2, 3, 3, 4))]

    def name(self) -> str:
        if self.names and self.rng.random() < 0.015:
            return self.rng.choice(self.names)  # duplicate: Flink rejects it
        n = f"p{self.counter}"
        self.counter += 1
        self.names.append(n)
        return n

    def letter(self) -> str:
        return self.rng.choice(self.alphabet)

    def condition(self, op: str, own: str, earlier: list[str], looping: bool) -> list[Any]:
        r = self.rng.random()
        if r < 0.55:
            return [op, "name_eq", self.letter()]
        if r < 0.63:
            return [op, "name_in", sorted(self.rng.sample(self.alphabet, 2))]
        if r < 0.67:
            return [op, "name_ne", self.letter()]
        if r < 0.75:
            return [op, self.rng.choice(("price_gt", "price_lt")), self.rng.randint(2, 8)]
        if r < 0.77:
            return [op, "true"]
        refs = earlier + ([own] * 3 if looping else [own])
        step = self.rng.choice(refs)
        kind = self.rng.choice(SIMPLE_ITERATIVE)
        if kind == "sum_lt":
            return [op, kind, step, self.rng.randint(6, 25)]
        if kind == "count_lt":
            return [op, kind, step, self.rng.randint(1, 4)]
        if kind == "ts_since_first_lt":
            return [op, kind, step, self.rng.randint(1, 6)]
        return [op, kind, step]

    def window(self) -> int:
        return self.rng.randint(2, 12)

    def step(self, op: str, depth: int, earlier: list[str], prev: dict[str, bool]) -> list[list[Any]]:
        """Calls of one step (op = begin or a contiguity); ``prev`` describes the step before and
        is updated to describe this one. Combinations Flink rejects are drawn only rarely."""
        rng = self.rng
        negated = op in ("not_next", "not_followed_by")
        group = not negated and depth < 2 and rng.random() < (0.18 if depth == 0 else 0.1)
        calls: list[list[Any]] = []
        if group:
            sub = self.pattern(depth + 1, rng.randint(1, 3), earlier)
            calls.append([op, sub])
            own = None
        else:
            own = self.name()
            calls.append([op, own])
        # quantifier
        quant: list[list[Any]] = []
        q = None
        r = rng.random()
        if negated:
            if r < 0.03:
                q = "times"
                quant.append(["times", 2])
            elif r < 0.05:
                quant.append(["optional"])
        elif r < 0.38:
            pass
        elif r < 0.50:
            q = "times"
            quant.append(["times", rng.randint(1, 3)])
        elif r < 0.62:
            q = "times"
            a = rng.randint(0 if rng.random() < 0.15 else 1, 2)
            quant.append(["times", a, a + rng.randint(0, 2)])
        elif r < 0.74:
            q = "times_or_more"
            quant.append(["times_or_more", rng.randint(1, 3)])
        else:
            q = "one_or_more"
            quant.append(["one_or_more"])
        looping = q in ("times_or_more", "one_or_more")
        if q is not None and rng.random() < 0.15:
            w = rng.randint(1, 8)  # quantifier window
            c = quant[0]
            if c[0] == "times":
                quant[0] = ["times", c[1], c[2] if len(c) > 2 else None, w]
            elif c[0] == "times_or_more":
                quant[0] = ["times_or_more", c[1], w]
            else:
                quant[0] = ["one_or_more", w]
        mods: list[list[Any]] = []
        rare = 0.02  # probability of a combination Flink rejects
        optional = False
        greedy = False
        if not negated:
            if rng.random() < (0.3 if q else 0.15) and (not prev.get("greedy") or rng.random() < rare):
                mods.append(["optional"])
                optional = True
            inner = None
            if q and rng.random() < 0.4:
                inner = "consecutive" if rng.random() < 0.55 else "allow_combinations"
                mods.append([inner])
                if rng.random() < rare:
                    mods.append(["allow_combinations" if inner == "consecutive" else "consecutive"])
            if (looping or q) and rng.random() < 0.22:
                if (not group and inner != "allow_combinations") or rng.random() < rare:
                    mods.append(["greedy"])
                    greedy = True
            if not q and rng.random() < 0.02:
                mods.append([rng.choice(("greedy", "consecutive", "allow_combinations"))])
            if rng.random() < 0.1:
                rng.shuffle(mods)
        prev["optional"] = optional
        prev["greedy"] = greedy
        conds: list[list[Any]] = []
        if own is not None:
            if rng.random() < 0.95:
                conds.append(self.condition("where", own, earlier, looping))
            if rng.random() < 0.15:
                conds.append(self.condition("where", own, earlier, looping))
            if rng.random() < 0.15:
                conds.append(self.condition("or", own, earlier, looping))
            if rng.random() < 0.005:
                conds.append(["where", None])
        elif rng.random() < 0.02:
            conds.append(["where", "name_eq", self.letter()])  # a group refuses where
        until: list[list[Any]] = []
        if (looping and rng.random() < 0.25) or rng.random() < 0.005:
            until.append(["until", "name_eq", self.letter()])
            if rng.random() < 0.03:
                until.append(["until", "price_gt", 5])
        order = [calls, conds, quant, mods, until]
        out = calls + conds + quant + mods + until
        if rng.random() < 0.05:
            # conditions after the quantifier, or until before modifiers: the order Flink allows
            out = order[0] + order[2] + order[1] + order[4] + order[3]
        if rng.random() < 0.08:
            if rng.random() < 0.5:
                out.append(["within", self.window() + 6, "FIRST_AND_LAST"])
            else:
                out.append(["within", rng.randint(1, 4), "PREVIOUS_AND_CURRENT"])
        if own is not None:
            earlier.append(own)
        return out

    def pattern(self, depth: int, n_steps: int, earlier: list[str]) -> list[list[Any]]:
        rng = self.rng
        calls: list[list[Any]] = []
        prev: dict[str, bool] = {}
        for i in range(n_steps):
            if i == 0:
                op = "begin"
            else:
                op = rng.choices(CONTIGUITIES, weights=(22, 30, 16, 12, 14))[0]
                if op.startswith("not_") and prev.get("optional") and rng.random() > 0.05:
                    op = rng.choice(GROUP_OK)
            calls += self.step(op, depth, earlier, prev)
        return calls


def _gen_skip(rng: random.Random, names: list[str], top: list[str]) -> list[Any] | None:
    r = rng.random()
    if r < 0.3:
        return None
    if r < 0.38:
        return ["no_skip"]
    if r < 0.52:
        return ["skip_to_next"]
    if r < 0.68:
        return ["skip_past_last_event"]
    kind = "skip_to_first" if rng.random() < 0.5 else "skip_to_last"
    # Flink looks the name up among the top-level steps only
    pool = top if top and rng.random() < 0.9 else names
    target = rng.choice(pool) if pool and rng.random() < 0.98 else "nowhere"
    if rng.random() < 0.3:
        return [kind, target, True]
    return [kind, target]


def _gen_events(rng: random.Random, alphabet: str, n: int) -> tuple[list[dict[str, Any]], int]:
    keys = ["k0", "k1", "k2"][: rng.choice((1, 2, 2, 3))]
    # timestamp 0 is special in Flink (no window timer for a match starting at ts <= 0): sometimes
    ts = first = 0 if rng.random() < 0.12 else 1
    # sometimes keys take turns, a few events each, with jumps in time: one key's state empties
    # while the others move the watermark past the window timers it left (issue 35)
    turns = len(keys) > 1 and rng.random() < 0.3
    key = rng.choice(keys)
    events = []
    for i in range(n):
        if i:
            ts += rng.choice((0, 0, 1, 1, 1, 1, 2, 3))
            if turns and rng.random() < 0.5:
                key = rng.choice(keys)
                ts += rng.choice((0, 1, 2))
        events.append(
            {
                "id": i,
                "key": key if turns else rng.choice(keys),
                "name": rng.choice(alphabet),
                "price": rng.randint(1, 9),
                "volume": rng.randint(500, 1500),
                "ts": ts,
            }
        )
    ooo = 0
    if rng.random() < 0.35:
        ooo = rng.choice((0, 1, 2, 3))
        for e in events:
            if rng.random() < 0.25:
                e["ts"] = max(first, e["ts"] - rng.randint(1, 4))
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 3)):
                j = rng.randrange(n - 1) if n > 1 else 0
                if n > 1:
                    events[j], events[j + 1] = events[j + 1], events[j]
        for i, e in enumerate(events):
            e["id"] = i
    return events, ooo


def _has_op(calls: list[Any], ops: set[str]) -> bool:
    for c in calls:
        if c[0] in ops:
            return True
        if len(c) > 1 and isinstance(c[1], list) and _has_op(c[1], ops):
            return True
    return False


def calls_end_with_not_followed_by(calls: list[Any]) -> bool:
    last = [c for c in calls if c[0] in STEP_OPS][-1]
    return bool(last[0] == "not_followed_by")


def gen_stale_timer_case(rng: random.Random, case_id: str) -> dict[str, Any]:
    """A case of the shape of issue 35: keys take turns in short bursts; a key's partial matches
    end (its state empties) while its window timer stays, it starts another partial match whose
    gap window (PREVIOUS_AND_CURRENT, not timer-driven) runs out, and other keys move the
    watermark past the first timer, which in Flink advances the key there."""
    g = _Gen(rng)
    g.alphabet = "abc"[: rng.choice((2, 3))]
    calls: list[list[Any]] = [["begin", g.name()], ["where", "name_eq", "a"]]
    if rng.random() < 0.3:
        calls.append(["where", "price_lt", rng.randint(4, 9)])
    op = rng.choice(("next", "followed_by", "followed_by", "followed_by_any", "not_next", "not_followed_by"))
    calls += [[op, g.name()], ["where", "name_eq", rng.choice(("b", "c"))]]
    if op in GROUP_OK and rng.random() < 0.3:
        calls.append(rng.choice((["optional"], ["times", 1, 2], ["one_or_more"])))
    if rng.random() < 0.25:
        calls += [["followed_by", g.name()], ["where", "name_eq", rng.choice(g.alphabet)]]
    calls += [
        ["within", rng.randint(8, 16), "FIRST_AND_LAST"],
        ["within", rng.randint(1, 3), "PREVIOUS_AND_CURRENT"],
    ]
    keys = ["k0", "k1", "k2"][: rng.choice((2, 2, 3))]
    key = rng.choice(keys)
    ts = 1
    events = []
    for i in range(rng.randint(10, 24)):
        if i:
            ts += rng.choice((1, 1, 2))
            if rng.random() < 0.6:
                key = rng.choice(keys)
        events.append(
            {
                "id": i,
                "key": key,
                "name": rng.choice(g.alphabet),
                "price": rng.randint(1, 9),
                "volume": rng.randint(500, 1500),
                "ts": ts,
            }
        )
    skip = rng.choice((None, None, ["skip_past_last_event"], ["skip_to_next"]))
    return {"id": case_id, "pattern": calls, "skip": skip, "timeout": rng.random() < 0.85, "events": events}


def gen_case(rng: random.Random, case_id: str) -> dict[str, Any]:
    if rng.random() < 0.1:
        return gen_stale_timer_case(rng, case_id)
    g = _Gen(rng)
    n_steps = rng.choices((1, 2, 3, 4), weights=(8, 35, 40, 17))[0]
    calls = g.pattern(0, n_steps, [])
    explosive = _has_op(calls, {"allow_combinations", "followed_by_any"}) and _has_op(
        calls, {"one_or_more", "times_or_more", "times"}
    )
    r = rng.random()
    if calls_end_with_not_followed_by(calls) and rng.random() < 0.85:
        r = 0.0  # notFollowedBy at the end needs a window
    if explosive and rng.random() < 0.8:
        r = 0.0
    if r < 0.5:
        calls.append(["within", g.window(), "FIRST_AND_LAST"])
        if rng.random() < 0.25:
            # and a gap window: its timeouts are not timer-driven, a stale window timer may
            # release them (issue 35)
            calls.append(["within", rng.randint(1, 4), "PREVIOUS_AND_CURRENT"])
    elif r < 0.62:
        calls.append(["within", rng.randint(1, 5), "PREVIOUS_AND_CURRENT"])
    elif r < 0.66:
        calls.append(["within", g.window()])
    n_events = rng.randint(6, 12) if explosive else rng.randint(8, 24)
    events, ooo = _gen_events(rng, g.alphabet, n_events)
    case: dict[str, Any] = {
        "id": case_id,
        "pattern": calls,
        "skip": _gen_skip(rng, g.names, [c[1] for c in calls if c[0] in STEP_OPS and isinstance(c[1], str)]),
        "timeout": rng.random() < 0.85,
        "out_of_orderness": ooo,
        "events": events,
    }
    return case


def generate_cases(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [gen_case(rng, f"s{seed}-{i}") for i in range(n)]


# ---------------------------------------------------------------------- features


def _step_features(calls: list[Any], depth: int, out: set[str]) -> None:
    prev_quant: str | None = None
    last_op = None
    step_quant: str | None = None
    for c in calls:
        op = c[0]
        if op in ("begin",) + CONTIGUITIES:
            if op in ("not_next", "not_followed_by"):
                if step_quant in ("looping", "times"):
                    out.add("negation_after_quantifier")
                if depth:
                    out.add("negation_in_group")
            prev_quant = step_quant
            step_quant = None
            last_op = op
            out.add(op)
            if len(c) > 1 and isinstance(c[1], list):
                out.add("group")
                if depth:
                    out.add("nested_group")
                if op == "begin":
                    out.add("group_at_begin")
                _step_features(c[1], depth + 1, out)
                last_op = "group:" + op
        elif op in ("where", "or", "until"):
            out.add(op)
            if c[1] in ITERATIVE_KINDS:
                out.add("iterative_condition")
                out.add("cond:" + c[1])
            if c[1] is None:
                out.add("null_condition")
        elif op in QUANTIFIERS:
            step_quant = "times" if op == "times" else "looping"
            if op == "times":
                out.add("times_range" if len(c) > 2 and c[2] is not None else "times")
            else:
                out.add(op)
            if (
                (op == "times" and len(c) > 3)
                or (op == "times_or_more" and len(c) > 2)
                or (op == "one_or_more" and len(c) > 1)
            ):
                out.add("quantifier_window")
            if last_op and last_op.startswith("group:"):
                out.add("looping_group" if op != "times" else "times_group")
        elif op == "within":
            wt = c[2] if len(c) > 2 else "FIRST_AND_LAST"
            out.add("within_" + wt.lower())
        else:
            out.add(op)
    del prev_quant
    if depth == 0 and last_op in ("not_next", "not_followed_by"):
        out.add(last_op + "_at_end")


def features(case: dict[str, Any]) -> set[str]:
    """The builder and stream features a case exercises."""
    out: set[str] = set()
    _step_features(case["pattern"], 0, out)
    skip = case.get("skip")
    out.add("skip:" + (skip[0] if skip else "no_skip"))
    if skip and len(skip) > 2 and skip[2]:
        out.add("throw_exception_on_miss")
    events = case.get("events", [])
    ts = [e["ts"] for e in events]
    if any(b < a for a, b in zip(ts, ts[1:], strict=False)):
        out.add("out_of_order_events")
    if len(set(ts)) < len(ts):
        out.add("equal_timestamps")
    if len({e.get("key") for e in events}) > 1:
        out.add("multiple_keys")
        runs = sum(1 for x, y in zip(events, events[1:], strict=False) if x.get("key") == y.get("key"))
        if runs * 2 >= len(events):
            out.add("keys_take_turns")
    windows = {c[2] if len(c) > 2 else "FIRST_AND_LAST" for c in case["pattern"] if c[0] == "within"}
    if len(windows) == 2:
        out.add("both_window_types")
    if case.get("out_of_orderness"):
        out.add("out_of_orderness>0")
    if not case.get("timeout", True):
        out.add("no_timeout_handler")
    return out


def coverage(cases: list[dict[str, Any]]) -> Counter[str]:
    c: Counter[str] = Counter()
    for case in cases:
        c.update(features(case))
    return c


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Print seeded random oracle cases as JSON")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--coverage", action="store_true", help="print the feature counts instead")
    args = ap.parse_args()
    cases = generate_cases(args.seed, args.n)
    if args.coverage:
        for k, v in sorted(coverage(cases).items()):
            print(f"{k:32} {v}")
    else:
        json.dump(cases, sys.stdout)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
