"""The user's ``select`` of the DataFrame connectors: which results it sees, and the rows it returns."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def select_arity(fn: Callable[..., Any]) -> int:
    """1 for ``select(match)``, 3 for ``select(kind, key, events)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 1
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = len([p for p in positional if p.default is p.empty])
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if required == 1:
        return 1
    if required == 3 or (required < 3 and (len(positional) >= 3 or varargs)):
        return 3
    if required == 0 and positional:
        return 1
    raise TypeError("select must take one argument (match) or three (kind, key, events)")
