"""Throughput of the PyFlink connector against a no-op KeyedProcessFunction on the same stream.

Not a test (never asserts times). Run in .venv-flink:

    cd tests/connectors/flink && PYTHONPATH=../../../src:. ../../../.venv-flink/bin/python \
        bench_flink_connector.py [events] [keys,...] [kinds,...] [defaults,tuned]

Each configuration runs the same bounded job (1 event/ms, event time, parallelism 1) ending in
a no-op keyed process function (``noop``), in one that reads and writes one ``ValueState`` per
record (``valuestate``, the yardstick of issue 34), and in ``CEP.pattern(...).select(...)``
(followedBy a -> b -> c within 10 ms of each key's time; ``cep`` with the default timer per
buffered timestamp, ``cep-batch`` with ``batch_timers=True``). It reports events/s of the whole
job and net of the job's own cost (the fastest of three 1,000-event no-op jobs).
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from flink_support import EVENT_TYPE, make_env  # noqa: I001 - needs PyFlink
from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream.functions import KeyedProcessFunction
from pyflink.datastream.state import ValueStateDescriptor

from flowcep import Pattern
from flowcep.connectors.flink import CEP


class Ts(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[2])


class NoOp(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        return ()


class OneValueState(KeyedProcessFunction):
    """Reads and writes one ValueState per record: the yardstick of issue 34."""

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(ValueStateDescriptor("count", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.state.update((self.state.value() or 0) + 1)
        return ()


def is_a(e: Any) -> bool:
    return bool(e[1] == "a")


def is_b(e: Any) -> bool:
    return bool(e[1] == "b")


def is_c(e: Any) -> bool:
    return bool(e[1] == "c")


def pattern(keys: int) -> Pattern:
    """a -> b -> c within 10 ms of each key's time (keys take turns: 10 ms per key's event)."""
    return (
        Pattern.begin("a")
        .where(is_a)
        .followed_by("b")
        .where(is_b)
        .followed_by("c")
        .where(is_c)
        .within(10 * keys)
    )


def events(n: int, keys: int) -> list[tuple[Any, ...]]:
    rng = random.Random(1)
    return [(f"k{i % keys}", rng.choice("abcx"), 1_000 + i, 0, 0.0) for i in range(n)]


def run(kind: str, data: list[tuple[Any, ...]], config: dict[str, str], keys: int) -> tuple[float, int]:
    env = make_env(config)
    ds = env.from_collection(data, type_info=EVENT_TYPE).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)).with_timestamp_assigner(Ts())
    )
    keyed = ds.key_by(lambda e: e[0], key_type=Types.STRING())
    if kind == "noop":
        out = keyed.process(NoOp(), output_type=Types.LONG())
    elif kind == "valuestate":
        out = keyed.process(OneValueState(), output_type=Types.LONG())
    else:
        stream = CEP.pattern(keyed, pattern(keys), batch_timers=kind == "cep-batch")
        out = stream.select(lambda m: m["a"][0][2], output_type=Types.LONG())
    start = time.perf_counter()
    with out.execute_and_collect() as results:
        count = sum(1 for _ in results)
    return time.perf_counter() - start, count


KINDS = ("noop", "valuestate", "cep", "cep-batch")
CONFIGS = {
    "defaults": {},
    "tuned": {"python.state.cache-size": "20000", "python.fn-execution.bundle.size": "100000"},
}


def main() -> None:
    """``[events] [keys[:events],...] [kind,...] [config,...]``"""
    n_default = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    sizes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["10:100000", "1000:20000"]
    kinds = sys.argv[3].split(",") if len(sys.argv) > 3 else list(KINDS)
    configs = sys.argv[4].split(",") if len(sys.argv) > 4 else list(CONFIGS)
    run("noop", events(1_000, 10), {}, 10)  # warm up the JVM
    print("parallelism 1")
    for size in sizes:
        keys_text, _, n_text = size.partition(":")
        keys, n = int(keys_text), int(n_text or n_default)
        data = events(n, keys)
        small = events(1_000, keys)
        for name in configs:
            config = CONFIGS[name]
            # the job's own cost: the fastest of three 1,000-event no-op jobs (the machine is shared)
            base = min(run("noop", small, config, keys)[0] for _ in range(3))
            for kind in kinds:
                took, count = run(kind, data, config, keys)
                net = max(took - base, 1e-9)
                print(
                    f"{keys:5d} keys {n:6d} events {name:9s} {kind:10s} {took:6.1f} s  {n / took:8.0f} ev/s whole job"
                    f"  {(n - 1000) / net:8.0f} ev/s net of a 1k-event no-op job ({base:.1f} s)  outputs={count}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
