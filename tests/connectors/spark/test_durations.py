"""The Spark connector reads durations with the reader every API shares (no Spark job runs)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flowcep.connectors.spark.values import duration_ms


@pytest.mark.parametrize(
    ("value", "ms"),
    [(None, 0), (500, 500), ("500 ms", 500), ("10 seconds", 10_000), ("1h30m", 5_400_000), ("PT5M", 300_000),
     ("1.5s", 1500), (timedelta(minutes=2), 120_000)],
)  # fmt: skip
def test_duration_ms_reads_every_form(value, ms):
    assert duration_ms(value, "out_of_orderness") == ms


def test_duration_ms_refuses_a_negative_duration_naming_the_argument():
    with pytest.raises(ValueError, match="state_ttl cannot be negative"):
        duration_ms("-1s", "state_ttl")
