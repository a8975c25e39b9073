"""The event type of rows read from files: a dict whose columns are also attributes."""

from __future__ import annotations

from typing import Any


class Record(dict[str, Any]):
    """One input row. ``e["price"]`` and ``e.price`` are the same value.

    A ``Record`` is a plain ``dict`` underneath, so it serializes to JSON as is, pickles, and
    works with code written for dicts. Columns whose names are not identifiers (``"unit price"``)
    or clash with dict methods (``items``, ``keys``...) are reached with ``e["..."]``.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name.startswith("__"):
                raise AttributeError(name) from None
            columns = ", ".join(map(str, self)) or "none"
            raise AttributeError(f"event has no column {name!r} (its columns: {columns})") from None

    def __repr__(self) -> str:
        return f"Record({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Record, (dict(self),))
