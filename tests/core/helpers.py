"""Shared helpers for the core specification tests.

`run(pattern, events)` drives the NFA exactly as Flink's NFATestHarness does: for every event,
`advance_time(ts)` first, then `process(event, ts)`; at the end one `advance_time` far in the
future (Flink's final watermark). Matches are compared as multisets of flattened event-id lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from flowcep.nfa import NFACompiler
from flowcep.sharedbuffer import SharedBuffer

#: the timestamp of the final advance_time (Flink: the watermark Long.MAX_VALUE at end of input)
FINAL_TS = 2**62


@attrs.define(frozen=True)
class Event:
    name: str
    price: float = 0.0
    ts: int = 0
    id: int = 0
    volume: float = 0.0


_TOKEN = re.compile(
    r"(?P<name>[A-Za-z_]+)(?P<id>\d+)(?:@(?P<ts>-?\d+)|\$(?P<price>-?[\d.]+)|%(?P<volume>[\d.]+))*"
)


def events(spec: str) -> list[Event]:
    """`"a1 b2 c3@7 d4$2.5"` -> events named a, b, c, d with ids 1..4.

    The timestamp defaults to the id (`@ts` overrides it), the price to 0 (`$price` sets it),
    the volume to 0 (`%volume` sets it).
    """
    out = []
    for tok in spec.split():
        m = _TOKEN.fullmatch(tok)
        if m is None:
            raise ValueError(f"bad event token {tok!r}")
        ident = int(m["id"])
        out.append(
            Event(
                name=m["name"],
                price=float(m["price"] or 0.0),
                ts=ident if m["ts"] is None else int(m["ts"]),
                id=ident,
                volume=float(m["volume"] or 0.0),
            )
        )
    return out


# --- conditions ---------------------------------------------------------------------------------
# Each condition also carries `oracle_spec`, the same condition in the notation of the small Java
# harness over flink-cep-2.3.0.jar with which the expectations of these tests were checked.


def named(*names: str):
    """Simple condition: the event's name is one of `names`."""
    wanted = frozenset(names)

    def cond(e):
        return e.name in wanted

    cond.oracle_spec = "n:" + ",".join(names)
    return cond


def price_gt(x: float):
    def cond(e):
        return e.price > x

    cond.oracle_spec = f"p>{x}"
    return cond


def price_lt(x: float):
    def cond(e):
        return e.price < x

    cond.oracle_spec = f"p<{x}"
    return cond


def always():
    def cond(e):
        return True

    cond.oracle_spec = "true"
    return cond


def price_above_avg_of(name: str):
    """Iterative: price > average price of the events already taken by `name` (true if none)."""

    def cond(e, ctx):
        prices = [x.price for x in ctx.get_events_for_pattern(name)]
        return not prices or e.price > sum(prices) / len(prices)

    cond.oracle_spec = f"gtavg:{name}"
    return cond


def price_above_last_of(name: str):
    """Iterative: price > price of the last event taken by `name` (true if none)."""

    def cond(e, ctx):
        taken = list(ctx.get_events_for_pattern(name))
        return not taken or e.price > taken[-1].price

    cond.oracle_spec = f"gtlast:{name}"
    return cond


def same_price_as(name: str):
    """Iterative: price equals the price of the first event taken by `name` (false if none)."""

    def cond(e, ctx):
        for x in ctx.get_events_for_pattern(name):
            return e.price == x.price
        return False

    cond.oracle_spec = f"eqp:{name}"
    return cond


def fewer_than(name: str, k: int):
    """Iterative: fewer than `k` events are already taken by `name`."""

    def cond(e, ctx):
        return len(list(ctx.get_events_for_pattern(name))) < k

    cond.oracle_spec = f"cntlt:{name}:{k}"
    return cond


def sum_with_below(name: str, limit: float):
    """Iterative: price + sum of the prices already taken by `name` < `limit`."""

    def cond(e, ctx):
        return e.price + sum(x.price for x in ctx.get_events_for_pattern(name)) < limit

    cond.oracle_spec = f"sumlt:{name}:{limit}"
    return cond


# --- driving the NFA ------------------------------------------------------------------------


def flat_ids(match: dict[str, list[Any]]) -> list[int]:
    return [e.id for evs in match.values() for e in evs]


def id_dict(match: dict[str, list[Any]]) -> dict[str, list[int]]:
    return {k: [e.id for e in v] for k, v in match.items()}


@attrs.define
class Emitted:
    at: int | str  # id of the event whose arrival released the match, or "end" (final advance_time)
    match: dict[str, list[Any]]


@attrs.define
class Result:
    nfa: Any
    state: Any
    buffer: Any
    emitted: list[Emitted]
    timed_out: list[tuple[dict[str, list[Any]], int]]

    @property
    def matches(self) -> list[list[int]]:
        return sorted(flat_ids(x.match) for x in self.emitted)

    @property
    def timeouts(self) -> list[tuple[list[int], int]]:
        return sorted((flat_ids(m), ts) for m, ts in self.timed_out)

    def emitted_at(self) -> list[tuple[int | str, list[int]]]:
        """(releasing event id or "end", flattened match) in emission order."""
        return [(x.at, flat_ids(x.match)) for x in self.emitted]


def feed(nfa, state, buffer, evs: Iterable[Event], result: Result, skip_strategy=None) -> None:
    kw = {} if skip_strategy is None else {"skip_strategy": skip_strategy}
    for e in evs:
        ms, tos = nfa.advance_time(buffer, state, e.ts, **kw)
        result.emitted.extend(Emitted(e.id, m) for m in ms)
        result.timed_out.extend(tos)
        for m in nfa.process(buffer, state, e, e.ts, **kw):
            result.emitted.append(Emitted(e.id, m))


def finish(nfa, state, buffer, result: Result, final_ts: int = FINAL_TS, skip_strategy=None) -> None:
    kw = {} if skip_strategy is None else {"skip_strategy": skip_strategy}
    ms, tos = nfa.advance_time(buffer, state, final_ts, **kw)
    result.emitted.extend(Emitted("end", m) for m in ms)
    result.timed_out.extend(tos)


def run_full(
    pattern, evs: Sequence[Event] | str, *, final_ts: int | None = FINAL_TS, skip_strategy=None
) -> Result:
    """Compile `pattern` and feed `evs`; `final_ts=None` skips the final advance_time."""
    if isinstance(evs, str):
        evs = events(evs)
    nfa = NFACompiler.compile(pattern, timeout_handling=True)
    state = nfa.create_initial_state()
    buffer = SharedBuffer()
    result = Result(nfa, state, buffer, [], [])
    feed(nfa, state, buffer, evs, result, skip_strategy)
    if final_ts is not None:
        finish(nfa, state, buffer, result, final_ts, skip_strategy)
    return result


def run(pattern, evs: Sequence[Event] | str, **kw) -> list[list[int]]:
    """The sorted multiset of matches, each flattened to its event ids in pattern order."""
    return run_full(pattern, evs, **kw).matches


def dict_matches(pattern, evs: Sequence[Event] | str, **kw) -> list[dict[str, list[int]]]:
    """Matches as {name: [ids]} dicts (key order preserved), in emission order."""
    return [id_dict(x.match) for x in run_full(pattern, evs, **kw).emitted]
