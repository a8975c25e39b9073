"""On PyPy, Flink's Long.MAX_VALUE reaches the operator as a machine-sized int object.

PyPy stores an instance's int attributes unboxed while they only ever hold machine-sized ints.
``2**63 - 1`` is a big-int object there, and storing one in such an attribute (flush's
watermark) boxes that class's int attributes for the rest of the process: every compiled trace
that read them is compiled again. These tests look at the objects themselves, not at timings.
"""

from __future__ import annotations

import platform
from typing import Any

import pytest

from flowcep.nfa.computation_state import NO_START
from flowcep.runtime import LONG_MAX, LONG_MIN

from .support import abc_within, events, operator, run

pypy_only = pytest.mark.skipif(platform.python_implementation() != "PyPy", reason="PyPy's int objects")


def representation(value: Any) -> str:
    import __pypy__  # type: ignore[import-not-found]

    return __pypy__.internal_repr(value)  # type: ignore[no-any-return]


@pypy_only
def test_the_bounds_of_flink_timestamps_are_machine_sized_ints() -> None:
    assert representation(2**63 - 1).startswith("<W_LongObject")  # what LONG_MAX must not be
    assert LONG_MAX == 2**63 - 1 and representation(LONG_MAX).startswith("<W_IntObject")
    assert LONG_MIN == -(2**63) and representation(LONG_MIN).startswith("<W_IntObject")
    assert NO_START[0] == 2**63 - 1 and representation(NO_START[0]).startswith("<W_IntObject")


@pypy_only
def test_flush_stores_a_machine_sized_watermark() -> None:
    op = operator(abc_within())
    run(op, events("a1 b2 c3"))
    assert op.current_watermark == 2**63 - 1
    assert representation(op.current_watermark).startswith("<W_IntObject")


@pypy_only
def test_a_final_watermark_given_as_a_big_int_is_stored_as_a_machine_sized_int() -> None:
    op = operator(abc_within())
    run(op, events("a1 b2 c3"), flush=False)
    op.process_watermark(2**63 - 1)
    assert op.current_watermark == 2**63 - 1
    assert representation(op.current_watermark).startswith("<W_IntObject")
