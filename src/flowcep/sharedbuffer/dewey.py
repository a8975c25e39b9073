"""Dewey decimal versions of runs (Flink's ``DeweyNumber``).

A version is a plain tuple of ints: tuples are immutable, hashable, compare
fast and pickle small.  ``1.0.2`` is ``(1, 0, 2)``.
"""

from __future__ import annotations

DeweyNumber = tuple[int, ...]


def dewey(*digits: int) -> DeweyNumber:
    """Build a version from its digits: ``dewey(1, 0, 2)``."""
    return tuple(digits)


def increase(version: DeweyNumber, times: int = 1) -> DeweyNumber:
    """Bump the last digit by ``times`` (Flink's ``increase(n)``)."""
    if times == 0:
        return version
    return version[:-1] + (version[-1] + times,)


def add_stage(version: DeweyNumber) -> DeweyNumber:
    """Append a new stage ``0`` (Flink's ``addStage()``)."""
    return version + (0,)


def is_compatible(version: DeweyNumber, other: DeweyNumber) -> bool:
    """Whether ``version`` descends from ``other`` (Flink's ``isCompatibleWith``).

    Longer versions are compatible when ``other`` is a prefix; versions of equal
    length when all but the last digit agree and the last is not smaller.
    """
    n = len(other)
    m = len(version)
    if m > n:
        return version[:n] == other
    if m == n:
        last = n - 1
        return version[:last] == other[:last] and version[last] >= other[last]
    return False


def to_string(version: DeweyNumber) -> str:
    return ".".join(map(str, version))


def parse(text: str) -> DeweyNumber:
    return tuple(int(p) for p in text.split("."))
