"""Stock trends: rising prices on heavy volume, then a volume drop, within one hour.

This is the classic stock query of the SASE+ papers, which Flink CEP's NFA descends from:

    PATTERN SEQ(Stock+ a[], Stock b)
    WHERE skip_till_next_match(a[], b) {
        [symbol]
        AND a[1].volume > 1000
        AND a[i].price > avg(a[..i-1].price)
        AND b.volume < 80% * a[a.LEN].volume
    } WITHIN 1 hour

In flowcep: ``a[]`` is a looping step (``one_or_more``) whose iterative condition looks at the
events already taken (``ctx.get_events_for_pattern("rise")``); ``[symbol]`` is ``key_by``;
skip-till-next-match is ``followed_by``. Two choices make the output one line per trend:
``greedy()`` keeps the loop taking rising ticks instead of also trying every shorter prefix,
and ``skip_past_last_event()`` drops the overlapping runs that started inside a reported trend.

Run it:  python examples/stock_trend.py
or:      flowcep run examples/stock_trend.py examples/data/stocks.csv --key symbol --timestamp time
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from flowcep import CEP, AfterMatchSkipStrategy, Pattern
from flowcep.cli_support import parse_timestamp, read_events

TITLE = "Stock trends (SASE+ query: rising prices, then a volume drop, within 1 hour)"
DATA = Path(__file__).resolve().parent / "data" / "stocks.csv"


def rising(tick, ctx) -> bool:
    """a[1].volume > 1000, and a[i].price > avg(a[..i-1].price)."""
    earlier = ctx.get_events_for_pattern("rise")
    if not earlier:
        return tick.volume > 1000
    return tick.price > sum(t.price for t in earlier) / len(earlier)


def volume_drop(tick, ctx) -> bool:
    """b.volume < 80% of the last rising tick's volume."""
    last = ctx.get_events_for_pattern("rise")[-1]
    return tick.volume < 0.8 * last.volume


pattern = (
    Pattern.begin("rise", AfterMatchSkipStrategy.skip_past_last_event())
    .where(rising)
    .one_or_more()
    .greedy()
    .followed_by("drop")
    .where(volume_drop)
    .within(timedelta(hours=1))
)


@dataclass(frozen=True)
class Trend:
    symbol: str
    start: str  # time of the first rising tick
    end: str  # time of the last rising tick
    ticks: int
    first_price: float
    last_price: float
    drop_time: str
    drop_volume: int
    last_volume: int


def select(match) -> Trend:
    rise, drop = match["rise"], match["drop"][0]
    return Trend(
        symbol=drop.symbol,
        start=rise[0].time,
        end=rise[-1].time,
        ticks=len(rise),
        first_price=rise[0].price,
        last_price=rise[-1].price,
        drop_time=drop.time,
        drop_volume=drop.volume,
        last_volume=rise[-1].volume,
    )


def main(data: Path = DATA) -> list[Trend]:
    ticks = read_events(data)
    stream = CEP.pattern(
        ticks, pattern, key_by=lambda t: t.symbol, timestamp=lambda t: parse_timestamp(t.time)
    )
    return sorted(stream.select(select), key=lambda t: (t.start, t.symbol))


def report(trends: list[Trend]) -> list[str]:
    lines = [
        f"{t.symbol}  {t.start[11:16]}-{t.end[11:16]}  {t.ticks} rising ticks {t.first_price:.2f} -> {t.last_price:.2f}, "
        f"then volume {t.last_volume} -> {t.drop_volume} at {t.drop_time[11:16]}"
        for t in trends
    ]
    return lines + [f"{len(trends)} trends"]


if __name__ == "__main__":
    for line in report(main()):
        print(line)
