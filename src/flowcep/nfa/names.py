"""Internal state names: ``b``, ``b:0``, ``b:1``... and the pattern name each comes from.

The compiler makes these names and the NFA reads them back; both import them from here.
"""

from __future__ import annotations

ENDING_STATE_NAME = "$endState$"
STATE_NAME_DELIM = ":"


def original_name(internal_name: str) -> str:
    """``b:2`` -> ``b`` (Flink's ``getOriginalNameFromInternal``)."""
    return internal_name.split(STATE_NAME_DELIM)[0]
