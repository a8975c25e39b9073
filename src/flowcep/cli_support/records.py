"""The event type of rows read from files: a dict whose columns are also attributes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class Record(dict[str, Any]):
    """One input row. ``e["price"]`` and ``e.price`` are the same value.

    A ``Record`` is a plain ``dict`` underneath, so it serializes to JSON as is, pickles, and
    works with code written for dicts. Columns whose names are not identifiers (``"unit price"``)
    or clash with dict methods (``items``, ``keys``...) are reached with ``e["..."]``.

    A record read from a file remembers where it came from (``source_line``), so that an error
    met when it is finally matched, maybe much later, names its own line. That takes one slot,
    ``_flowcep_line``: a column of that name is reached with ``e["_flowcep_line"]`` only.
    """

    __slots__ = ("_flowcep_line",)

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


_LINE = Record.__dict__["_flowcep_line"]  # the slot itself: never a column's value
set_source_line = _LINE.__set__


def source_line(record: Any) -> int | None:
    """The line (the row, in a Parquet file) ``record`` was read from; None if not known."""
    if not isinstance(record, Record):
        return None
    try:
        return _LINE.__get__(record)  # type: ignore[no-any-return]
    except AttributeError:
        return None


_MAKER = """\
def make_record(line, {cells}):
    record = new(Record)
{stores}
    record._flowcep_line = line
    return record
"""


def record_maker(columns: Sequence[str]) -> Callable[..., Record]:
    """``make_record(line, *cells)``: the ``Record`` of ``columns`` and ``cells``, which knows
    its ``line``. Generated for the columns: storing each cell by name is the quickest way to
    fill a dict subclass here, on CPython and PyPy (a column named twice keeps the later cell,
    in the place of the first, as ``dict(zip(columns, cells))`` does)."""
    cells = [f"c{i}" for i in range(len(columns))]
    stores = "\n".join(f"    record[{name!r}] = {cell}" for name, cell in zip(columns, cells))
    source = _MAKER.format(cells=", ".join(cells), stores=stores)
    namespace: dict[str, Any] = {"Record": Record, "new": Record.__new__}
    exec(compile(source, f"<flowcep record of {len(columns)} columns>", "exec"), namespace)
    return namespace["make_record"]  # type: ignore[no-any-return]
