"""The versioned, reference-counted shared buffer."""

# The buffer's versions are the NFA's Dewey numbers and the NFA uses the buffer: load the NFA
# package first, so that importing this package on its own does not meet the cycle half-way.
import flowcep.nfa  # noqa: F401
from flowcep.sharedbuffer.sharedbuffer import EventId, NodeId, PathlessBuffer, SharedBuffer

__all__ = ["EventId", "NodeId", "PathlessBuffer", "SharedBuffer"]
