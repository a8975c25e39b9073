"""The versioned, reference-counted shared buffer."""

from flowcep.sharedbuffer.sharedbuffer import EventId, NodeId, SharedBuffer

__all__ = ["EventId", "NodeId", "SharedBuffer"]
