"""Generated functions, compiled once per source text and shared by every NFA that needs them.

The NFA writes some of its hot-path code out as Python source (decision tables, plans). Each
compiled pattern used to compile its own copy, so two operators of one pattern ran two sets of
code objects: on PyPy every new operator warmed its JIT up again from nothing (W1: the first
50,000 events of a second operator at 53,000 events/s, against 374,000 once it reuses the first
operator's code; measured 2026-11-26). Here the source is compiled once; each NFA runs the
compiled module in a namespace of its own values (its conditions, its decisions), so equal
source gives functions with one code object, whatever the values.

Only where a JIT keys its work by code object (PyPy). CPython keeps a code object's
specialised instructions in the code object itself, for one set of globals: functions of one
code object with different values (two states with equal tables but other conditions) undo each
other's specialisations (+1.1 % instructions on W1 and W3 when shared; as closure cells instead
of globals, +0.6 %: a cell copy per call). There each function gets a code object of its own.
"""

from __future__ import annotations

import sys
from typing import Any

_CODES: dict[str, Any] = {}  # compiled sources; bounded, in case a program builds patterns endlessly
MAX_CODES = 4096
SHARE_CODE = sys.implementation.name != "cpython"


def generated(source: str, name: str, values: dict[str, Any]) -> Any:
    """The function ``name`` that ``source`` defines, with ``values`` (and builtins) as its
    globals. ``values`` becomes its namespace: pass a dict of its own."""
    code = _CODES.get(source) if SHARE_CODE else None
    if code is None:
        code = compile(source, f"<flowcep generated {name}>", "exec")
        if SHARE_CODE:
            if len(_CODES) >= MAX_CODES:
                _CODES.clear()
            _CODES[source] = code
    # generated from compiled states: names enter as identifiers and repr() literals only
    exec(code, values)  # noqa: S102
    return values[name]
