"""The versioned shared buffer (Flink's SharedBufferTest; seeds 001 and 003: the stock example
R1, R2, R3 built into one buffer, extracted by version, released until the buffer is empty)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep.sharedbuffer import PathlessBuffer, SharedBuffer
from flowcep.sharedbuffer.dewey import add_stage, dewey, is_compatible
from flowcep.sharedbuffer.sharedbuffer import STALE_COUNTERS, _EdgeIndex

from .helpers import Event

# the stock stream of seed 003 (SASE+ paper): e1..e8
STOCK = [
    Event("e1", price=100, ts=1, id=1, volume=1010),
    Event("e2", price=120, ts=2, id=2, volume=990),
    Event("e3", price=120, ts=3, id=3, volume=1005),
    Event("e4", price=121, ts=4, id=4, volume=999),
    Event("e5", price=120, ts=5, id=5, volume=999),
    Event("e6", price=125, ts=6, id=6, volume=750),
    Event("e7", price=120, ts=7, id=7, volume=950),
    Event("e8", price=120, ts=8, id=8, volume=700),
]


def build_seed_buffer():
    """R1 = a1 e1, a[] e2..e5, b e6;  R2 = a1 e3, a[] e4, b e6;  R3 = a1 e1, a[] e2..e7, b e8."""
    buf = SharedBuffer()
    ids = [buf.register_event(e, e.ts) for e in STOCK]
    e = dict(zip(range(1, 9), ids, strict=True))
    n = {}
    n["a1_e1"] = buf.put("a1", e[1], None, dewey(1))
    n["loop_e2"] = buf.put("a[]", e[2], n["a1_e1"], add_stage(dewey(1)))
    n["a1_e3"] = buf.put("a1", e[3], None, dewey(2))
    n["loop_e3"] = buf.put("a[]", e[3], n["loop_e2"], dewey(1, 0))
    n["loop_e4"] = buf.put("a[]", e[4], n["loop_e3"], dewey(1, 0))
    n["loop2_e4"] = buf.put("a[]", e[4], n["a1_e3"], add_stage(dewey(2)))
    n["loop_e5"] = buf.put("a[]", e[5], n["loop_e4"], dewey(1, 0))
    n["b_e6_r1"] = buf.put("b", e[6], n["loop_e5"], dewey(1, 0, 0))
    n["loop_e6"] = buf.put("a[]", e[6], n["loop_e5"], dewey(1, 1))
    n["b_e6_r2"] = buf.put("b", e[6], n["loop2_e4"], dewey(2, 0, 0))
    n["loop_e7"] = buf.put("a[]", e[7], n["loop_e6"], dewey(1, 1))
    n["b_e8"] = buf.put("b", e[8], n["loop_e7"], dewey(1, 1, 0))
    # the three completed runs each hold their last node
    buf.lock_node(n["b_e8"], dewey(1, 1, 0))
    buf.lock_node(n["b_e6_r1"], dewey(1, 0, 0))
    buf.lock_node(n["b_e6_r2"], dewey(2, 0, 0))
    return buf, e, n


def as_event_ids(match, e):
    back = {v: k for k, v in e.items()}
    return {page: [back[x] for x in xs] for page, xs in match.items()}


def test_register_event_numbers_events_per_timestamp():
    buf = SharedBuffer()
    x, y, z = Event("x"), Event("y"), Event("z")
    i1 = buf.register_event(x, 5)
    i2 = buf.register_event(y, 5)
    i3 = buf.register_event(z, 6)
    assert len({i1, i2, i3}) == 3
    assert i1 < i2 < i3  # ordered by (timestamp, arrival)
    assert buf.get_event(i2) is y


def test_one_node_per_event_and_page_with_several_edges():
    buf, e, n = build_seed_buffer()
    assert n["b_e6_r1"] == n["b_e6_r2"]  # e6 in page b is one node for R1 and R2
    assert n["loop_e4"] == n["loop2_e4"]
    assert n["a1_e3"] != n["loop_e3"]  # same event, different pages


def test_extract_r3_by_its_version():
    buf, e, n = build_seed_buffer()
    (r3,) = buf.extract_patterns(n["b_e8"], dewey(1, 1, 0))
    assert as_event_ids(r3, e) == {"a1": [1], "a[]": [2, 3, 4, 5, 6, 7], "b": [8]}
    assert list(r3) == ["a1", "a[]", "b"]


def test_extract_r1_and_r2_from_the_shared_node_of_e6():
    buf, e, n = build_seed_buffer()
    (r1,) = buf.extract_patterns(n["b_e6_r1"], dewey(1, 0, 0))
    (r2,) = buf.extract_patterns(n["b_e6_r2"], dewey(2, 0, 0))
    assert as_event_ids(r1, e) == {"a1": [1], "a[]": [2, 3, 4, 5], "b": [6]}
    # without versions the walk from e6 could wrongly continue e4 -> e3 -> e2 (seed 001)
    assert as_event_ids(r2, e) == {"a1": [3], "a[]": [4], "b": [6]}


def test_materialize_match_gives_the_events():
    buf, e, n = build_seed_buffer()
    (r2,) = buf.extract_patterns(n["b_e6_r2"], dewey(2, 0, 0))
    assert buf.materialize_match(r2) == {"a1": [STOCK[2]], "a[]": [STOCK[3]], "b": [STOCK[5]]}


def test_releasing_r3_keeps_what_r1_and_r2_share_with_it():
    buf, e, n = build_seed_buffer()
    buf.release_node(n["b_e8"], dewey(1, 1, 0))
    assert buf.extract_patterns(n["b_e8"], dewey(1, 1, 0)) == []
    (r1,) = buf.extract_patterns(n["b_e6_r1"], dewey(1, 0, 0))
    assert as_event_ids(r1, e) == {"a1": [1], "a[]": [2, 3, 4, 5], "b": [6]}
    (r2,) = buf.extract_patterns(n["b_e6_r2"], dewey(2, 0, 0))
    assert as_event_ids(r2, e) == {"a1": [3], "a[]": [4], "b": [6]}


def test_seed_example_ends_with_an_empty_buffer():
    # SharedBufferTest.testSharedBuffer: extract R3, release it, extract R1 and R2, release
    # them and the caller's event locks -> nothing is left (checked against Flink 2.3's
    # SharedBufferAccessor with the same calls)
    buf, e, n = build_seed_buffer()
    assert len(buf.extract_patterns(n["b_e8"], dewey(1, 1, 0))) == 1
    buf.release_node(n["b_e8"], dewey(1, 1, 0))
    assert len(buf.extract_patterns(n["b_e6_r2"], dewey(2, 0, 0))) == 1
    assert len(buf.extract_patterns(n["b_e6_r1"], dewey(1, 0, 0))) == 1
    buf.release_node(n["b_e6_r1"], dewey(1, 0, 0))
    # R2 shares the node of e6 with R1: it is still there
    (r2,) = buf.extract_patterns(n["b_e6_r2"], dewey(2, 0, 0))
    assert as_event_ids(r2, e) == {"a1": [3], "a[]": [4], "b": [6]}
    buf.release_node(n["b_e6_r2"], dewey(2, 0, 0))
    assert not buf.is_empty()  # the caller still holds its registration locks
    for event_id in e.values():
        buf.release_event(event_id)
    assert buf.is_empty()


def test_events_outlive_their_registration_while_a_node_holds_them():
    buf = SharedBuffer()
    ev = Event("a", id=1)
    i = buf.register_event(ev, 1)
    node = buf.put("a", i, None, dewey(1))
    buf.lock_node(node, dewey(1))
    buf.release_event(i)  # the caller is done with the event
    assert buf.get_event(i) is ev
    buf.release_node(node, dewey(1))
    assert buf.is_empty()


def test_release_cascades_along_a_chain():
    buf = SharedBuffer()
    ids = [buf.register_event(Event(x), t) for t, x in enumerate("abc")]
    a = buf.put("a", ids[0], None, dewey(1))
    b = buf.put("b", ids[1], a, dewey(1, 0))
    c = buf.put("c", ids[2], b, dewey(1, 0, 0))
    buf.lock_node(c, dewey(1, 0, 0))
    for i in ids:
        buf.release_event(i)
    (m,) = buf.extract_patterns(c, dewey(1, 0, 0))
    assert [p for p in m] == ["a", "b", "c"]
    buf.release_node(c, dewey(1, 0, 0))
    assert buf.is_empty()


def test_a_locked_branch_survives_the_release_of_a_sibling():
    buf = SharedBuffer()
    ids = [buf.register_event(Event(x), t) for t, x in enumerate("abc")]
    a = buf.put("a", ids[0], None, dewey(1))
    b1 = buf.put("b", ids[1], a, dewey(1, 0))
    b2 = buf.put("c", ids[2], a, dewey(1, 1))
    buf.lock_node(b1, dewey(1, 0))
    buf.lock_node(b2, dewey(1, 1))
    for i in ids:
        buf.release_event(i)
    buf.release_node(b1, dewey(1, 0))
    (m,) = buf.extract_patterns(b2, dewey(1, 1))
    assert buf.materialize_match(m) == {"a": [Event("a")], "c": [Event("c")]}
    buf.release_node(b2, dewey(1, 1))
    assert buf.is_empty()


versions = st.lists(st.integers(0, 2), min_size=1, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(st.lists(versions, min_size=1, max_size=40), versions)
def test_a_node_with_many_edges_finds_exactly_the_compatible_ones(edge_versions, version):
    # past some edges a node indexes them by version; the index must find what a scan would
    index = _EdgeIndex([[None, v, 0] for v in edge_versions])
    found = [edge[1] for edge in index.compatible(version)]
    assert sorted(found) == sorted(v for v in edge_versions if is_compatible(version, v))


def test_a_node_with_many_edges_extracts_locks_and_releases_as_with_few():
    # one event, 20 runs with sibling and descendant versions put edges on its node
    buf = SharedBuffer()
    first = buf.register_event("e1", 1)
    second = buf.register_event("e2", 2)
    a = buf.put("a", first, None, dewey(1))
    heads = []
    for i in range(20):
        version = dewey(1, 0, i) if i % 2 else dewey(1, i)
        buf.lock_node(buf.put("b", second, a, version), version)
        heads.append(version)
    buf.release_event(first)
    buf.release_event(second)
    node = buf.entries[(second, "b")]
    assert type(node[1]) is _EdgeIndex
    # 1.0.3 is compatible with its prefix 1.0 and with 1.0.1 and 1.0.3 (same length, last digit
    # not greater); 1.4 with 1.0, 1.2 and 1.4
    assert buf.extract_patterns((second, "b"), dewey(1, 0, 3)) == [{"a": [first], "b": [second]}] * 3
    assert buf.extract_patterns((second, "b"), dewey(1, 4)) == [{"a": [first], "b": [second]}] * 3
    for version in heads:
        buf.release_node((second, "b"), version)
    assert buf.is_empty()


def test_a_node_keeps_one_edge_inline_and_moves_to_a_list_with_the_second():
    # two runs (versions 1 and 2) take the same b event after their own a events
    buf = SharedBuffer()
    a1, a2, b = (buf.register_event(name, ts) for name, ts in (("a1", 1), ("a2", 2), ("b", 3)))
    first = buf.put("a", a1, None, dewey(1), stage=True)
    second = buf.put("a", a2, None, dewey(2), stage=True)
    node = buf.put("b", b, first, dewey(1, 0), lock_previous=False, stage=True)
    assert buf.entries[node] == [1, first, dewey(1, 0), 1]  # one edge: inline, locked for 1.0.0
    assert buf.extract_patterns(node, dewey(1, 0, 0)) == [{"a": [a1], "b": [b]}]
    assert buf.put("b", b, second, dewey(2, 0), lock_previous=False, stage=True) == node
    assert type(buf.entries[node][1]) is list  # two edges: a list
    assert buf.extract_patterns(node, dewey(1, 0, 0)) == [{"a": [a1], "b": [b]}]
    assert buf.extract_patterns(node, dewey(2, 0, 0)) == [{"a": [a2], "b": [b]}]
    for event_id in (a1, a2, b):  # the registrations' own locks
        buf.release_event(event_id)
    buf.release_node(node, dewey(1, 0, 0))
    assert first not in buf.entries and second in buf.entries
    buf.release_node(node, dewey(2, 0, 0))
    assert buf.is_empty()


def test_releasing_the_inline_edge_of_a_node_another_run_still_holds_keeps_the_node():
    buf = SharedBuffer()
    a, b = buf.register_event("a", 1), buf.register_event("b", 2)
    head = buf.put("a", a, None, dewey(1), stage=True)
    node = buf.put("b", b, head, dewey(1, 0), lock_previous=False, stage=True)
    buf.lock_node(node, dewey(2))  # a run whose version no edge of the node is compatible with
    buf.release_event(a)
    buf.release_event(b)
    buf.release_node(node, dewey(1, 0, 0))  # the edge goes, and with it the a node
    assert head not in buf.entries
    assert buf.entries[node] == [1, []] and buf.extract_patterns(node, dewey(2)) == []
    buf.release_node(node, dewey(2))
    assert buf.is_empty()


def test_a_pathless_buffer_numbers_events_and_nodes_as_the_full_buffer_and_stores_nothing():
    # without a skip strategy nothing reads the buffer's paths: the runtime gives such keys a
    # buffer that only numbers their events (the runs carry their partial matches)
    full, lean = SharedBuffer(), PathlessBuffer()
    for buf in (full, lean):
        assert [buf.register_event(name, ts) for name, ts in (("a", 1), ("b", 1), ("c", 2))] == [
            (1, 0),
            (1, 1),
            (2, 0),
        ]
    assert lean.put("a", (1, 0), None, dewey(1), stage=True) == full.put(
        "a", (1, 0), None, dewey(1), stage=True
    )
    lean.lock_node(((1, 0), "a"), dewey(1, 0))
    lean.release_node(((1, 0), "a"), dewey(1, 0))
    assert lean.is_empty() and lean.entry_count() == lean.event_count() == 0
    assert not full.is_empty()
    with pytest.raises(ValueError, match="keeps no paths"):
        lean.extract_patterns(((1, 0), "a"), dewey(1, 0))


def test_a_pathless_buffer_forgets_past_counters_in_bulk_and_numbers_on():
    # a counter of a past timestamp is dropped once more than STALE_COUNTERS are kept; until
    # then an event of that time (another key's, in processing time) numbers on from it
    buf = PathlessBuffer()
    for ts in range(STALE_COUNTERS):
        buf.register_event("e", ts)
        buf.advance_time(ts)
    assert len(buf.events_count) == STALE_COUNTERS
    assert buf.register_event("e", 0) == (0, 1)
    buf.register_event("e", STALE_COUNTERS)
    buf.advance_time(STALE_COUNTERS)
    assert buf.events_count == {STALE_COUNTERS: 1}
    assert buf.register_event("e", 0) == (0, 0)
