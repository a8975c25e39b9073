"""The versioned, reference-counted shared buffer (Flink's ``SharedBuffer``).

Every taken event is stored once (``EventId -> event``, its reference count apart).  Nodes
``NodeId = (EventId, page)`` hold edges back to the previous node, each edge
tagged with the Dewey version of the run that created it and its own
reference count.  Runs lock the node they point at; releasing cascades
backwards through edges whose count reaches zero, so that once no run is
left the buffer is empty.
"""

from __future__ import annotations

from typing import Any

from flowcep.sharedbuffer.dewey import DeweyNumber, is_compatible

EventId = tuple[int, int]  # (timestamp, arrival counter within the timestamp)
NodeId = tuple[EventId, str]  # (event, page = original pattern name)

# Edge layout: [target NodeId | None, version, refcount (, seq once indexed)];
# node layout: [refcount, edges], edges a list or, past _INDEX_FROM edges, an _EdgeIndex; a node
# with one edge keeps it inline, [refcount, target, version, edge refcount]: most nodes have one
# edge, and one list instead of three is less to allocate and less for the garbage collector to
# walk (with many keys the buffers are much of what it walks).
_TARGET, _VERSION, _COUNT, _SEQ = 0, 1, 2, 3
_INDEX_FROM = 16
_SINGLE = 4  # the length of a node with its one edge inline


class _EdgeIndex:
    """The edges of a node with many edges, bucketed by their version's parent.

    Runs that branch a lot put hundreds of edges on one node; scanning them all on every
    lock, release and extraction made such patterns quadratic.  A version ``v`` is
    compatible with an edge version ``e`` exactly when ``e[:-1] == v[:j]`` for ``j =
    len(e) - 1 < len(v)`` and ``e[-1] == v[j]`` (``e`` a proper prefix) or ``e[-1] <= v[j]``
    (``j`` the last position): so only ``len(v)`` buckets can hold compatible edges.
    """

    __slots__ = ("buckets", "lengths", "seq")

    def __init__(self, edges: list[list[Any]]) -> None:
        self.buckets: dict[DeweyNumber, list[list[Any]]] = {}
        # parent lengths present -> number of buckets: versions grow a digit per loop take, so
        # probing every prefix of a long version would cost more than the scan it replaces
        self.lengths: dict[int, int] = {}
        self.seq = 0  # creation order, so that extraction follows it as with a list
        for edge in edges:
            self.add(edge)

    def add(self, edge: list[Any]) -> None:
        edge.append(self.seq)
        self.seq += 1
        parent = edge[_VERSION][:-1]
        bucket = self.buckets.get(parent)
        if bucket is None:
            self.buckets[parent] = [edge]
            n = len(parent)
            self.lengths[n] = self.lengths.get(n, 0) + 1
        else:
            bucket.append(edge)

    def compatible(self, version: DeweyNumber) -> list[list[Any]]:
        """The edges whose version ``version`` is compatible with, in bucket order."""
        found: list[list[Any]] = []
        buckets = self.buckets
        last = len(version) - 1
        for j in self.lengths:
            if j > last:
                continue
            bucket = buckets.get(version[:j])
            if bucket is None:
                continue
            digit = version[j]
            # plain loops: buckets hold one or two edges, a generator per bucket cost more
            if j < last:
                for edge in bucket:
                    if edge[_VERSION][-1] == digit:
                        found.append(edge)
            else:
                for edge in bucket:
                    if edge[_VERSION][-1] <= digit:
                        found.append(edge)
        return found

    def remove(self, edge: list[Any]) -> None:
        parent = edge[_VERSION][:-1]
        bucket = self.buckets[parent]
        for i, candidate in enumerate(bucket):
            if candidate is edge:
                del bucket[i]
                break
        if not bucket:
            del self.buckets[parent]
            n = len(parent)
            left = self.lengths[n] - 1
            if left:
                self.lengths[n] = left
            else:
                del self.lengths[n]

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.buckets, self.lengths, self.seq)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.buckets, self.lengths, self.seq = state


def _by_seq(edge: list[Any]) -> int:
    return edge[_SEQ]  # type: ignore[no-any-return]


