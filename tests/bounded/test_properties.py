"""On random patterns of the bounded class and random streams, OptiSeq, the operator tree (with
and without predicate reordering) and the planner give exactly the NFA's multiset of matches."""

from __future__ import annotations

from core.helpers import Event, flat_ids, named, price_above_avg_of, price_above_last_of, run
from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

from flowcep import Pattern
from flowcep.bounded import SequenceOperator, compile_bounded, evaluate, support

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LETTERS = "abc"


def price_above_first_of(name: str):
    """Iterative: price > price of the first event taken by `name` (true if none)."""

    def cond(e, ctx):
        taken = ctx.get_events_for_pattern(name)
        return not taken or e.price > taken[0].price

    return cond


def price_at_most(x: float):
    def cond(e):
        return e.price <= x

    return cond


@st.composite
def conditions(draw, earlier: list[str], own: str, loop: bool):
    """A step's conditions, ANDed in order: a name test, maybe a price test, maybe an iterative one."""
    out = [named(*sorted(draw(st.sets(st.sampled_from(LETTERS), min_size=1, max_size=3))))]
    if draw(st.integers(0, 3)) == 0:
        out.append(price_at_most(draw(st.integers(0, 3))))
    readable = earlier + ([own] if loop else [])
    if readable and draw(st.booleans()):
        target = draw(st.sampled_from(readable))
        make = draw(st.sampled_from([price_above_last_of, price_above_avg_of, price_above_first_of]))
        out.insert(draw(st.integers(0, len(out))), make(target))
    return out


@st.composite
def bounded_patterns(draw):
    n = draw(st.integers(1, 4))
    p = None
    names: list[str] = []
    loops: list[bool] = []
    for i in range(n):
        name = f"s{i}"
        quant = draw(st.sampled_from(["one", "one", "one", "one_or_more", "times_or_more2", "times1_3"]))
        loop = quant != "one"
        if p is None:
            p = Pattern.begin(name)
        else:
            if not loops[-1] and not loop and draw(st.integers(0, 2)) == 0:
                for k in range(draw(st.integers(1, 2))):
                    neg = p.not_followed_by(f"n{i}_{k}")
                    conds = draw(conditions(names, f"n{i}_{k}", False))
                    for c in conds:
                        neg = neg.where(c)
                    p = neg
            p = p.followed_by_any(name)
        for c in draw(conditions(names, name, loop)):
            p = p.where(c)
        if quant == "one_or_more":
            p = p.one_or_more().allow_combinations()
        elif quant == "times_or_more2":
            p = p.times_or_more(2).allow_combinations()
        elif quant == "times1_3":
            p = p.times(1, 3).allow_combinations()
        names.append(name)
        loops.append(loop)
    window = draw(st.sampled_from([None, None, 3, 5, 8]))
    if window is not None:
        p = p.within(window)
    return p


event_streams = st.lists(
    st.tuples(st.sampled_from(LETTERS + "x"), st.integers(0, 3), st.integers(0, 2)), min_size=2, max_size=12
).map(lambda xs: _to_events(xs))


def _to_events(xs):
    out, ts = [], 0
    for i, (name, price, gap) in enumerate(xs, start=1):
        ts += gap
        out.append(Event(name=name, price=float(price), ts=ts, id=i))
    return out


def built_in_sequences(pattern):
    """The built-in sequence operator, given explicitly for every step after the first: the
    left-deep tree of composites."""
    return {name: SequenceOperator() for name in compile_bounded(pattern).names[1:]}


def matches(pattern, evs, evaluator, **kw):
    return sorted(flat_ids(m) for m in evaluate(pattern, evs, timestamp="ts", evaluator=evaluator, **kw))


@SETTINGS
@given(bounded_patterns(), event_streams)
def test_every_evaluator_gives_the_nfa_matches(pattern, evs):
    assert support(pattern) is None
    expected = run(pattern, evs)
    target(float(min(len(expected), 20)))
    assert matches(pattern, evs, "optiseq") == expected
    assert matches(pattern, evs, "tree") == expected
    assert matches(pattern, evs, "tree", reorder_predicates=True) == expected
    assert matches(pattern, evs, "auto") == expected
    assert matches(pattern, evs, "tree", operators=built_in_sequences(pattern)) == expected
    text = repr(pattern)
    for feature, present in (
        ("matches", bool(expected)),
        ("negation", "NOT_FOLLOW" in text),
        ("loop", "LOOPING" in text or "TIMES" in text),
        ("iterative condition", "IterativeCondition(" in text),
    ):
        event(f"{feature}: {present}")


@st.composite
def negation_patterns(draw):
    """Single steps with one or two negations between some of them."""
    p = Pattern.begin("s0")
    names = ["s0"]
    for c in draw(conditions([], "s0", False)):
        p = p.where(c)
    for i in range(1, draw(st.integers(2, 4))):
        if draw(st.booleans()) or i == 1:
            for k in range(draw(st.integers(1, 2))):
                p = p.not_followed_by(f"n{i}_{k}")
                for c in draw(conditions(names, f"n{i}_{k}", False)):
                    p = p.where(c)
        name = f"s{i}"
        p = p.followed_by_any(name)
        for c in draw(conditions(names, name, False)):
            p = p.where(c)
        names.append(name)
    window = draw(st.sampled_from([None, 3, 6]))
    return p if window is None else p.within(window)


@SETTINGS
@given(negation_patterns(), event_streams)
def test_negations_give_the_nfa_matches(pattern, evs):
    expected = run(pattern, evs)
    target(float(min(len(expected), 10)))
    assert matches(pattern, evs, "optiseq") == expected
    assert matches(pattern, evs, "tree") == expected
    assert matches(pattern, evs, "tree", reorder_predicates=True) == expected
    assert matches(pattern, evs, "tree", operators=built_in_sequences(pattern)) == expected
