"""Which hierarchy engine took a snapshot: so that each engine refuses the other's with an error
that says so, not as a snapshot of another pattern."""

from __future__ import annotations

from typing import Any

from flowcep.runtime.snapshot import MAGIC, SnapshotError, loads, unpack

_FINGERPRINT = 32  # bytes of the header's fingerprint, after the magic bytes and the version


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


def _layout(data: Any) -> str | None:
    """The layout a hierarchy snapshot names, or None (not one)."""
    try:
        payload = loads(bytes(data)[len(MAGIC) + 2 + _FINGERPRINT :])
    except Exception:
        return None
    if isinstance(payload, tuple) and payload and isinstance(payload[0], str):
        return payload[0]
    return None
