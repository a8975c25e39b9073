"""The per-operator ``drop_oldest`` index (a heap of each key's oldest start) against the scan
over every key it replaced, kept here as the reference: the same drops, outputs and counts."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from flowcep.pattern import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import CepOperator, Output, PartialMatchLimit
from flowcep.runtime.limits import PER_OPERATOR, Limiter, settle_dropped

from .support import Ev, ab_within, abc_within, brief, is_, operator


class ScanLimiter(Limiter):
    """The limiter as it was: each operator-wide drop visits every key with partial matches."""

    __slots__ = ()

    def _drop_oldest_of_all(
        self, keys: dict[Any, Any], current: Any, n: int, timestamp: int, out: list[Output]
    ) -> None:
        for _ in range(n):
            oldest = None
            oldest_order: Any = None
            for key in self.counts:
                ks = keys[key]
                order = (ks.state.queue[0].order[0], ks.seq)
                if oldest_order is None or order < oldest_order:
                    oldest, oldest_order = ks, order
            if oldest is None:
                return
            self._release(oldest, [oldest.state.poll()], timestamp, PER_OPERATOR, out)
            if oldest is not current:
                settle_dropped(keys, oldest)


def _with_scan(op: CepOperator) -> CepOperator:
    limiter = op._limiter
    assert limiter is not None
    op._limiter = ScanLimiter(limiter.limit, limiter._window)
    return op


PATTERNS = {
    "ab within 20": lambda: ab_within(20),
    "abc within 30": lambda: abc_within(30),
    "a b+ c skip to next within 25": lambda: (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_to_next())
        .where(is_("a"))
        .followed_by("b")
        .where(is_("b"))
        .one_or_more()
        .followed_by("c")
        .where(is_("c"))
        .within(25)
    ),
    "a any b, per-step window": lambda: (
        Pattern.begin("a")
        .where(is_("a"))
        .followed_by_any("b")
        .where(is_("b"))
        .within(15)
        .followed_by("c")
        .where(is_("c"))
    ),
}


def _describe(outputs: list[Output]) -> list[Any]:
    dropped = [
        (o.key, o.value.start_timestamp, o.value.dropped_at, o.value.limit, sorted(o.value.match))
        for o in outputs
        if o.kind == "dropped"
    ]
    return [brief([o for o in outputs if o.kind != "dropped"]), dropped]


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(PATTERNS)),
    per_operator=st.integers(1, 6),
    per_key=st.one_of(st.none(), st.integers(1, 4)),
    steps=st.lists(
        st.tuples(st.sampled_from("aaabcx"), st.integers(0, 4), st.sampled_from("klmn")),
        min_size=1,
        max_size=60,
    ),
    cut=st.integers(0, 60),
    out_of_orderness=st.sampled_from([0, 2]),
)
def test_the_index_drops_what_the_scan_drops(
    name: str,
    per_operator: int,
    per_key: int | None,
    steps: list[tuple[str, int, str]],
    cut: int,
    out_of_orderness: int,
) -> None:
    limit = PartialMatchLimit(per_key=per_key, per_operator=per_operator)
    events = []
    t = 0
    for kind, gap, key in steps:
        t += gap
        events.append(Ev(kind, t, key))

    def make() -> CepOperator:
        return operator(PATTERNS[name](), out_of_orderness=out_of_orderness, partial_match_limit=limit)

    indexed, scanning = make(), _with_scan(make())
    got: list[Output] = []
    want: list[Output] = []
    for i, e in enumerate(events):
        if i == cut:  # both restored in the middle: the index is built again from the keys
            data = indexed.snapshot()
            assert data == scanning.snapshot()
            indexed, scanning = make(), _with_scan(make())
            indexed.restore(data)
            scanning.restore(data)
        got.extend(indexed.process_element(e))
        want.extend(scanning.process_element(e))
        assert indexed.stats() == scanning.stats()
    got.extend(indexed.flush())
    want.extend(scanning.flush())
    assert _describe(got) == _describe(want)
    assert indexed.stats() == scanning.stats()
    event(
        f"operator-wide drops: {min(3, sum(o.kind == 'dropped' and o.value.limit == 'operator' for o in got))}"
    )


def test_a_drop_takes_the_oldest_start_of_all_keys_then_the_first_seen_key() -> None:
    op = operator(ab_within(100), out_of_orderness=0, partial_match_limit=PartialMatchLimit(per_operator=3))
    out: list[Output] = []
    for e in [Ev("a", 1, "y"), Ev("a", 1, "x"), Ev("a", 2, "x"), Ev("a", 3, "z"), Ev("a", 4, "z")]:
        out.extend(op.process_element(e))
    out.extend(op.flush())
    # y and x both started at 1: y was seen first
    assert [(o.key, o.value.start_timestamp) for o in out if o.kind == "dropped"] == [("y", 1), ("x", 1)]
