"""Generate the example data sets: deterministic for a given seed and scale.

    python examples/generate_data.py                      # the small files in examples/data/
    python examples/generate_data.py --scale 500 --out /tmp/flowcep-data   # 500 days of each

The files are "real-looking" but built so that the examples' results can be worked out by hand:
quiet background traffic that cannot start a match, plus planted situations (a price trend,
a server incident, a card-testing fraud, a password-guessing attack) at chosen times. Every
scale unit is one more day with the same planted situations (times jittered per day), so a
file at scale N has N times the matches of the small one.

Files written:
  stocks.csv              time (ISO-8601), symbol, price, volume          (stock_trend.py)
  server_events.jsonl     time (epoch ms), host, event, ... out of order  (server_alerts.py)
  card_transactions.csv   time (ISO-8601), card, merchant, country, amount (card_fraud.py)
  logins.csv              time (epoch ms), user, ip, result               (flink_port_local.py)
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

DEFAULT_SEED = 20260302
UTC = timezone.utc
FIRST_DAY = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
DATA_DIR = Path(__file__).resolve().parent / "data"


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def ms(dt: datetime) -> int:
    return (dt - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


# ----------------------------------------------------------------------------- stocks

SYMBOLS = {"ACME": 102.40, "BOLT": 48.15, "CRUX": 215.00}
SESSION_MINUTES = 180  # 09:30 - 12:29, one tick per symbol and minute


def stock_day(rng: random.Random, day: datetime) -> list[dict]:
    """One session: quiet ticks (volume <= 950) and two planted trends per symbol.

    A trend is 3-6 ticks of strictly rising price, each with volume > 1000, followed at once by
    a quiet tick (volume <= 950) whose volume is under 60% of the last trend tick's and whose
    price is below the trend's first price.
    """
    open_time = day.replace(hour=9, minute=30)
    rows: list[dict] = []
    for symbol, base in SYMBOLS.items():
        # Two trend starts, at least 30 minutes apart, away from the session edges.
        first = rng.randint(15, 70)
        second = rng.randint(first + 40, 160)
        trends = {first: rng.randint(3, 6), second: rng.randint(3, 6)}
        price = base * (1 + rng.uniform(-0.01, 0.01))
        minute = 0
        while minute < SESSION_MINUTES:
            if minute in trends:
                n = trends[minute]
                first_price = price = round(price * (1 + rng.uniform(0.002, 0.006)), 2)
                for i in range(n):
                    if i:
                        price = round(price * (1 + rng.uniform(0.003, 0.010)), 2)
                    volume = rng.randint(1100, 2600)
                    if i == n - 1:
                        volume = max(volume, rng.randint(1500, 2600))
                    rows.append(_tick(open_time, minute, symbol, price, volume))
                    minute += 1
                last_volume = rows[-1]["volume"]
                price = round(first_price * rng.uniform(0.985, 0.995), 2)
                volume = min(int(last_volume * rng.uniform(0.30, 0.60)), rng.randint(600, 950))
                rows.append(_tick(open_time, minute, symbol, price, volume))
                minute += 1
                continue
            price = round(price * (1 + rng.gauss(0, 0.0015)), 2)
            rows.append(_tick(open_time, minute, symbol, price, rng.randint(150, 950)))
            minute += 1
    symbol_order = {s: i for i, s in enumerate(SYMBOLS)}
    rows.sort(key=lambda r: (r["_t"], symbol_order[r["symbol"]]))
    return rows


def _tick(open_time: datetime, minute: int, symbol: str, price: float, volume: int) -> dict:
    t = open_time + timedelta(minutes=minute)
    return {"_t": t, "time": iso(t), "symbol": symbol, "price": f"{price:.2f}", "volume": volume}


# ----------------------------------------------------------------------------- servers

HOSTS = ["web-01", "web-02", "web-03", "web-04"]
PATHS = ["/api/orders", "/api/cart", "/api/search", "/api/checkout", "/health"]


def server_day(rng: random.Random, day: datetime) -> list[dict]:
    """Two hours (10:00-12:00) of monitoring events for four hosts, arriving slightly out of order.

    Planted, with t0 the scenario's start:
      web-02 10:12  cpu alarm, 4 failed requests, cleared only after 9 min      -> alert
      web-03 10:30  memory alarm, 3 failed requests, cleared after 2.5 min      -> no alert
      web-01 10:47  disk alarm, 1 failed request, cleared after 2 min           -> nothing (see below)
      web-04 11:05  5 failed requests (a deploy), no alarm                      -> nothing
      web-02 11:20  cpu alarm, failures at +1, +2.8 and +5.7 min                -> timeout (2 failures)
      web-04 11:41  memory alarm, 5 failed requests, cleared after 14 min       -> alert
    One ordinary request of web-03 arrives three minutes late (a late event).

    web-01's clearing comes between the first and the second failure, and it ends that run:
    like Flink, flowcep gives the repetitions of ``times(3)`` the stop edge of the
    ``not_followed_by`` that follows, so no timeout is reported for it either.
    """
    start = day.replace(hour=10)
    events: list[dict] = []
    for h, host in enumerate(HOSTS):
        t = start + timedelta(seconds=5 + 7 * h)
        while t < start + timedelta(hours=2):
            status = rng.choices([200, 404, 302], weights=[95, 3, 2])[0]
            events.append(
                {
                    "time": t,
                    "host": host,
                    "event": "request",
                    "status": status,
                    "path": rng.choice(PATHS),
                    "latency_ms": int(rng.lognormvariate(3.4, 0.5)),
                }
            )
            t += timedelta(seconds=30 + rng.randint(-4, 4))

    def at(minute: int, second: int) -> datetime:
        return start + timedelta(minutes=minute, seconds=second + rng.randint(0, 2))

    def alarm(t: datetime, host: str, metric: str, value: float) -> None:
        events.append({"time": t, "host": host, "event": "alarm", "metric": metric, "value": value})

    def cleared(t: datetime, host: str, metric: str, value: float) -> None:
        events.append({"time": t, "host": host, "event": "alarm_cleared", "metric": metric, "value": value})

    def failure(t: datetime, host: str, path: str = "/api/checkout") -> None:
        events.append(
            {
                "time": t,
                "host": host,
                "event": "request",
                "status": rng.choice([500, 502, 503, 504]),
                "path": path,
                "latency_ms": rng.randint(2000, 30000),
            }
        )

    t0 = at(12, 3)
    alarm(t0, "web-02", "cpu", 97.4)
    for s in (35, 50, 80, 110):
        failure(t0 + timedelta(seconds=s), "web-02")
    cleared(t0 + timedelta(minutes=9), "web-02", "cpu", 61.0)

    t0 = at(30, 10)
    alarm(t0, "web-03", "memory", 93.1)
    for s in (20, 45, 70):
        failure(t0 + timedelta(seconds=s), "web-03", "/api/search")
    cleared(t0 + timedelta(seconds=150), "web-03", "memory", 71.5)

    t0 = at(47, 0)
    alarm(t0, "web-01", "disk", 98.0)
    failure(t0 + timedelta(seconds=40), "web-01", "/api/orders")
    cleared(t0 + timedelta(seconds=120), "web-01", "disk", 80.2)

    t0 = at(65, 30)
    for s in (0, 15, 30, 45, 60):
        failure(t0 + timedelta(seconds=s), "web-04", "/api/cart")

    t0 = at(80, 0)
    alarm(t0, "web-02", "cpu", 95.2)
    for s in (60, 170, 340):
        failure(t0 + timedelta(seconds=s), "web-02")
    cleared(t0 + timedelta(minutes=7), "web-02", "cpu", 55.0)

    t0 = at(101, 20)
    alarm(t0, "web-04", "memory", 96.8)
    for s in (25, 40, 65, 90, 120):
        failure(t0 + timedelta(seconds=s), "web-04", "/api/orders")
    cleared(t0 + timedelta(minutes=14), "web-04", "memory", 68.3)

    # Arrival order: time order, with 10% of events delayed by up to 8 s in transit, and one
    # ordinary request of web-03 (the first after 11:00) delayed by three minutes.
    late_candidates = [
        e
        for e in events
        if e["host"] == "web-03"
        and e["event"] == "request"
        and e["status"] == 200
        and e["time"] >= start + timedelta(minutes=60)
    ]
    late = min(late_candidates, key=lambda e: e["time"])
    events.sort(key=lambda e: (e["time"], e["host"]))
    arrivals = []
    for i, e in enumerate(events):
        delay = rng.uniform(0, 8) if rng.random() < 0.10 else 0.0
        if e is late:
            delay = 180.0
        arrivals.append((e["time"] + timedelta(seconds=delay), i, e))
    arrivals.sort(key=lambda a: (a[0], a[1]))
    out = []
    for _, _, e in arrivals:
        e = dict(e)
        e["time"] = ms(e["time"])
        out.append(e)
    return out


# ----------------------------------------------------------------------------- cards

CARDS = {
    "card-1001": "ES",
    "card-1002": "NL",
    "card-1003": "DE",
    "card-1004": "GB",
    "card-1005": "FR",
    "card-1006": "PL",
    "card-1007": "IT",
    "card-1008": "SE",
}
MERCHANTS = [
    "Corner Bakery",
    "City Pharmacy",
    "FreshMart",
    "Metro Tickets",
    "Bookworm",
    "Cafe Lumen",
    "Fuel&Go",
    "Streamly",
    "Green Grocer",
    "HomeStuff",
    "Noodle Bar",
    "Cinema Nova",
]


def card_day(rng: random.Random, day: datetime) -> list[dict]:
    """A day of card payments: ordinary purchases of 6-180 at home, plus planted situations.

    card-1001 11:31 two 1.00 probes at home, then 1320.00 in RU 4 min later   -> fraud (once)
    card-1002 16:20 2.50 in ES (travelling), then 820.00 in ES                -> no (same country)
    card-1003 14:02 1.00 probe at home, then 1899.00 in BR 7.5 min later      -> fraud
    card-1004 13:00 1250.00 at home, no probe before                          -> no
    card-1005 09:15 0.99 probe at home, then 750.00 in US 25 min later        -> no (too late)
    card-1007 19:03 1.50 probe at home, then 640.00 and 980.00 in GB          -> fraud (the first)
    """
    rows: list[dict] = []
    open_t = day.replace(hour=8)
    for card, home in CARDS.items():
        for _ in range(rng.randint(8, 14)):
            t = open_t + timedelta(seconds=rng.randint(0, 14 * 3600))
            amount = math.exp(rng.uniform(math.log(6), math.log(180)))
            rows.append(_payment(t, card, rng.choice(MERCHANTS), home, amount))

    def at(h: int, m: int, s: int = 0) -> datetime:
        return day.replace(hour=h, minute=m, second=s) + timedelta(seconds=rng.randint(0, 20))

    t = at(11, 31)
    rows.append(_payment(t, "card-1001", "web-shop-verify", "ES", 1.00))
    rows.append(_payment(t + timedelta(minutes=1), "card-1001", "web-shop-verify", "ES", 1.00))
    rows.append(_payment(t + timedelta(minutes=4, seconds=20), "card-1001", "Lux Watches", "RU", 1320.00))

    t = at(16, 20)
    rows.append(_payment(t, "card-1002", "Cafe Sol", "ES", 2.50))
    rows.append(_payment(t + timedelta(minutes=5), "card-1002", "Hotel Marina", "ES", 820.00))

    t = at(14, 2, 11)
    rows.append(_payment(t, "card-1003", "online-verify", "DE", 1.00))
    rows.append(_payment(t + timedelta(minutes=7, seconds=29), "card-1003", "Electro Mundo", "BR", 1899.00))

    t = at(13, 0)
    rows.append(_payment(t, "card-1004", "TechStore", "GB", 1250.00))

    t = at(9, 15)
    rows.append(_payment(t, "card-1005", "app-store-check", "FR", 0.99))
    rows.append(_payment(t + timedelta(minutes=25), "card-1005", "Outlet Mall", "US", 750.00))

    t = at(19, 3, 30)
    rows.append(_payment(t, "card-1007", "pay-verify", "IT", 1.50))
    rows.append(_payment(t + timedelta(minutes=2, seconds=40), "card-1007", "Gadget Hub", "GB", 640.00))
    rows.append(_payment(t + timedelta(minutes=6, seconds=15), "card-1007", "Gadget Hub", "GB", 980.00))

    rows.sort(key=lambda r: (r["_t"], r["card"]))
    return rows


def _payment(t: datetime, card: str, merchant: str, country: str, amount: float) -> dict:
    return {
        "_t": t,
        "time": iso(t),
        "card": card,
        "merchant": merchant,
        "country": country,
        "amount": f"{amount:.2f}",
    }


# ----------------------------------------------------------------------------- logins

USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


def login_day(rng: random.Random, day: datetime) -> list[dict]:
    """A day of logins: ordinary successes (some after one typo), plus planted attacks.

    alice 10:15  4 failures, then a success 12 s later          -> brute force that got in
    bob   11:00  6 failures, no success                         -> no (never got in)
    carol 13:30  3 failures, success 2.5 min later              -> no (outside 2 min)
    dave  15:10  2 failures, then a success                     -> no (only 2)
    erin  16:45  2 failures, success, 3 failures, success       -> the second part
    """
    rows: list[dict] = []

    def ip() -> str:
        return f"10.{rng.randint(0, 40)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"

    # The attacks below start at these times (plus up to 30 s); ordinary logins of the same
    # user keep 10 minutes away from them, so that they cannot join an attack's sequence.
    attacks = {"alice": (10, 15), "bob": (11, 0), "carol": (13, 30), "dave": (15, 10), "erin": (16, 45)}

    def near_attack(user: str, t: datetime) -> bool:
        if user not in attacks:
            return False
        h, m = attacks[user]
        a = day.replace(hour=h, minute=m)
        return a - timedelta(minutes=10) <= t <= a + timedelta(minutes=15)

    for user in USERS:
        home_ip = ip()
        for _ in range(rng.randint(3, 6)):
            t = day.replace(hour=8) + timedelta(seconds=rng.randint(0, 10 * 3600))
            while near_attack(user, t):
                t = day.replace(hour=8) + timedelta(seconds=rng.randint(0, 10 * 3600))
            if rng.random() < 0.25:
                rows.append(_login(t, user, home_ip, "fail"))
                t += timedelta(seconds=rng.randint(6, 20))
            rows.append(_login(t, user, home_ip, "success"))

    attacker = f"203.0.113.{rng.randint(2, 250)}"

    def burst(user: str, start: datetime, plan: list[tuple[int, str]]) -> None:
        for seconds, result in plan:
            rows.append(_login(start + timedelta(seconds=seconds), user, attacker, result))

    jitter = timedelta(seconds=rng.randint(0, 30))
    burst(
        "alice",
        day.replace(hour=10, minute=15) + jitter,
        [(0, "fail"), (12, "fail"), (25, "fail"), (37, "fail"), (49, "success")],
    )
    burst("bob", day.replace(hour=11) + jitter, [(10 * i, "fail") for i in range(6)])
    burst(
        "carol",
        day.replace(hour=13, minute=30) + jitter,
        [(0, "fail"), (20, "fail"), (40, "fail"), (190, "success")],
    )
    burst("dave", day.replace(hour=15, minute=10) + jitter, [(0, "fail"), (15, "fail"), (30, "success")])
    burst(
        "erin",
        day.replace(hour=16, minute=45) + jitter,
        [
            (0, "fail"),
            (9, "fail"),
            (20, "success"),
            (41, "fail"),
            (50, "fail"),
            (62, "fail"),
            (75, "success"),
        ],
    )
    rows.sort(key=lambda r: (r["_t"], r["user"]))
    for r in rows:
        r["time"] = ms(r["_t"])
    return rows


def _login(t: datetime, user: str, ip: str, result: str) -> dict:
    return {"_t": t, "time": 0, "user": user, "ip": ip, "result": result}


# ----------------------------------------------------------------------------- writing


def _write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([r[c] for c in columns])


def generate(out: Path, seed: int = DEFAULT_SEED, scale: int = 1) -> dict[str, int]:
    """Write the four files into ``out``; returns the number of rows of each."""
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    days = [FIRST_DAY + timedelta(days=d) for d in range(scale)]
    stocks = [r for d in days for r in stock_day(rng, d)]
    servers = [e for d in days for e in server_day(rng, d)]
    cards = [r for d in days for r in card_day(rng, d)]
    logins = [r for d in days for r in login_day(rng, d)]
    _write_csv(out / "stocks.csv", stocks, ["time", "symbol", "price", "volume"])
    with open(out / "server_events.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for e in servers:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    _write_csv(out / "card_transactions.csv", cards, ["time", "card", "merchant", "country", "amount"])
    _write_csv(out / "logins.csv", logins, ["time", "user", "ip", "result"])
    return {
        "stocks.csv": len(stocks),
        "server_events.jsonl": len(servers),
        "card_transactions.csv": len(cards),
        "logins.csv": len(logins),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})"
    )
    parser.add_argument("--scale", type=int, default=1, help="number of days to generate (default 1)")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output directory (default examples/data)")
    args = parser.parse_args(argv)
    if args.scale < 1:
        parser.error("--scale must be at least 1")
    counts = generate(args.out, args.seed, args.scale)
    for name, n in counts.items():
        print(f"{args.out / name}: {n:,} rows")


if __name__ == "__main__":
    main()
