"""The old import path of the Dewey versions: they live in ``flowcep.sharedbuffer.dewey``.

The buffer owns the versions it stores, and sits below the NFA that makes them.
"""

from __future__ import annotations

from flowcep.sharedbuffer.dewey import (
    DeweyNumber,
    add_stage,
    dewey,
    increase,
    is_compatible,
    parse,
    to_string,
)

__all__ = ["DeweyNumber", "add_stage", "dewey", "increase", "is_compatible", "parse", "to_string"]
