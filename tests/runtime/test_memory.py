"""Bounded windows keep the operator's state bounded, over long streams and many distinct keys.

Measured by live counts (keys, partial matches, shared-buffer entries, buffered events), never by time.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from flowcep.runtime import CEP

from .support import Ev, abc_within, operator

N = 200_000


def generated(n: int, seed: int = 3) -> Iterator[Ev]:
    """1 event/ms; half from 10 long-lived keys, half from short-lived keys (20 events each)."""
    rnd = random.Random(seed)
    for i in range(n):
        key = f"long{i % 10}" if i % 2 else f"short{i // 40}"
        yield Ev(rnd.choice("abcx"), i - rnd.randint(0, 4), key)  # up to 4 ms of disorder


def test_live_state_stays_bounded_over_a_long_stream_with_many_keys() -> None:
    op = operator(abc_within(100), out_of_orderness=5)
    peaks = dict.fromkeys(("keys", "partial_matches", "shared_buffer_entries", "buffered_events"), 0)
    matches = 0
    for i, event in enumerate(generated(N)):
        matches += sum(1 for o in op.process_element(event) if o.kind == "match")
        if i % 1_000 == 0:
            stats = op.stats()
            for name in peaks:
                peaks[name] = max(peaks[name], stats[name])
    op.flush()
    final = op.stats()

    assert final["events_in"] == N and final["late"] == 0
    assert matches > 1_000  # the stream does match
    # live state is bounded by window + disorder, not by the 5,010 distinct keys or 200k events
    assert peaks["keys"] <= 30
    assert peaks["partial_matches"] <= 200
    assert peaks["shared_buffer_entries"] <= 200
    assert peaks["buffered_events"] <= 50
    # and everything is gone at the end
    assert (
        final["keys"],
        final["partial_matches"],
        final["shared_buffer_entries"],
        final["buffered_events"],
    ) == (
        0,
        0,
        0,
        0,
    )


def test_the_pattern_stream_consumes_a_long_generator_in_bounded_state() -> None:
    result = CEP.pattern(
        generated(N // 4),
        abc_within(100),
        key_by=lambda e: e.key,
        timestamp=lambda e: e.ts,
        out_of_orderness=5,
    ).select(lambda m: None)
    peak_keys = 0
    for i, _ in enumerate(result):
        if i % 500 == 0:
            peak_keys = max(peak_keys, result.stats()["keys"])
    assert 0 < peak_keys <= 30
    assert result.stats()["keys"] == 0
