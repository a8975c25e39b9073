"""Which steps a condition may read through ``ctx.get_events_for_pattern``, guessed statically.

The guess is the step names among the strings a condition's code can reach: its constants, its
closure, its defaults, the globals it names, and the same for the functions it holds. It places a
predicate in the operator tree; it need not be exact, because a read of a step the operator does
not bind raises ``Unbound`` and the predicate is checked again at the root.
"""

from __future__ import annotations

import types
from typing import Any


def strings_reached(obj: Any, depth: int = 3) -> set[str]:
    """The strings reachable from a function, method, code object or container (a few levels deep)."""
    found: set[str] = set()
    _walk(obj, depth, found, set())
    return found


def _walk(obj: Any, depth: int, found: set[str], seen: set[int]) -> None:
    if isinstance(obj, str):
        found.add(obj)
        return
    if depth < 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, types.MethodType):
        _walk(obj.__func__, depth, found, seen)
        _walk(obj.__self__, depth - 1, found, seen)
    elif isinstance(obj, types.FunctionType):
        _walk(obj.__code__, depth, found, seen)
        for cell in obj.__closure__ or ():
            try:
                _walk(cell.cell_contents, depth - 1, found, seen)
            except ValueError:  # an empty cell
                pass
        _walk(obj.__defaults__, depth - 1, found, seen)
        for name in obj.__code__.co_names:
            value = obj.__globals__.get(name)
            if isinstance(value, str):
                found.add(value)
    elif isinstance(obj, types.CodeType):
        for const in obj.co_consts:
            _walk(const, depth, found, seen)
    elif isinstance(obj, (tuple, list, frozenset, set)):
        for item in obj:
            _walk(item, depth - 1, found, seen)
    elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
        values = list(getattr(obj, "__dict__", {}).values())
        for klass in type(obj).__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for slot in (slots,) if isinstance(slots, str) else slots:
                if hasattr(obj, slot):
                    values.append(getattr(obj, slot))
        for value in values:
            _walk(value, depth - 1, found, seen)
