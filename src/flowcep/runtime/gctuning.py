"""Collector settings for throughput, process-wide and opt-in: ``tune_gc()``, ``tuned_gc()``.

CPython collects its youngest generation every 700 net new container objects and its whole heap
whenever the long-lived objects grew by a quarter. A CEP job allocates runs, matches and outputs
per event and keeps many keys' state alive, so with the defaults the collector walks that state
again and again, freeing nothing: processing events makes no reference cycles (tested), so
reference counting frees flowcep's garbage whatever the thresholds; higher ones only delay the
collection of cycles that user code makes. flowcep, the library, never changes the collector by
itself, with scoped exceptions that restore the thresholds after them: ``flowcep run`` while it
matches (docs/cli.md), and the Spark connector while it runs one key's rows (batch) or one bucket
of keys (streaming; docs/spark.md); so does the benchmark unless told ``--gc default``.

Raising the thresholds makes many-key jobs markedly faster; docs/runtime.md §8 has the figures.

PyPy sizes its young generation (the nursery) from the CPU cache, and it cannot be changed at
run time: start PyPy with ``PYPY_GC_NURSERY`` set (``PYPY_NURSERY`` is the value the benchmark
uses; a larger nursery cut the collector's time on W1, docs/runtime.md §8).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# (young, middle, full): young collections after this many net new containers; a full one at most
# every ``full`` middle ones (Python's own: 700, 10, 10)
THROUGHPUT_THRESHOLDS = (50_000, 50, 100)
PYPY_NURSERY = "128M"  # for PYPY_GC_NURSERY; PyPy's default here is 1 MB


def tune_gc(thresholds: tuple[int, int, int] = THROUGHPUT_THRESHOLDS) -> bool:
    """Make the collector run less often, for throughput: ``gc.set_threshold`` on CPython.

    Process-wide: call it once, when the program starts, as one sets a JVM's heap and collector
    flags. Returns False where nothing can be changed at run time (PyPy: set ``PYPY_GC_NURSERY``
    before it starts instead).
    """
    if len(thresholds) != 3 or any(type(t) is not int or t < 1 for t in thresholds):
        raise ValueError(f"thresholds must be three positive integers, got {thresholds!r}")
    if not hasattr(gc, "set_threshold"):
        return False
    gc.set_threshold(*thresholds)
    return True


@contextmanager
def tuned_gc(thresholds: tuple[int, int, int] = THROUGHPUT_THRESHOLDS) -> Iterator[None]:
    """``tune_gc`` inside the block, the thresholds as they were after it."""
    before = gc.get_threshold() if hasattr(gc, "get_threshold") else None
    tune_gc(thresholds)
    try:
        yield
    finally:
        if before is not None:
            gc.set_threshold(*before)
