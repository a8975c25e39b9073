"""Where ``Pattern.to_json`` / ``Pattern.from_json`` find the JSON rule format.

The format (``flowcep.rules``) sits above this layer: its conditions compile through the
expression language (``flowcep.expr``), which is built on this layer's ``Condition``. So this
layer cannot import it; ``flowcep.rules`` registers its reader and writer here when it is
imported, and ``import flowcep`` (which runs before any ``flowcep.*`` module) imports it.
"""

from __future__ import annotations

from typing import Any, Protocol


class PatternCodec(Protocol):
    def to_dict(self, pattern: Any, registry: Any = None, name: str | None = None) -> dict[str, Any]: ...

    def from_document(self, document: Any, registry: Any = None, access: str = "any") -> Any: ...


_codec: list[PatternCodec] = []


def register(codec: PatternCodec) -> None:
    """Make ``codec`` the JSON rule format (``flowcep.rules`` does, once)."""
    _codec[:] = [codec]


def codec() -> PatternCodec:
    if not _codec:  # only when flowcep/__init__ did not run, which Python's imports do not allow
        raise RuntimeError("the JSON rule format is not loaded: import flowcep.rules")
    return _codec[0]
