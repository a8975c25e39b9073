"""Event hierarchies (seed 004) against hand-chained CepOperators and the flat NFA, 1 to 5 layers.

    python benchmarks/hierarchy.py                       # S=5000, L=3, T=100, H=1..5
    python benchmarks/hierarchy.py --size 25000 --length 4 --window 250 --layers 1 2 3

Seed 004's generator knobs: stream size S (``--size``), constraint probability P (``--p``,
70 %), layers H (``--layers``), sequence length L (``--length``), window T (``--window``). Raw
events carry a kind ``k0``..``k{L-1}`` and a uniform value ``v``, ``C`` of them per millisecond
(``--per-ms``). Layer 1 is ``k0 -> k1 -> ... -> k{L-1}`` (``followed_by``, each step also
``v < P``); layer h > 1 is the same with a box, a complex event of layer h - 1, at each odd
position (L = 3: ``k0 -> H{h-1} -> k2``); every layer has ``within(T)`` (the flat pattern
one, on the whole). Three ways to run the same query:

* hierarchy: ``HierarchyOperator``, every layer one shared ``CepOperator``, in one pass;
* one-pass: ``OnePassHierarchy``, every raw event of a key through one structure, runs waiting
  at a box woken by the complex events of its type (its matches must equal hierarchy's);
* chained: one ``CepOperator`` per layer, each generating its own watermarks, the user's code
  turning matches into complex events and pushing them into the next operator (what a Flink
  user writes today); it runs the same bound patterns, so its counts equal the hierarchy's;
* flat: one ``CepOperator`` over the flat pattern, each box a group pattern copy of the layer
  below. Its match count may differ: ``followed_by`` skips raw events there, complex events in
  the hierarchy (docs/semantics.md, 11.8);
* flink: the real Flink CEP 2.3 over the same flat pattern (``benchmarks/flink_bench.py``, one
  local job after a warm-up run over the whole stream; ``--no-flink`` leaves it out). Its
  matches must equal flat's. Flink has no hierarchy: chaining its operators by hand is the
  ``chained`` row's shape, which the oracle's benchmark mode does not run.

Each cell is events per CPU second of this process (best of ``--repeat``; CPU time, not wall
time, so that other work on a shared machine counts less) and the peak of tracemalloc's traced
memory in a separate run, above what the operators held once built (partial matches, buffers,
complex events and outputs in flight; not the compiled patterns, nor the generated steps, made
before it counts); for Flink, events per CPU second of the thread that runs its CEP
operator (no memory column: the JVM's heap is not comparable). Timings are whatever the machine
that runs this gives.
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

try:
    import tracemalloc
except ImportError:  # PyPy has none: no memory column there
    tracemalloc = None  # type: ignore[assignment]

from flowcep import Pattern  # noqa: E402
from flowcep.hierarchy import ComplexEvent, Hierarchy, HierarchyOperator, HierarchyPlan, of_type  # noqa: E402
from flowcep.hierarchy.engine import interval_of  # noqa: E402
from flowcep.hierarchy.onepass import OnePassHierarchy  # noqa: E402
from flowcep.runtime import CepOperator  # noqa: E402


class Raw:
    __slots__ = ("kind", "v", "ts", "key")

    def __init__(self, kind: int, v: float, ts: int, key: int) -> None:
        self.kind = kind
        self.v = v
        self.ts = ts
        self.key = key


def events(size: int, length: int, per_ms: int, keys: int, seed: int = 4) -> list[Raw]:
    rnd = random.Random(seed)
    return [Raw(rnd.randrange(length), rnd.random(), i // per_ms, rnd.randrange(keys)) for i in range(size)]


def raw_step(kind: int, p: float) -> Callable[[Any], bool]:
    return lambda e: e.kind == kind and e.v < p


def is_box(layer: int, j: int) -> bool:
    """Layer 1 is all nodes (raw steps); above it, odd positions are boxes (seed 004's modules
    mix nodes and boxes: Table 1's M1 is a11, box a12, a13, box a14, a15)."""
    return layer > 1 and j % 2 == 1


def layer_pattern(layer: int, length: int, p: float, window: int | None, contiguity: str) -> Pattern:
    def condition(j: int) -> Any:
        return of_type(f"H{layer - 1}") if is_box(layer, j) else raw_step(j, p)

    pattern = Pattern.begin("s0").where(condition(0))
    for j in range(1, length):
        pattern = getattr(pattern, contiguity)(f"s{j}").where(condition(j))
    return pattern.within(window)


def hierarchy(layers: int, length: int, p: float, window: int, contiguity: str) -> Hierarchy:
    h = Hierarchy()
    for layer in range(1, layers + 1):
        # every layer within T: below the top it changes no top match (none spans T or more:
        # docs/semantics.md 11.8) and bounds the layer's state
        h.define(f"H{layer}", layer_pattern(layer, length, p, window, contiguity))
    return h


def flat_pattern(layers: int, length: int, p: float, window: int, contiguity: str) -> Pattern:
    def build(layer: int, prefix: str) -> Pattern:
        pattern: Pattern | None = None
        for j in range(length):
            name = f"{prefix}s{j}"
            if is_box(layer, j):
                assert pattern is not None  # a box is never first: a group would not start a group
                pattern = getattr(pattern, contiguity)(build(layer - 1, f"{name}."))
            else:
                step = Pattern.begin(name) if pattern is None else getattr(pattern, contiguity)(name)
                pattern = step.where(raw_step(j, p))
        assert pattern is not None
        return pattern

    return build(layers, "").within(window)


# ---------------------------------------------------------------- the three runners


BATCH = 100  # events per call; outputs are counted and dropped, as a sink would (few held at once)


def _nothing() -> None:
    pass


def _compiled(operator: Any) -> None:
    """Make the operator's generated NFA steps now, before memory counts: a ``CepOperator``
    compiles its step on its first call, and the compiler's passing peak is not state."""
    if isinstance(operator, CepOperator):
        operator.process_elements([])
    elif isinstance(operator, HierarchyOperator):
        for running in operator._levels:  # (each level's CepOperator)
            running.operator.process_elements([])


def run_hierarchy(
    plan: HierarchyPlan,
    stream: list[Raw],
    built: Callable[[], None] = _nothing,
    engine: Any = HierarchyOperator,
) -> int:
    operator = engine(plan, key_by=_key, timestamp=_ts)
    _compiled(operator)
    built()
    found = 0
    for start in range(0, len(stream), BATCH):
        found += _count(operator.process_elements(stream[start : start + BATCH]))
    return found + _count(operator.flush())


def run_chained(plan: HierarchyPlan, stream: list[Raw], built: Callable[[], None] = _nothing) -> int:
    """What a user chains by hand: each layer's operator makes its own watermarks from what it
    gets; a raw event goes up layer by layer, each layer's new complex events pushed into the
    next one before the raw event itself (else they would be late there)."""
    interval = interval_of(_ts)
    levels = plan.levels
    operators = [
        CepOperator(
            level.bound_pattern(interval),
            key_by=_key,
            timestamp=lambda e: e.end if type(e) is ComplexEvent else e.ts,
        )
        for level in levels
    ]
    for operator in operators:
        _compiled(operator)
    built()
    top = len(operators) - 1
    found = 0

    def complex_events(i: int, outputs: list[Any]) -> list[ComplexEvent]:
        nonlocal found
        made = []
        for o in outputs:
            if o.kind == "match":
                if i == top:
                    found += 1
                else:
                    spans = [interval(e) for v in o.value.values() for e in v]
                    made.append(
                        ComplexEvent(
                            levels[i].name,
                            o.key,
                            min(s for s, _ in spans),
                            max(e for _, e in spans),
                            {},
                            o.value,
                        )
                    )
        return made

    for event in stream:
        below: list[ComplexEvent] = []
        for i, operator in enumerate(operators):
            outputs = operator.process_elements(below) if below else []
            below = complex_events(i, outputs + operator.process_element(event))
    below = []
    for i, operator in enumerate(operators):
        outputs = operator.process_elements(below) if below else []
        below = complex_events(i, outputs + operator.flush())
    return found


def run_flat(pattern: Pattern, stream: list[Raw], built: Callable[[], None] = _nothing) -> int:
    operator = CepOperator(pattern, key_by=_key, timestamp=_ts)
    _compiled(operator)
    built()
    found = 0
    for start in range(0, len(stream), BATCH):
        found += _count(operator.process_elements(stream[start : start + BATCH]))
    return found + _count(operator.flush())


def flat_calls(layers: int, length: int, p: float, window: int, contiguity: str) -> list[Any]:
    """``flat_pattern`` as the Flink oracle's call list (docs/oracle-format.md): a raw event's
    kind is its name, its value its price."""

    def build(layer: int, prefix: str) -> list[Any]:
        calls: list[Any] = []
        for j in range(length):
            name = f"{prefix}s{j}"
            if is_box(layer, j):
                calls.append([contiguity, build(layer - 1, f"{name}.")])
            else:
                calls.append(["begin" if not calls else contiguity, name])
                calls += [["where", "name_eq", f"k{j}"], ["where", "price_lt", p]]
        return calls

    return build(layers, "") + [["within", window]]


def run_flink(calls: list[Any], stream: list[Raw]) -> dict[str, Any] | None:
    """Flink's counts and times over ``stream`` (None: no JDK or no Flink jars)."""
    try:
        from flink_bench import run_flink as flink  # beside this file, with the oracle's path
    except ImportError as exc:
        print(f"Flink side unavailable: {exc}", file=sys.stderr)
        return None
    events = [
        {"key": str(e.key), "name": f"k{e.kind}", "price": e.v, "volume": 0, "ts": e.ts} for e in stream
    ]
    spec = {"calls": calls, "skip": None, "warmup_events": len(events)}
    return flink(spec, events)


def _count(outputs: list[Any]) -> int:
    return sum(1 for o in outputs if o.kind == "match")


def _ts(e: Raw) -> int:
    return e.ts


def _key(e: Any) -> Any:
    return e.key


def measure(run: Callable[..., int], repeat: int) -> tuple[int, float, int | None]:
    """(matches, best seconds, peak traced bytes while processing or None without tracemalloc).

    The memory is the peak above what the built operators hold (their compiled patterns are
    not state), in a run after the timed ones (so that generated code is made already)."""
    best = float("inf")
    found = 0
    for _ in range(repeat):
        gc.collect()
        started = time.process_time()
        found = run()
        best = min(best, time.process_time() - started)
    if tracemalloc is None:
        return found, best, None
    gc.collect()
    base = [0]

    def built() -> None:
        tracemalloc.reset_peak()
        base[0] = tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    run(built=built)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return found, best, peak - base[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=5000, help="S, raw events (default 5000)")
    parser.add_argument("--p", type=float, default=0.7, help="P, constraint probability (default 0.7)")
    parser.add_argument("--layers", type=int, nargs="+", default=[1, 2, 3, 4, 5], help="H values")
    parser.add_argument("--length", type=int, default=3, help="L, sequence length per layer (default 3)")
    parser.add_argument(
        "--window", type=int, default=100, help="T, the top layer's window in ms (default 100)"
    )
    parser.add_argument("--per-ms", type=int, default=4, help="C, raw events per millisecond (default 4)")
    parser.add_argument("--keys", type=int, default=1, help="keys (partitions) of the stream (default 1)")
    parser.add_argument(
        "--contiguity",
        choices=["followed_by", "followed_by_any"],
        default="followed_by",
        help="between the steps of every layer (default followed_by)",
    )
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per cell, best kept (default 2)")
    parser.add_argument("--no-flink", action="store_true", help="leave out the Flink row")
    args = parser.parse_args(argv)
    stream = events(args.size, args.length, args.per_ms, args.keys)
    print(
        f"{sys.implementation.name} {sys.version.split()[0]}: S={args.size} P={args.p} L={args.length} "
        f"T={args.window} C={args.per_ms}/ms keys={args.keys} {args.contiguity}"
    )
    header = f"{'H':>2} {'engine':<10} {'matches':>8} {'ev/CPU s':>10} {'peak KiB':>9} {'vs flat: speed':>15} {'memory':>7}"
    print(header)
    print("-" * len(header))
    for layers in args.layers:
        plan = hierarchy(layers, args.length, args.p, args.window, args.contiguity).build()
        flat = flat_pattern(layers, args.length, args.p, args.window, args.contiguity)
        rows = {
            "flat": measure(functools.partial(run_flat, flat, stream), args.repeat),
            "chained": measure(functools.partial(run_chained, plan, stream), args.repeat),
            "hierarchy": measure(functools.partial(run_hierarchy, plan, stream), args.repeat),
            "one-pass": measure(
                functools.partial(run_hierarchy, plan, stream, engine=OnePassHierarchy), args.repeat
            ),
        }
        if rows["one-pass"][0] != rows["hierarchy"][0]:
            raise SystemExit(
                f"H={layers}: the one-pass engine found {rows['one-pass'][0]} matches, the hierarchy {rows['hierarchy'][0]}"
            )
        if not args.no_flink:
            result = run_flink(flat_calls(layers, args.length, args.p, args.window, args.contiguity), stream)
            if result is not None:
                rows["flink"] = (result["matches"], result["cep_thread_cpu_seconds"], None)
        _, flat_seconds, flat_peak = rows["flat"]
        for engine, (found, seconds, peak) in rows.items():
            memory = "n/a" if peak is None or flat_peak is None else f"{flat_peak / max(peak, 1):.2f}x"
            seconds = max(seconds, 1e-9)
            kib = "n/a" if peak is None else f"{peak / 1024:,.0f}"
            print(
                f"{layers:>2} {engine:<10} {found:>8} {args.size / seconds:>10,.0f} {kib:>9} "
                f"{flat_seconds / seconds:>14.2f}x {memory:>7}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
