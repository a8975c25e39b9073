"""Collector settings for throughput, process-wide and opt-in: ``tune_gc()``.

CPython collects its youngest generation every 700 net new container objects and its whole heap
whenever the long-lived objects grew by a quarter. A CEP job allocates runs, matches and outputs
per event and keeps many keys' state alive, so with the defaults the collector walks that state
again and again (W5, 100,000 keys, 400,000 events on CPython 3.11: 4.0 s of 8.0 s in the
collector). flowcep's state holds no reference cycles of its own, so collecting less often
frees the same memory, by reference counting, and only delays cycles made by user code.

Measured on this machine (2026-11-26, 400,000 events, one run each, events/s):

=========  ==========  ================  =================
workload   default      (100000, 10, 10)  (100000, 10, 100)
=========  ==========  ================  =================
W1         83,131       109,646           (not run)
W3         38,165       56,134            (not run)
W5         49,958       84,164            115,839
=========  ==========  ================  =================

PyPy sizes its young generation (the nursery) from the CPU cache, 1 MB on this machine, and it
cannot be changed at run time: start PyPy with ``PYPY_GC_NURSERY`` set (``PYPY_NURSERY`` is
the value the benchmark uses). On W1 that cut the collector's time from about 0.5 s to 0.1 s
per million events.
"""

from __future__ import annotations

import gc

YOUNG_OBJECTS = 100_000  # collect the youngest generation after this many net new containers
FULL_EVERY = 100  # at most one full collection per this many middle-generation collections
PYPY_NURSERY = "128M"  # for PYPY_GC_NURSERY; PyPy's default here is 1 MB


def tune_gc(young_objects: int = YOUNG_OBJECTS, full_every: int = FULL_EVERY) -> bool:
    """Make the collector run less often, for throughput: ``gc.set_threshold`` on CPython.

    Process-wide: call it once, when the program starts, as one sets a JVM's heap and collector
    flags. Returns False where nothing can be changed at run time (PyPy: set ``PYPY_GC_NURSERY``
    before it starts instead).
    """
    if young_objects < 1 or full_every < 1:
        raise ValueError(f"thresholds must be positive, got {young_objects} and {full_every}")
    if not hasattr(gc, "set_threshold"):
        return False
    gc.set_threshold(young_objects, gc.get_threshold()[1], full_every)
    return True
