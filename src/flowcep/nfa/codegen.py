"""Generated functions, compiled once per source text and shared by every NFA that needs them.

The NFA writes some of its hot-path code out as Python source (decision tables, plans). Here the
source is compiled once; each NFA gets its function with its own values (its conditions, its
decisions), so equal source gives functions with one code object, whatever the values.

Only where a JIT keys its work by code object (PyPy): without sharing, every new operator of a
known pattern would warm the JIT up again from nothing (docs/runtime.md §8). There the values are
the free variables of the function, bound by a factory around the source, because PyPy's JIT
reads a closure cell with a few field reads but a name in a globals dict that is not a module's
with a dict lookup per use. CPython keeps a code object's specialised instructions in the code
object itself, for one set of globals: functions of one code object with different values undo
each other's specialisations, and closure cells cost a copy per call (docs/runtime.md §8 has the
figures). There each function gets a code object of its own and reads its values as globals.

Every source is registered with ``linecache`` under its file name, so that tracebacks and
debuggers show the generated lines.
"""

from __future__ import annotations

import builtins
import hashlib
import linecache
import sys
from typing import Any

_CODES: dict[
    tuple[str, tuple[str, ...]], Any
] = {}  # factories; bounded, in case a program builds patterns endlessly
MAX_CODES = 4096
SHARE_CODE = sys.implementation.name != "cpython"
_FACTORY = "_flowcep_bind_"
_SOURCES: dict[str, None] = {}  # the file names registered with linecache, oldest first (bounded too)


def generated(source: str, name: str, values: dict[str, Any]) -> Any:
    """The function ``name`` that ``source`` defines (at its top level), reading ``values`` and
    builtins. ``values`` may be changed by the call: pass a dict of its own."""
    if not SHARE_CODE:
        # generated from compiled states: names enter as identifiers and repr() literals only
        exec(compile(source, _registered(source, name), "exec"), values)  # noqa: S102
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
    exec(compile(text, _registered(text, name), "exec"), namespace)  # noqa: S102
    return namespace[_FACTORY]


def _global_names(code: Any) -> set[str]:
    """Every name ``code`` and the code objects within it may load (a superset of its globals)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def _registered(source: str, name: str) -> str:
    """A file name for ``source``, under which ``linecache`` holds its lines (equal source, equal
    name). The oldest of more than ``MAX_CODES`` sources leave the cache again."""
    digest = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()[:12]
    filename = f"<flowcep generated {name} {digest}>"
    if filename not in _SOURCES:
        if len(_SOURCES) >= MAX_CODES:
            oldest = next(iter(_SOURCES))
            del _SOURCES[oldest]
            linecache.cache.pop(oldest, None)
        _SOURCES[filename] = None
    # (mtime None: linecache.checkcache never looks for a file of that name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename
