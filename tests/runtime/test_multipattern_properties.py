"""Properties of the multi-pattern operator on random patterns and streams: hosting a pattern with
others gives the results it gives alone, and after a replace the new version gives the results of
a fresh operator started at the watermark (docs/multi-pattern.md)."""

from __future__ import annotations

from typing import Any

from core.test_properties import compile_or_reject, pattern_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcep import MultiPatternOperator
from flowcep.runtime import CepOperator, Output

from .support import Ev

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OUT_OF_ORDERNESS = 2

# elements: (name, time step, how far behind the stream's time, key, a watermark after it)
streams = st.lists(
    st.tuples(
        st.sampled_from("abcx"),
        st.sampled_from([0, 1, 1, 2, 4]),
        st.sampled_from([0, 0, 0, 1, 3]),
        st.sampled_from("pq"),
        st.sampled_from([False] * 6 + [True]),
    ),
    max_size=30,
)


def _elements(raw: list[tuple[str, int, int, str, bool]]) -> list[tuple[Ev, int | None]]:
    """Events, each with the watermark pushed after it (None: none), a few behind the stream."""
    now, out = 0, []
    for name, step, behind, key, mark in raw:
        now += step
        out.append((Ev(name, now - behind, key), now - 3 if mark else None))
    return out


def _condition(*names: str) -> Any:
    return lambda e: e.name in names


def _pattern(spec: Any) -> Any:
    pattern, _ = compile_or_reject(spec, _condition, _condition)
    return pattern


def _options() -> dict[str, Any]:
    return dict(key_by="key", timestamp="ts", out_of_orderness=OUT_OF_ORDERNESS, on_error="side_output")


def _plain(outputs: list[Any]) -> list[tuple[Any, ...]]:
    return [(o.kind, o.key, o.value, o.timestamp) for o in outputs]


def _by_key(outputs: list[tuple[Any, ...]]) -> dict[Any, list[tuple[Any, ...]]]:
    """Each key's outputs in order (keys that fire together may come out in another order)."""
    keys: dict[Any, list[tuple[Any, ...]]] = {}
    for o in outputs:
        keys.setdefault(o[1], []).append(o)
    return keys


def _feed(op: Any, elements: list[tuple[Ev, int | None]], batch: int) -> list[Any]:
    """Push ``elements`` ``batch`` at a time (a watermark closes a batch)."""
    out: list[Any] = []
    pending: list[Ev] = []
    for event, mark in elements:
        pending.append(event)
        if mark is not None or len(pending) >= batch:
            out.extend(op.process_elements(pending))
            pending = []
            if mark is not None:
                out.extend(op.process_watermark(mark))
    if pending:
        out.extend(op.process_elements(pending))
    return out


@SETTINGS
@given(st.lists(pattern_specs(), min_size=2, max_size=3), streams, st.integers(1, 4))
def test_a_pattern_hosted_with_others_gives_the_results_it_gives_alone(
    specs: list[Any], raw: list[Any], batch: int
) -> None:
    patterns = {f"p{i}": (i, _pattern(spec)) for i, spec in enumerate(specs)}
    elements = _elements(raw)
    hosted = MultiPatternOperator(patterns, **_options())
    together = _feed(hosted, elements, batch) + hosted.flush()
    late = [o for o in together if o.kind == "late"]
    for name, (version, pattern) in patterns.items():
        alone_op = CepOperator(pattern, **_options())
        alone: list[Output] = _feed(alone_op, elements, batch) + alone_op.flush()
        mine = [o for o in together if o.pattern == name]
        assert {o.version for o in mine} <= {version}
        assert _plain(mine) == _plain([o for o in alone if o.kind != "late"])
        assert _plain(late) == _plain([o for o in alone if o.kind == "late"])


@SETTINGS
@given(pattern_specs(), pattern_specs(), pattern_specs(), streams, st.integers(0, 30))
def test_after_a_replace_the_new_version_gives_a_fresh_operators_results_from_the_watermark(
    old_spec: Any, new_spec: Any, other_spec: Any, raw: list[Any], cut: int
) -> None:
    old, new, other = _pattern(old_spec), _pattern(new_spec), _pattern(other_spec)
    elements = _elements(raw)
    before, after = elements[:cut], elements[cut:]
    op = MultiPatternOperator({"other": (1, other), "p": (1, old)}, **_options())
    first = _feed(op, before, 1)
    watermark = op.current_watermark
    op.replace("p", new, 2)
    second = _feed(op, after, 1) + op.flush()
    # version 1: what the old pattern alone gave on the elements before the replace
    old_alone = CepOperator(old, **_options())
    assert _plain([o for o in first if o.pattern == "p"]) == _plain(
        [o for o in _feed(old_alone, before, 1) if o.kind != "late"]
    )
    assert {o.version for o in second if o.pattern == "p"} <= {2}
    # version 2: a fresh operator at the watermark, given every element after it (those taken
    # before the replace and not matched yet included)
    fresh = CepOperator(new, **_options())
    fresh.process_watermark(watermark)
    rest = [(e, None) for e, _ in before if e.ts > watermark] + after
    expected = [o for o in _feed(fresh, rest, 1) + fresh.flush() if o.kind != "late"]
    assert _by_key(_plain([o for o in second if o.pattern == "p"])) == _by_key(_plain(expected))
    # the other pattern: as if nothing had changed
    other_alone = CepOperator(other, **_options())
    assert _plain([o for o in first + second if o.pattern == "other"]) == _plain(
        [o for o in _feed(other_alone, elements, 1) + other_alone.flush() if o.kind != "late"]
    )


@SETTINGS
@given(st.lists(pattern_specs(), min_size=2, max_size=2), streams, st.integers(0, 30))
def test_a_snapshot_restored_midway_continues_with_the_same_results(
    specs: list[Any], raw: list[Any], cut: int
) -> None:
    patterns = {f"p{i}": (i, _pattern(spec)) for i, spec in enumerate(specs)}
    elements = _elements(raw)
    straight = MultiPatternOperator(patterns, **_options())
    _feed(straight, elements[:cut], 2)
    data = straight.snapshot()
    rest = _feed(straight, elements[cut:], 2) + straight.flush()
    restored = MultiPatternOperator(patterns, **_options())
    restored.restore(data)
    again = _feed(restored, elements[cut:], 2) + restored.flush()
    assert [(o.pattern, o.version, *t) for o, t in zip(again, _plain(again))] == [
        (o.pattern, o.version, *t) for o, t in zip(rest, _plain(rest))
    ]


@SETTINGS
@given(pattern_specs(), streams, st.integers(0, 30))
def test_keeping_partial_matches_across_a_replace_by_the_same_pattern_changes_no_result(
    spec: Any, raw: list[Any], cut: int
) -> None:
    pattern = _pattern(spec)
    elements = _elements(raw)
    op = MultiPatternOperator({"p": (1, pattern)}, **_options())
    out = _feed(op, elements[:cut], 1)
    op.replace("p", _pattern(spec), 2, keep_partial_matches=True)
    out += _feed(op, elements[cut:], 1) + op.flush()
    alone = CepOperator(pattern, **_options())
    assert _plain([o for o in out if o.kind != "late"]) == _plain(
        [o for o in _feed(alone, elements, 1) + alone.flush() if o.kind != "late"]
    )
