"""tune_gc: the collector may run less often because processing events makes no reference cycles."""

from __future__ import annotations

import gc
import platform
from collections.abc import Iterator
from typing import Any

import pytest

from flowcep.pattern import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import CepOperator, tune_gc
from flowcep.runtime.gctuning import tuned_gc

from .support import Ev, abc_within, is_

cpython_only = pytest.mark.skipif(
    platform.python_implementation() != "CPython", reason="counts cyclic garbage with CPython's collector"
)


@pytest.fixture
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold() if hasattr(gc, "get_threshold") else None
    yield
    if saved is not None:
        gc.set_threshold(*saved)


def skip_past_last_iterative() -> Pattern:
    """Paths in the shared buffer (skip strategy) and conditions that read the partial match."""
    return (
        Pattern.begin("a", AfterMatchSkipStrategy.skip_past_last_event())
        .where(is_("a"))
        .one_or_more()
        .followed_by("b")
        .where(lambda e, ctx: e.name == "b" and len(ctx.get_events_for_pattern("a")) < 3)
        .within(10)
    )


def cyclic_garbage_after(pattern: Pattern, events: int) -> int:
    """Objects in reference cycles that an operator leaves after ``events`` events and a flush."""
    names = "abcabxbcaacaxxxxxxxxxxxxx"  # the last a time out
    gc.collect()
    gc.disable()
    try:
        op = CepOperator(pattern, key_by=lambda e: e.key, timestamp=lambda e: e.ts)
        outputs = op.process_elements(
            Ev(names[i % len(names)], i, f"k{i // len(names) % 3}") for i in range(events)
        )
        outputs += op.flush()
        assert any(o.kind == "match" for o in outputs) and any(o.kind == "timeout" for o in outputs)
        del op, outputs
        return gc.collect()
    finally:
        gc.enable()


@cpython_only
@pytest.mark.parametrize("pattern", [abc_within, skip_past_last_iterative])
def test_processing_events_makes_no_reference_cycles(pattern: object) -> None:
    # the operator's own construction makes a few (generated functions and their namespaces)
    assert cyclic_garbage_after(pattern(), 3000) == cyclic_garbage_after(pattern(), 300)  # type: ignore[operator]


@cpython_only
def test_tune_gc_raises_cpythons_thresholds(thresholds: None) -> None:
    gc.set_threshold(700, 10, 10)
    assert tune_gc() is True
    assert gc.get_threshold() == (50_000, 50, 100)
    tune_gc((5_000, 20, 30))
    assert gc.get_threshold() == (5_000, 20, 30)


@cpython_only
def test_tuned_gc_puts_the_thresholds_back_after_its_block(thresholds: None) -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(KeyError), tuned_gc():
        assert gc.get_threshold() == (50_000, 50, 100)
        raise KeyError("the block fails")
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.skipif(platform.python_implementation() != "PyPy", reason="PyPy's collector has no thresholds")
def test_tune_gc_on_pypy_changes_nothing() -> None:
    assert tune_gc() is False
    with tuned_gc():
        pass


@pytest.mark.parametrize("bad", [(0, 10, 10), (1000, 10), (1000, 10, 10.5)])
def test_tune_gc_rejects_anything_but_three_positive_integers(bad: Any, thresholds: None) -> None:
    with pytest.raises(ValueError, match="three positive integers"):
        tune_gc(bad)
