"""``flowcep.connectors.jsontext.dumps``: row values as the ``events`` column's JSON (pure Python)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal

from flowcep.connectors.jsontext import dumps


def test_times_are_iso_text_decimals_numbers_and_binary_base64() -> None:
    row = {
        "at": datetime(2026, 3, 2, 11, 31, 13, tzinfo=timezone.utc),
        "day": date(2026, 3, 2),
        "amount": Decimal("12.50"),
        "blob": b"\x00\xff",
    }
    assert (
        dumps(row)
        == '{"at": "2026-03-02T11:31:13+00:00", "day": "2026-03-02", "amount": 12.5, "blob": "AP8="}'
    )


def test_nan_and_infinities_are_null() -> None:
    assert dumps({"a": [float("nan"), 1.5, float("inf")]}) == '{"a": [null, 1.5, null]}'


def test_text_is_written_as_is() -> None:
    assert dumps({"city": "Zürich"}) == '{"city": "Zürich"}'
