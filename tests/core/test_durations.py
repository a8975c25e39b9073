"""One duration reader for every API (flowcep.pattern.durations): what it reads, what it refuses."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flowcep import Pattern
from flowcep.pattern import IllegalArgumentException, WithinType, parse_duration
from flowcep.pattern.durations import to_millis, window_millis
from flowcep.pattern.quantifier import Times


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        (250, 250),
        (250.0, 250),
        ("250", 250),
        (" 250 ", 250),
        ("250ms", 250),
        ("500 milliseconds", 500),
        ("1 millis", 1),
        ("5s", 5000),
        ("10 s", 10_000),
        ("10 seconds", 10_000),
        ("1 sec", 1000),
        ("1.5s", 1500),
        ("0.3s", 300),
        ("2m", 120_000),
        ("2 min", 120_000),
        ("2 minutes", 120_000),
        ("1h", 3_600_000),
        ("1 hour", 3_600_000),
        ("1d", 86_400_000),
        ("2 days", 172_800_000),
        ("1h30m", 5_400_000),
        ("1h 30m", 5_400_000),
        ("1H30M", 5_400_000),
        ("PT5M", 300_000),
        ("pt5m", 300_000),
        ("PT0.5S", 500),
        ("P1DT2H", 93_600_000),
        ("P1D", 86_400_000),
        ("1.0005s", 1000),  # sub-millisecond parts truncated towards zero
        (timedelta(seconds=30), 30_000),
        (timedelta(seconds=1, microseconds=1500), 1001),
        (timedelta(0), 0),
    ],
)
def test_reads(value, ms):
    assert parse_duration(value) == ms


@pytest.mark.parametrize(
    "text", ["", "s", "P", "PT", "five seconds", "5 parsecs", "1h-5m", "5s 3", "1.s", "1,5s", "10 s s"]
)
def test_refuses_text_it_cannot_read_naming_the_forms(text):
    with pytest.raises(ValueError, match=r"out_of_orderness: cannot read .* write 500 \(ms\), '500ms', '5s'"):
        parse_duration(text, "out_of_orderness")


@pytest.mark.parametrize("value", [True, None, [5], 10.5, float("nan"), float("inf")])
def test_refuses_other_types_and_fractions_of_a_millisecond_as_numbers(value):
    with pytest.raises(TypeError):
        parse_duration(value)


def test_a_fractional_number_is_refused_with_a_hint_at_seconds():
    with pytest.raises(TypeError, match=r"10\.5 is not a whole number of milliseconds.*'10\.5s'"):
        parse_duration(10.5, "window")


@pytest.mark.parametrize("value", [-1, -1.0, "-1", "-5s", "- 5 s", "-PT5M", timedelta(milliseconds=-1)])
def test_refuses_negative_durations_by_default(value):
    with pytest.raises(IllegalArgumentException, match="out_of_orderness cannot be negative"):
        parse_duration(value, "out_of_orderness")


def test_refuses_a_negative_timedelta_that_truncates_to_zero():
    with pytest.raises(IllegalArgumentException, match=r"cannot be negative: .*\(0 ms\)"):
        parse_duration(timedelta(microseconds=-500))


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        (-1, -1),
        ("-1ms", -1),
        ("-5s", -5000),
        ("-PT5M", -300_000),
        ("-1.0005s", -1000),
        (timedelta(microseconds=-1500), -1),
    ],
)
def test_reads_negative_durations_where_allowed(value, ms):
    assert parse_duration(value, negative=True) == ms


def test_to_millis_refuses_negatives_and_window_millis_keeps_them():
    assert (to_millis(None), window_millis(None)) == (None, None)
    assert (to_millis("1.5s"), window_millis("-1ms")) == (1500, -1)
    with pytest.raises(IllegalArgumentException):
        to_millis("-1ms")


@pytest.mark.parametrize("window", ["10s", "10 seconds", "PT10S", 10_000, 10_000.0, timedelta(seconds=10)])
def test_within_reads_every_form(window):
    assert Pattern.begin("a").within(window).get_window_size() == 10_000


def test_within_keeps_a_negative_text_window_as_flink_does():
    pattern = Pattern.begin("a").within("-1ms", WithinType.PREVIOUS_AND_CURRENT)
    assert pattern.get_window_size(WithinType.PREVIOUS_AND_CURRENT) == -1


def test_within_refuses_a_fraction_of_a_millisecond_as_a_number():
    with pytest.raises(TypeError, match="window: 10.5 is not a whole number of milliseconds"):
        Pattern.begin("a").within(10.5)


def test_a_text_window_of_times_is_a_window_not_an_upper_bound():
    assert Pattern.begin("a").times(2, "10s").times_ == Times(2, 2, 10_000)
    assert Pattern.begin("a").times(1, 3, window="1m").times_ == Times(1, 3, 60_000)
    assert Pattern.begin("a").one_or_more("PT1S").times_ == Times(1, 1, 1000)
