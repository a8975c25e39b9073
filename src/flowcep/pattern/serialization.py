"""Where ``Pattern.to_json`` / ``Pattern.from_json`` find the JSON rule format.

The format (``flowcep.rules``) sits above this layer: its conditions compile through the
expression language (``flowcep.expr``), which is built on this layer's ``Condition``. So this
layer cannot import it. ``import flowcep`` (which runs before any ``flowcep.*`` module) registers
a loader here, and the format is imported on first use, keeping ``import flowcep`` light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class PatternCodec(Protocol):
    def to_dict(self, pattern: Any, registry: Any = None, name: str | None = None) -> dict[str, Any]: ...

    def from_document(self, document: Any, registry: Any = None, access: str = "any") -> Any: ...


_loader: list[Callable[[], PatternCodec]] = []
_codec: list[PatternCodec] = []


def register(loader: Callable[[], PatternCodec]) -> None:
    """``loader()`` gives the JSON rule format when it is first needed (``flowcep`` registers it)."""
    _loader[:] = [loader]
    _codec.clear()


def codec() -> PatternCodec:
    if not _codec:
        if not _loader:  # only when flowcep/__init__ did not run, which Python's imports do not allow
            raise RuntimeError("the JSON rule format is not registered: import flowcep")
        _codec.append(_loader[0]())
    return _codec[0]
