"""Equivalence on random streams.

1. A hierarchy run in one pass equals its levels run one after another over whole streams
   (each level a ``CEP.pattern`` over the raw events and the complete output of the levels it
   reads): interleaving levels, watermarks and fan-out change nothing.
2. Where the semantics coincide, a hierarchy equals the flat ``Pattern`` in which each step that
   reads a type is a group pattern copy of that type's pattern. The class (docs/semantics.md
   section 11.8): every step a single step (no quantifier) joined by ``followed_by_any``, simple
   conditions, no skip (``no_skip``), a window at the top level only (or lower ones at least as
   large), every level read by another starting with a raw step, strictly increasing timestamps
   within a key.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flowcep import CEP, AfterMatchSkipStrategy, Pattern
from flowcep.hierarchy import ComplexEvent, Hierarchy, HierarchyOperator, HierarchyPlan, of_type
from tests.hierarchy.support import is_

SETTINGS = settings(
    max_examples=int(os.environ.get("HIERARCHY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
KINDS = "abc"  # of events; steps read "a" and "b", so that "c" is noise
STEP_KINDS = "ab"

# a level: (steps, contiguity, window, skip, trailing not); a step: ("raw", kind) or ("type", level)
Step = tuple[str, Any]


@st.composite
def streams(draw: Any, strictly_increasing: bool, max_size: int = 14) -> list[dict[str, Any]]:
    size = draw(st.integers(min(5, max_size), max_size))
    # from 1: an element at 0 registers no window timer (as in Flink), so a key's matches at 0
    # come out with the watermark's steps, which the two runs compared here take differently
    ts = 1
    events = []
    for i in range(size):
        events.append(
            {"id": i, "ts": ts, "kind": draw(st.sampled_from(KINDS)), "key": draw(st.sampled_from("xxy"))}
        )
        ts += draw(st.integers(1 if strictly_increasing else 0, 3))
    return events


def step_pattern(pattern: Pattern | None, name: str, contiguity: str) -> Pattern:
    if pattern is None:
        return Pattern.begin(name)
    return getattr(pattern, contiguity)(name)


def condition(step: Step) -> Any:
    kind, what = step
    return is_(what) if kind == "raw" else of_type(f"L{what}")


# ---------------------------------------------------------------- 1. one pass == level by level


@st.composite
def hierarchies(draw: Any) -> list[tuple[list[Step], str, int | None, bool, bool]]:
    levels = []
    for i in range(draw(st.integers(1, 3))):
        raw = st.tuples(st.just("raw"), st.sampled_from(STEP_KINDS))
        step = raw if i == 0 else st.one_of(raw, st.tuples(st.just("type"), st.integers(0, i - 1)))
        steps = draw(st.lists(step, min_size=1, max_size=3))
        if i > 0 and all(kind == "raw" for kind, _ in steps):
            steps[draw(st.integers(0, len(steps) - 1))] = ("type", i - 1)
        # followed_by_any above the first level multiplies matches past what a quick test runs
        contiguity = draw(
            st.sampled_from(["next", "followed_by", "followed_by_any"] if i == 0 else ["next", "followed_by"])
        )
        window = draw(st.one_of(st.none(), st.integers(2, 12)))
        skip = draw(st.booleans())
        trailing_not = draw(st.booleans()) and i == 0
        if skip or trailing_not:
            window = window or 8
        levels.append((steps, contiguity, window, skip, trailing_not))
    return levels


def build(spec: list[tuple[list[Step], str, int | None, bool, bool]]) -> Hierarchy:
    h = Hierarchy()
    for i, (steps, contiguity, window, skip, trailing_not) in enumerate(spec):
        strategy = AfterMatchSkipStrategy.skip_past_last_event() if skip else AfterMatchSkipStrategy.no_skip()
        pattern = Pattern.begin("s0", strategy).where(condition(steps[0]))
        for j, step in enumerate(steps[1:], 1):
            pattern = step_pattern(pattern, f"s{j}", contiguity).where(condition(step))
        if trailing_not:
            pattern = pattern.not_followed_by("quiet").where(is_("c"))
        h.define(f"L{i}", pattern.within(window), compose=lambda m: {"size": sum(len(v) for v in m.values())})
    return h


def raw_ids(event: Any) -> tuple[int, ...]:
    if type(event) is ComplexEvent:
        return tuple(i for e in event.constituents() for i in raw_ids(e))
    return (event["id"],)


def summary(event: ComplexEvent) -> tuple[Any, ...]:
    return (event.type, event.key, event.start, event.end, event.attributes["size"], raw_ids(event))


def level_by_level(plan: HierarchyPlan, events: list[dict[str, Any]], operator: HierarchyOperator) -> Counter:
    """Each level over the whole of its input, sorted by event time; at one time raw events come
    first, then complex events by level, each level's in the order it made them."""
    made: dict[str, list[ComplexEvent]] = {}
    rank = {level.name: n for n, level in enumerate(plan.levels, 1)}
    for level in plan.levels:
        inputs: list[tuple[int, int, int, Any]] = []
        if level.reads_raw:
            inputs += [(e["ts"], 0, n, e) for n, e in enumerate(events)]
        for used in level.uses:
            inputs += [(c.end, rank[used], n, c) for n, c in enumerate(made[used])]
        inputs.sort(key=lambda item: item[:3])

        def key(e: Any) -> Any:
            return e.key if type(e) is ComplexEvent else e["key"]

        def stamp(e: Any) -> int:
            return e.end if type(e) is ComplexEvent else e["ts"]

        stream = CEP.pattern(
            [item[3] for item in inputs],
            level.bound_pattern(operator.interval, implied=True),
            key_by=key,
            timestamp=stamp,
        )
        made[level.name] = [
            ComplexEvent(
                level.name,
                m_key,
                min(operator.interval(e)[0] for v in m.values() for e in v),
                max(operator.interval(e)[1] for v in m.values() for e in v),
                level.compose(m) if level.compose else {},
                m,
            )
            for m_key, m in stream.process(lambda m, ctx, out: out.collect((ctx.key, m)))
        ]
    return Counter(summary(c) for made_by_level in made.values() for c in made_by_level)


