"""``detect(..., max_partial_matches_per_key=...)``: the runtime's partial-match limit in Spark."""

from __future__ import annotations

from typing import Any

from flowcep.connectors.spark import detect
from flowcep.runtime import PartialMatchLimit

from .conftest import reference, spark_results
from .data import SCHEMA, abc_pattern, events


def test_batch_drops_what_the_runtime_drops_and_outputs_it_as_kind_dropped(spark: Any) -> None:
    rows = events(600, users=3, seed=5)
    df = spark.createDataFrame(rows, SCHEMA)
    out = detect(
        df,
        abc_pattern(window=200),
        key="user",
        timestamp="ms",
        max_partial_matches_per_key=2,
        on_partial_match_limit="drop_newest",
    ).collect()
    got = spark_results(out)
    want = reference(
        rows,
        abc_pattern(window=200),
        key="user",
        partial_match_limit=PartialMatchLimit(2, None, "drop_newest"),
    )
    assert got == want
    assert {kind for kind, *_ in got} == {"match", "timeout", "dropped"}
    unbounded = reference(rows, abc_pattern(window=200), key="user")
    assert sum(n for (kind, *_), n in got.items() if kind == "match") < sum(
        n for (kind, *_), n in unbounded.items() if kind == "match"
    )
