"""Generated functions, compiled once per source text and shared by every NFA that needs them.

The NFA writes some of its hot-path code out as Python source (decision tables, plans). Each
compiled pattern used to compile its own copy, so two operators of one pattern ran two sets of
code objects: on PyPy, whose JIT keys its work by code object, every new operator warmed its JIT
up again from nothing (docs/runtime.md §8). Here the source is compiled once; each NFA gets its
function with its own values (its conditions, its decisions), so equal source gives functions
with one code object, whatever the values.

Only where a JIT keys its work by code object (PyPy). There the values are the free variables
of the function, bound by a factory around the source: PyPy's JIT reads a closure cell with a
few field reads, but a name in a globals dict that is not a module's with a dict lookup per
use (W1: 12 lookups per event). CPython keeps a code object's specialised instructions in the
code object itself, for one set of globals: functions of one code object with different values
(two states with equal tables but other conditions) undo each other's specialisations (+1.1 %
instructions on W1 and W3 when shared; as closure cells instead of globals, +0.6 %: a cell copy
per call). There each function gets a code object of its own and reads its values as globals.
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

_CODES: dict[tuple[str, tuple[str, ...]], Any] = {}  # factories; bounded, in case a program builds patterns endlessly
MAX_CODES = 4096
SHARE_CODE = sys.implementation.name != "cpython"
_FACTORY = "_flowcep_bind_"


def generated(source: str, name: str, values: dict[str, Any]) -> Any:
    """The function ``name`` that ``source`` defines (at its top level), reading ``values`` and
    builtins. ``values`` may be changed by the call: pass a dict of its own."""
    if not SHARE_CODE:
        # generated from compiled states: names enter as identifiers and repr() literals only
        exec(compile(source, f"<flowcep generated {name}>", "exec"), values)  # noqa: S102
        return values[name]
    key = (source, tuple(sorted(values)))
    factory = _CODES.get(key)
    if factory is None:
        factory = _factory(source, name, key[1])
        if len(_CODES) >= MAX_CODES:
            _CODES.clear()
        _CODES[key] = factory
    params = factory.__code__.co_varnames[: factory.__code__.co_argcount]
    return factory(*[values[var] if var in values else getattr(builtins, var) for var in params])


def _factory(source: str, name: str, names: tuple[str, ...]) -> Any:
    """``def _flowcep_bind_(<names and the builtins source uses>): <source>; return <name>``."""
    used = _global_names(compile(source, "<flowcep generated>", "exec"))
    params = [*names, *sorted(n for n in used if n not in names and hasattr(builtins, n) and n != name)]
    body = "\n".join("    " + line if line else line for line in source.splitlines())
    text = f"def {_FACTORY}({', '.join(params)}):\n{body}\n    return {name}\n"
    namespace: dict[str, Any] = {}
    exec(compile(text, f"<flowcep generated {name}>", "exec"), namespace)  # noqa: S102
    return namespace[_FACTORY]


def _global_names(code: Any) -> set[str]:
    """Every name ``code`` and the code objects within it may load (a superset of its globals)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names
