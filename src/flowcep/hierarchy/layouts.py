"""Which hierarchy engine took a snapshot: so that each engine refuses the other's with an error
that says so, not as a snapshot of another pattern."""

from __future__ import annotations

from typing import Any, Final

from flowcep.runtime.snapshot import HEADER, SnapshotError, loads, unpack

LEVELS_LAYOUT: Final = "hierarchy-1"  # HierarchyOperator's
ONE_PASS_LAYOUT: Final = "hierarchy-one-pass-1"  # OnePassHierarchy's
#: The engine (``hierarchy_operator``'s name for it) that takes and restores each layout.
LAYOUT_ENGINES: Final = {LEVELS_LAYOUT: "levels", ONE_PASS_LAYOUT: "one_pass"}


def unpack_hierarchy(data: bytes, fingerprint: bytes, layout: str, engine: str) -> Any:
    """``unpack(data, fingerprint)``, whose payload starts with ``layout``; a snapshot of a
    hierarchy engine of another layout raises a ``SnapshotError`` naming that layout and
    ``engine``, the one that restores this layout."""
    try:
        payload = unpack(data, fingerprint)
        found = payload[0] if isinstance(payload, tuple) and payload else None
    except SnapshotError:
        found = _layout(data)
        if found is None or found == layout:
            raise
    if found != layout:
        raise SnapshotError(
            f"a hierarchy snapshot of layout {found!r}, taken by the other hierarchy engine: {engine} "
            f"restores only layout {layout!r}; restore it into the engine that took it"
        )
    return payload


def snapshot_engine(data: bytes) -> str | None:
    """The engine that took a hierarchy snapshot (``LAYOUT_ENGINES``), or None (not one)."""
    return LAYOUT_ENGINES.get(_layout(data) or "")


def _layout(data: Any) -> str | None:
    """The layout a hierarchy snapshot names, or None (not one)."""
    try:
        payload = loads(bytes(data)[HEADER:])
    except Exception:
        return None
    if isinstance(payload, tuple) and payload and isinstance(payload[0], str):
        return payload[0]
    return None
