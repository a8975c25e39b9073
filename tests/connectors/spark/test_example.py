"""examples/spark_fraud.py runs, in this test run's Spark session, and finds the three frauds."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "spark_fraud.py"


def test_spark_fraud_example(spark):
    example = runpy.run_path(str(EXAMPLE), run_name="spark_fraud_example")
    lines = example["main"](spark)
    assert lines[-1] == "3 suspicious cards; batch and streaming agree: True"
    assert lines[1] == "FRAUD card-1001  probe 1.00 at 11:31:13, then 1320.00 at Lux Watches (RU) at 11:35:33"
    assert [line.split()[1] for line in lines if line.startswith("FRAUD")] == [
        "card-1001",
        "card-1003",
        "card-1007",
    ] * 2
