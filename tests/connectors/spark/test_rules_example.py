"""examples/spark_fraud_rules.py runs in this test run's Spark session: its rule directory is
edited between two micro-batches of a running query, with JSON rule files and the default loader."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "spark_fraud_rules.py"


def test_spark_fraud_rules_example(spark, tmp_path):
    example = runpy.run_path(str(EXAMPLE), run_name="spark_fraud_rules_example")
    assert example["main"](spark, tmp_path) == [
        "probe-then-big v1  card-1001  11:31:13-11:35:33  1.00 (ES) -> 1320.00 (RU)",
        "probe-then-big v1  card-1003  14:02:31-14:10:00  1.00 (DE) -> 1899.00 (BR)",
        # after the edit, without restarting the query
        "probe-then-big-home v1  card-1002  16:20:19-16:25:19  2.50 (ES) -> 820.00 (ES)",
        "probe-then-big v2  card-1007  19:03:50-19:06:30  1.50 (IT) -> 640.00 (GB)",
        # no big-spree alert for card-1007's 640.00 and 980.00: the rule was deleted first
        "4 alerts",
    ]
