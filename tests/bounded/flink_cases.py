"""Bounded-class cases with Flink CEP 2.3's answers recorded in flink_cases.json.

``python tests/bounded/flink_cases.py --record`` (needs a JDK 17) runs them on the real Flink
CEP (tests/oracle) and rewrites the JSON file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "flink_cases.json"
ORACLE = HERE.parent / "oracle"


def _events(spec: str) -> list[dict[str, Any]]:
    """``"a:1@0 b:2@1"``: name:price@ts, ids in order."""
    out = []
    for i, tok in enumerate(spec.split()):
        name, rest = tok.split(":")
        price, ts = rest.split("@")
        out.append({"id": i, "key": "k", "name": name, "price": float(price), "volume": 1000, "ts": int(ts)})
    return out


def _case(case_id: str, pattern: list[list[Any]], events: str) -> dict[str, Any]:
    return {"id": case_id, "pattern": pattern, "skip": None, "timeout": False, "out_of_orderness": 0,
            "events": _events(events)}  # fmt: skip


CASES = [
    _case(
        "stock_query_a_b_c_d",
        [
            ["begin", "a"], ["where", "name_eq", "A"], ["where", "price_gt", 10],
            ["followed_by_any", "b"], ["where", "name_eq", "B"], ["where", "lt_last", "a"],
            ["followed_by_any", "c"], ["where", "name_eq", "C"],
            ["followed_by_any", "d"], ["where", "name_eq", "D"], ["where", "gt_last", "c"],
            ["within", 10],
        ],
        "A:12@0 B:11@1 A:9@2 C:5@3 B:13@4 D:6@5 C:7@6 D:6@7 A:15@8 B:14@9 C:1@10 D:2@11 D:9@12",
    ),
    _case(
        "negation_event_also_matches_the_last_step",
        [
            ["begin", "a"], ["where", "name_eq", "A"],
            ["not_followed_by", "n"], ["where", "price_gt", 5],
            ["followed_by_any", "c"], ["where", "name_eq", "C"],
        ],
        "A:1@0 C:9@1 C:1@2 A:1@3 C:1@4 C:9@5",
    ),
    _case(
        "negation_event_also_matches_a_middle_step",
        [
            ["begin", "a"], ["where", "name_eq", "A"],
            ["not_followed_by", "n"], ["where", "price_gt", 5],
            ["followed_by_any", "c"], ["where", "name_eq", "C"],
            ["followed_by_any", "d"], ["where", "name_eq", "D"],
        ],
        "A:1@0 C:9@1 D:1@2 A:1@3 C:1@4 D:1@5 C:9@6 D:1@7",
    ),
    _case(
        "one_or_more_with_combinations_between_steps",
        [
            ["begin", "a"], ["where", "name_eq", "A"],
            ["followed_by_any", "b"], ["where", "name_eq", "B"], ["one_or_more"], ["allow_combinations"],
            ["followed_by_any", "c"], ["where", "name_eq", "C"],
            ["within", 6],
        ],
        "A:1@0 B:1@1 B:2@2 X:0@3 B:3@4 C:1@5 B:4@6 C:1@7",
    ),
    _case(
        "times_or_more_with_combinations_at_the_end_reading_itself",
        [
            ["begin", "a"], ["where", "name_eq", "A"],
            ["followed_by_any", "b"], ["where", "name_eq", "B"], ["where", "gt_last", "b"],
            ["times_or_more", 2], ["allow_combinations"],
        ],
        "A:1@0 B:3@1 B:1@2 B:4@3 B:2@4 B:5@5",
    ),
    _case(
        "times_range_with_combinations_first",
        [
            ["begin", "a"], ["where", "name_eq", "A"], ["times", 1, 3], ["allow_combinations"],
            ["followed_by_any", "b"], ["where", "name_eq", "B"], ["where", "sum_lt", "a", 6],
            ["within", 5],
        ],
        "A:1@0 A:2@1 A:3@2 B:0@3 A:1@4 B:1@5 B:0@6",
    ),
    _case(
        "two_negations_in_one_gap_and_equal_timestamps",
        [
            ["begin", "a"], ["where", "name_eq", "A"],
            ["not_followed_by", "m"], ["where", "name_eq", "M"],
            ["not_followed_by", "n"], ["where", "name_eq", "N"],
            ["followed_by_any", "c"], ["where", "name_eq", "C"],
            ["followed_by_any", "d"], ["where", "name_eq", "D"],
            ["within", 4],
        ],
        "A:1@0 C:1@0 D:1@1 A:1@1 M:1@2 C:1@2 D:1@3 A:1@4 C:1@5 N:1@5 D:1@6 C:1@6 D:1@8",
    ),
]  # fmt: skip


def record() -> None:
    sys.path.insert(0, str(ORACLE))
    import flink_oracle

    results = flink_oracle.get_oracle().run_cases(CASES)
    lines = [
        f" {json.dumps(r['id'])}: {json.dumps(r, sort_keys=True)}"
        for r in sorted(results, key=lambda r: r["id"])
    ]
    RECORDED.write_text("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        record()
    else:
        print(__doc__)
