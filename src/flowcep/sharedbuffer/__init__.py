"""The versioned, reference-counted shared buffer and the Dewey versions it stores."""

from flowcep.sharedbuffer.sharedbuffer import EventId, NodeId, PathlessBuffer, SharedBuffer

__all__ = ["EventId", "NodeId", "PathlessBuffer", "SharedBuffer"]
