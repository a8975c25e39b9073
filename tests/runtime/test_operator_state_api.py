"""What the connectors use of CepOperator's state: plain snapshots, reset, keys, discard_key."""

from __future__ import annotations

from flowcep import Pattern
from flowcep.runtime import CepOperator


def ab(window: int | None = 100) -> Pattern:
    p = Pattern.begin("a").where(lambda e: e["t"] == "a").followed_by("b").where(lambda e: e["t"] == "b")
    return p.within(window) if window is not None else p


def op_with(*events: tuple[str, str, int], window: int | None = 100) -> CepOperator:
    op = CepOperator(ab(window), key_by=lambda e: e["k"], out_of_orderness=None)
    for k, t, ts in events:
        op.process_element({"k": k, "t": t}, ts)
    return op


def test_a_plain_snapshot_restores_what_a_canonical_one_restores():
    op = op_with(("x", "a", 1), ("y", "a", 2), ("x", "b", 50))
    op.process_watermark(10)
    canonical, plain = op.snapshot(), op.snapshot(canonical=False)
    first, second = CepOperator(ab(), key_by=lambda e: e["k"]), CepOperator(ab(), key_by=lambda e: e["k"])
    first.restore(canonical)
    second.restore(plain)
    assert first.snapshot() == second.snapshot() == canonical
    assert [(o.kind, o.key) for o in second.process_watermark(60)] == [("match", "x")]


def test_reset_leaves_an_operator_like_a_new_one():
    op = op_with(("x", "a", 1), ("y", "a", 2))
    op.process_watermark(5)
    op.reset()
    assert not op.has_state() and op.keys() == [] and op.current_watermark == -(2**63)
    assert op.snapshot() == CepOperator(ab(), key_by=lambda e: e["k"], out_of_orderness=None).snapshot()


def test_discard_key_drops_one_key_and_keeps_the_others():
    op = op_with(("x", "a", 1), ("y", "a", 2))
    op.process_watermark(5)
    assert sorted(op.keys()) == ["x", "y"]
    assert op.discard_key("x") is True
    assert op.discard_key("x") is False and op.discard_key("nobody") is False
    assert op.keys() == ["y"]
    assert [(o.kind, o.key) for o in op.process_watermark(200)] == [("timeout", "y")]


def test_discard_key_drops_a_key_that_holds_only_window_timers():
    op = op_with(("x", "a", 1), ("x", "b", 3))
    assert [(o.kind, o.key) for o in op.process_watermark(5)] == [("match", "x")]
    assert op.keys() == ["x"] and op.has_state()  # its window timer at 101 is still registered
    assert op.discard_key("x") is True
    assert op.keys() == [] and not op.has_state() and op.next_deadline() is None