class SharedBuffer:
    """Events and versioned match nodes of one key."""

    __slots__ = ("events", "event_refs", "entries", "events_count")

    #: whether the buffer records the paths of partial matches (``extract_patterns`` works)
    keeps_paths = True

    def __init__(self) -> None:
        self.events: dict[EventId, Any] = {}
        # reference counts apart from the events: a dict of ints is not tracked by the garbage
        # collector, a [event, count] holder per event was (one object less per stored event)
        self.event_refs: dict[EventId, int] = {}
        self.entries: dict[NodeId, list[Any]] = {}
        self.events_count: dict[int, int] = {}

    # -- events -------------------------------------------------------------
    def register_event(self, event: Any, timestamp: int) -> EventId:
        """Store an event with one lock (held by the caller until ``release_event``)."""
        event_id = self.next_event_id(timestamp)
        self.events[event_id] = event
        self.event_refs[event_id] = 1
        return event_id

    def next_event_id(self, timestamp: int) -> EventId:
        """A new event's id: its timestamp and its arrival counter within the timestamp."""
        counts = self.events_count
        seq = counts.get(timestamp, 0)
        counts[timestamp] = seq + 1
        return (timestamp, seq)

    def lock_event(self, event_id: EventId) -> None:
        self.event_refs[event_id] += 1

    def release_event(self, event_id: EventId) -> None:
        refs = self.event_refs
        count = refs.get(event_id)
        if count is None:
            return
        if count > 1:
            refs[event_id] = count - 1
        else:
            del refs[event_id]
            del self.events[event_id]

    def get_event(self, event_id: EventId) -> Any:
        return self.events[event_id]

    # -- nodes --------------------------------------------------------------
    def put(
        self,
        page: str,
        event_id: EventId,
        previous: NodeId | None,
        version: DeweyNumber,
        lock_previous: bool = True,
        stage: bool = False,
    ) -> NodeId:
        """Add an edge ``(previous, version)`` to the node of ``event_id`` in ``page``.

        The edge locks ``previous`` with ``version``; ``lock_previous=False`` hands over a lock
        the caller holds with that same version instead (a run that moves on by this edge and
        would release its own lock right after). ``stage=True`` also locks the node for the run
        that takes the edge, whose version is ``version`` plus a stage (``lock_node(node,
        version + (0,))``); a node created here is then born locked, without a scan.
        """
        if previous is not None and lock_previous:
            self.lock_node(previous, version)
        node_id = (event_id, page)
        entries = self.entries
        node = entries.get(node_id)
        if node is None:
            # version + (0,) is compatible with the new (only) edge's version: both count one
            locks = 1 if stage else 0
            if _INDEX_FROM > 1:
                entries[node_id] = [locks, previous, version, locks]
            else:
                entries[node_id] = [locks, _EdgeIndex([[previous, version, locks]])]
            self.lock_event(event_id)
            return node_id
        if len(node) == _SINGLE:  # a second edge: the edges move to a list
            node[1:] = [[[node[1], node[2], node[3]]]]
        edges = node[1]
        if type(edges) is list:
            edges.append([previous, version, 0])
            if len(edges) >= _INDEX_FROM:
                node[1] = _EdgeIndex(edges)
        else:
            edges.add([previous, version, 0])
        if stage:
            self.lock_node(node_id, version + (0,))
        return node_id

    def lock_node(self, node_id: NodeId | None, version: DeweyNumber) -> None:
        if node_id is None:
            return
        node = self.entries.get(node_id)
        if node is None:
            return
        node[0] += 1
        if len(node) == _SINGLE:
            if is_compatible(version, node[2]):
                node[3] += 1
            return
        edges = node[1]
        if type(edges) is not list:
            for edge in edges.compatible(version):
                edge[_COUNT] += 1
            return
        m = len(version)
        for edge in edges:
            # is_compatible(version, edge version), inlined: this runs for every edge of every lock
            ev = edge[_VERSION]
            n = len(ev)
            if version[:n] == ev if m > n else m == n and version[:-1] == ev[:-1] and version[-1] >= ev[-1]:
                edge[_COUNT] += 1

    def release_node(self, node_id: NodeId | None, version: DeweyNumber) -> None:
        """Release a run's hold on ``node_id``, cascading to unreferenced predecessors."""
        if node_id is None:
            return
        entries = self.entries
        stack: list[tuple[NodeId, DeweyNumber]] = [(node_id, version)]
        while stack:
            current, current_version = stack.pop()
            node = entries.get(current)
            if node is None:
                continue
            if len(node) == _SINGLE:
                ev = node[2]
                if is_compatible(current_version, ev):
                    if node[3] > 1:
                        node[3] -= 1
                    else:  # the edge goes: the node keeps an empty edge list
                        target = node[1]
                        node[1:] = [[]]
                        if target is not None:
                            stack.append((target, ev))
            elif type(edges := node[1]) is list:
                kept = []
                m = len(current_version)
                for edge in edges:  # the inlined is_compatible of lock_node, on purpose
                    ev = edge[_VERSION]
                    n = len(ev)
                    if (
                        current_version[:n] == ev
                        if m > n
                        else m == n and current_version[:-1] == ev[:-1] and current_version[-1] >= ev[-1]
                    ):
                        edge[_COUNT] -= 1
                        if edge[_COUNT] <= 0:
                            if edge[_TARGET] is not None:
                                stack.append((edge[_TARGET], ev))
                            continue
                    kept.append(edge)
                node[1] = kept
            else:
                for edge in edges.compatible(current_version):
                    edge[_COUNT] -= 1
                    if edge[_COUNT] <= 0:
                        edges.remove(edge)
                        if edge[_TARGET] is not None:
                            stack.append((edge[_TARGET], edge[_VERSION]))
            node[0] -= 1
            if node[0] <= 0:
                del entries[current]
                self.release_event(current[0])

    # -- extraction ---------------------------------------------------------
    def extract_patterns(self, node_id: NodeId, version: DeweyNumber) -> list[dict[str, list[EventId]]]:
        """All paths back from ``node_id`` along edges compatible with the version.

        Depth first, as Flink's ``extractPatterns``; each path becomes a dict
        page -> event ids in event order (pages in order of first event).
        """
        result: list[dict[str, list[EventId]]] = []
        entries = self.entries
        if node_id not in entries:
            return result
        # (node id or None, version, path so far: list of node ids, newest last)
        stack: list[tuple[NodeId | None, DeweyNumber, list[NodeId]]] = [(node_id, version, [])]
        while stack:
            current, current_version, path = stack.pop()
            if current is None:
                match: dict[str, list[EventId]] = {}
                for event_id, page in reversed(path):
                    events = match.get(page)
                    if events is None:
                        match[page] = [event_id]
                    else:
                        events.append(event_id)
                result.append(match)
                continue
            path.append(current)
            first = True
            node = entries[current]
            if len(node) == _SINGLE:
                ev = node[2]
                edges = [(node[1], ev)] if ev == current_version or is_compatible(current_version, ev) else []
            elif type(edges := node[1]) is list:
                edges = [
                    edge
                    for edge in edges
                    if edge[_VERSION] == current_version or is_compatible(current_version, edge[_VERSION])
                ]
            else:
                edges = edges.compatible(current_version)
                if len(edges) > 1:
                    edges.sort(key=_by_seq)
            for edge in edges:
                if first:
                    new_path = path
                    first = False
                else:
                    new_path = path.copy()
                stack.append((edge[_TARGET], edge[_VERSION], new_path))
        return result

    def materialize_match(self, match: dict[str, list[EventId]]) -> dict[str, list[Any]]:
        events = self.events
        return {page: [events[e] for e in ids] for page, ids in match.items()}

    # -- time and size ------------------------------------------------------
    def advance_time(self, timestamp: int) -> None:
        """Forget arrival counters of timestamps before ``timestamp``."""
        counts = self.events_count
        if counts and (len(counts) > 1 or next(iter(counts)) < timestamp):
            for ts in [t for t in counts if t < timestamp]:
                del counts[ts]

    def is_empty(self) -> bool:
        return not self.entries and not self.events

    def entry_count(self) -> int:
        return len(self.entries)

    def event_count(self) -> int:
        return len(self.events)

    def __len__(self) -> int:
        return len(self.entries)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.events, self.event_refs, self.entries, self.events_count)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.events, self.event_refs, self.entries, self.events_count = state


