from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcep.cli_support.timeparse import format_duration, format_timestamp, parse_duration, parse_timestamp

UTC = timezone.utc


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (1772441036000, 1772441036000),
        ("1772441036000", 1772441036000),
        (" -5 ", -5),
        (12.0, 12),
        ("1970-01-01T00:00:01Z", 1000),
        ("1970-01-01T00:00:01.250Z", 1250),
        ("1970-01-01 01:00:00+01:00", 0),
        ("1970-01-02", 86_400_000),
        ("2026-03-02T09:30:00Z", 1772443800000),
        ("2026-03-02T09:30:00", 1772443800000),  # naive = UTC
        (datetime(1970, 1, 1, 0, 0, 2, tzinfo=UTC), 2000),
    ],
)
def test_parse_timestamp(value, expected):
    assert parse_timestamp(value) == expected


@pytest.mark.parametrize("value", ["", "yesterday", "12:30", "2026-13-01", None, True, 1.5, [1]])
def test_parse_timestamp_rejects(value):
    with pytest.raises(ValueError):
        parse_timestamp(value)


def test_format_timestamp_round_trips():
    for ms in (0, 1250, 1772443800000):
        assert parse_timestamp(format_timestamp(ms)) == ms
    assert format_timestamp(1772443800000) == "2026-03-02T09:30:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0),
        ("250", 250),
        (250, 250),
        ("250ms", 250),
        ("5s", 5000),
        ("1.5s", 1500),
        ("2m", 120_000),
        ("2min", 120_000),
        ("1h", 3_600_000),
        ("1h30m", 5_400_000),
        ("1d", 86_400_000),
        ("PT5M", 300_000),
        ("PT0.5S", 500),
        (timedelta(seconds=30), 30_000),
    ],
)
def test_parse_duration(value, expected):
    assert parse_duration(value) == expected


@pytest.mark.parametrize("value", ["", "five seconds", "5 parsecs", "-5s", -1, "s", "P", "1h-5m"])
def test_parse_duration_rejects(value):
    with pytest.raises(ValueError):
        parse_duration(value)


def test_format_duration():
    assert format_duration(3_600_000) == "1h"
    assert format_duration(5_400_000) == "1h30m"
    assert format_duration(250) == "250ms"
    assert format_duration(0) == "0ms"


@given(st.integers(min_value=0, max_value=10**12))
def test_duration_text_round_trips(ms):
    assert parse_duration(format_duration(ms)) == ms


@given(st.integers(min_value=-(10**13), max_value=10**14))
def test_timestamp_text_round_trips(ms):
    assert parse_timestamp(format_timestamp(ms)) == ms