@given(hierarchies(), streams(strictly_increasing=False, max_size=12), st.integers(0, 6), st.integers(1, 5))
@SETTINGS
def test_one_pass_equals_the_levels_run_one_after_another(
    spec: Any, events: list[dict[str, Any]], out_of_orderness: int, batch: int
) -> None:
    h = build(spec)
    plan = h.build()
    operator = HierarchyOperator(
        plan,
        key_by="key",
        timestamp="ts",
        out_of_orderness=out_of_orderness,
        emit=[lv.name for lv in plan.levels],
    )
    out = []
    for start in range(0, len(events), batch):
        out += operator.process_elements(events[start : start + batch])
    out += operator.flush()
    assert [o for o in out if o.kind == "late"] == []
    one_pass = Counter(summary(o.value) for o in out if o.kind == "match")
    event(f"levels: {len(spec)}, matches: {min(sum(one_pass.values()), 5)}+")
    assert one_pass == level_by_level(plan, events, operator)


# ---------------------------------------------------------------- 2. hierarchy == flat pattern


@st.composite
def trees(draw: Any) -> list[list[Step]]:
    levels: list[list[Step]] = []
    for i in range(draw(st.integers(1, 3))):
        raw = st.tuples(st.just("raw"), st.sampled_from(STEP_KINDS))
        step = raw if i == 0 else st.one_of(raw, st.tuples(st.just("type"), st.integers(0, i - 1)))
        steps = draw(st.lists(step, min_size=1, max_size=3 if i == 0 else 2))
        if i > 0 and all(kind == "raw" for kind, _ in steps):
            steps[-1] = ("type", i - 1)
        levels.append(steps)
    # A level read by another starts with a raw step: as a group, a level that starts with a
    # group would be a group at the head of a group, whose contiguity to what precedes it is
    # strict in Flink (and flowcep), not followed_by_any.
    for steps in levels[:-1]:
        if steps[0][0] == "type":
            steps.insert(0, ("raw", "a"))
    return levels


def hierarchy_of(levels: list[list[Step]], window: int | None, lower_extra: int | None) -> Hierarchy:
    """``lower_extra``: lower levels get a window that much larger than the top's (None: none)."""
    lower = None if window is None or lower_extra is None else window + lower_extra
    h = Hierarchy()
    for i, steps in enumerate(levels):
        pattern = Pattern.begin("s0").where(condition(steps[0]))
        for j, step in enumerate(steps[1:], 1):
            pattern = pattern.followed_by_any(f"s{j}").where(condition(step))
        h.define(f"L{i}", pattern.within(window if i == len(levels) - 1 else lower))
    return h


def flat_of(levels: list[list[Step]], i: int, prefix: str = "") -> Pattern:
    pattern: Pattern | None = None
    for j, (kind, what) in enumerate(levels[i]):
        name = f"{prefix}s{j}"
        if kind == "raw":
            pattern = step_pattern(pattern, name, "followed_by_any").where(is_(what))
        else:
            pattern = step_pattern_group(pattern, flat_of(levels, what, f"{name}."))
    assert pattern is not None
    return pattern


def step_pattern_group(pattern: Pattern | None, group: Pattern) -> Pattern:
    return Pattern.begin(group) if pattern is None else pattern.followed_by_any(group)


@given(
    trees(),
    streams(strictly_increasing=True, max_size=12),
    st.one_of(st.none(), st.integers(5, 30)),
    st.one_of(st.none(), st.integers(0, 10)),
)
@SETTINGS
def test_a_hierarchy_equals_the_flat_pattern_of_group_patterns(
    levels: list[list[Step]], events: list[dict[str, Any]], window: int | None, lower_extra: int | None
) -> None:
    top = f"L{len(levels) - 1}"
    operator = HierarchyOperator(
        hierarchy_of(levels, window, lower_extra), key_by="key", timestamp="ts", emit=[top]
    )
    out = operator.process_elements(events) + operator.flush()
    hierarchy = Counter(
        (o.key, tuple(e["id"] for e in o.value.raw_events())) for o in out if o.kind == "match"
    )
    flat = flat_of(levels, len(levels) - 1).within(window)
    stream = CEP.pattern(events, flat, key_by="key", timestamp="ts")
    flat_matches = Counter(
        (m_key, tuple(sorted(e["id"] for v in m.values() for e in v)))
        for m_key, m in stream.process(lambda m, ctx, out: out.collect((ctx.key, m)))
    )
    event(f"levels: {len(levels)}, top-level matches: {min(sum(flat_matches.values()), 5)}+")
    assert hierarchy == flat_matches