STALE_COUNTERS = 32  # counters a PathlessBuffer keeps before it forgets those of past times


class PathlessBuffer(SharedBuffer):
    """A shared buffer that gives events their ids and records nothing else.

    Runs carry their partial matches themselves (the NFA hands them on from run to run), so a
    buffer is only read to extract the paths of completed matches, which some after-match skip
    strategies prune by. Where none does (``NFA.needs_paths()`` is false: no skip strategy, or
    ``skip_past_last_event``), the runtime gives keys this buffer, whose writes cost nothing, and
    keeps a run's partial match in its snapshot instead. Node ids are those of the full buffer.
    """

    __slots__ = ()

    keeps_paths = False

    def register_event(self, event: Any, timestamp: int) -> EventId:
        return self.next_event_id(timestamp)

    def lock_event(self, event_id: EventId) -> None:
        pass

    def release_event(self, event_id: EventId) -> None:
        pass

    def put(
        self,
        page: str,
        event_id: EventId,
        previous: NodeId | None,
        version: DeweyNumber,
        lock_previous: bool = True,
        stage: bool = False,
    ) -> NodeId:
        return (event_id, page)

    def lock_node(self, node_id: NodeId | None, version: DeweyNumber) -> None:
        pass

    def release_node(self, node_id: NodeId | None, version: DeweyNumber) -> None:
        pass

    def advance_time(self, timestamp: int) -> None:
        """Forget arrival counters of timestamps before ``timestamp``, in bulk: once there are
        more than ``STALE_COUNTERS``, so that a firing seldom scans them (docs/runtime.md §8).
        Ids only have to keep each key's events in order; a counter kept longer merely numbers
        on from where it was."""
        if len(self.events_count) > STALE_COUNTERS:
            super().advance_time(timestamp)

    def extract_patterns(self, node_id: NodeId, version: DeweyNumber) -> list[dict[str, list[EventId]]]:
        raise ValueError(
            "this shared buffer keeps no paths (a key of a pattern whose skip strategy does not "
            "prune by them): its runs carry their partial matches"
        )
