"""Exactly-once under real crashes: the driver is killed with SIGKILL and restarted, several times.

A file-source to file-sink query (``crash_driver.py``, its own process) runs ``detect`` over a
few hundred keys with a window (matches and timeouts), late rows and invalid rows. The test
kills the driver's whole process tree at random moments while the query runs, restarts it on the
same checkpoint, and so on until a run consumes the input and exits by itself. Then what the
sink committed must equal, as a multiset, what the embedded runtime gives when it is driven as
docs/spark.md defines: each micro-batch that the checkpoint records, in order, first brings the
operator to that batch's watermark, then feeds the batch's rows (rows at or before the
watermark are late; rows without a key or time are invalid). Nothing lost, nothing twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from flowcep.runtime import CepOperator

from . import crash_driver
from .checkpoints import committed, micro_batches

DRIVER = Path(crash_driver.__file__)
FILES = 40
KEYS = 300
PLANNED_KILLS = 5


def _write_input(root: Path, seed: int = 26) -> None:
    """FILES files of JSON lines, 100 ms of event time each; distinct times per row."""
    rng = random.Random(seed)
    root.mkdir()
    ident = 0
    for i in range(FILES):
        rows: list[dict[str, Any]] = []
        for j in range(48):
            ident += 1
            user = f"u{(i * 7 + rng.randrange(25)) % KEYS:03d}"
            kind = rng.choice("aabbccx")
            rows.append({"id": ident, "user": user, "type": kind, "amount": 1.0, "ms": i * 100 + 2 * j})
        if i >= 4:  # two rows far behind the watermark: late
            for k in range(2):
                ident += 1
                rows.append(
                    {"id": ident, "user": f"u{rng.randrange(KEYS):03d}", "type": "a", "amount": 1.0,
                     "ms": (i - 3) * 100 + 2 * k + 1}
                )  # fmt: skip
        if i % 5 == 2:  # rows without a key, or without a time: invalid
            ident += 1
            rows.append({"id": ident, "user": None, "type": "a", "amount": 1.0, "ms": i * 100 + 97})
            ident += 1
            rows.append({"id": ident, "user": "u001", "type": "a", "amount": 1.0, "ms": None})
        rng.shuffle(rows)  # any order inside a micro-batch
        path = root / f"part-{i:04d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))  # the file source takes files by age


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the driver, its JVM and the JVM's Python workers: no clean-up runs anywhere."""
    victims = [proc.pid, *_descendants(proc.pid)]
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in victims):
        time.sleep(0.1)


def _wait_started(log: Path, proc: subprocess.Popen[bytes], timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if "started" in log.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    raise AssertionError(f"the driver did not start its query in {timeout} s:\n{log.read_text()}")


def _committed_count(tmp_path: Path) -> int:
    commits = tmp_path / "ck" / "commits"
    return sum(1 for p in commits.iterdir() if p.name.isdigit()) if commits.exists() else 0


def _run_with_kills(tmp_path: Path, rng: random.Random) -> tuple[list[int], int]:
    """Run the driver until it finishes by itself; (committed micro-batches at each kill, runs).

    Each kill comes once the checkpoint holds a randomly drawn number of committed micro-batches
    (0: during the first one), after a further random pause: so every planned kill lands while
    the query works, at a different point of the input, however fast the machine is.
    """
    args = [sys.executable, str(DRIVER), str(tmp_path / "in"), str(tmp_path / "sink"), str(tmp_path / "ck")]
    targets = sorted(rng.sample(range(FILES - 12), PLANNED_KILLS))
    kills: list[int] = []
    runs = 0
    while True:
        runs += 1
        log = tmp_path / f"driver-{runs}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            if len(kills) < PLANNED_KILLS and _wait_started(log, proc):
                target = targets[len(kills)]
                while proc.poll() is None and _committed_count(tmp_path) < target:
                    time.sleep(0.05)
                time.sleep(rng.uniform(0.0, 1.0))  # somewhere in the next micro-batch(es)
                if proc.poll() is None:
                    _kill_tree(proc)
                    kills.append(_committed_count(tmp_path))
                    continue
            status = proc.wait(timeout=600)
        except BaseException:
            _kill_tree(proc)
            raise
        assert status == 0, f"the driver failed (run {runs}):\n{log.read_text()[-5000:]}"
        return kills, runs


class _Row(dict):  # type: ignore[type-arg]
    """A JSON row that conditions read as Spark rows: ``e.type`` as well as ``e["type"]``."""

    __getattr__ = dict.__getitem__


def _buckets(spark: Any, users: set[str]) -> dict[str, int]:
    """Each key's bucket, as the connector computes it (Spark's hash of the key column)."""
    df = spark.createDataFrame([(u,) for u in sorted(users)], "user string")
    rows = df.select("user", F.pmod(F.hash("user"), F.lit(crash_driver.BUCKETS)).alias("b")).collect()
    return {r.user: r.b for r in rows}


def _reference(spark: Any, tmp_path: Path) -> Counter[tuple[Any, ...]]:
    """The embedded runtime driven by the checkpoint's micro-batches, as docs/spark.md says.

    One operator per bucket. For each micro-batch in order: every bucket's operator goes to the
    batch's watermark; then each bucket's rows are fed in (rows without key or time are
    invalid), and the operator goes to the bucket's own watermark (its rows' latest time minus
    the delay).
    """
    batches = [
        (
            b.watermark,
            [_Row(json.loads(line)) for path in b.files for line in Path(path).read_text().splitlines()],
        )
        for b in micro_batches(tmp_path / "ck")
    ]
    bucket_of = _buckets(spark, {r["user"] for _, rows in batches for r in rows if r["user"] is not None})
    ops: dict[int, CepOperator] = {}
    result: Counter[tuple[Any, ...]] = Counter()

    def add(outputs: list[Any]) -> None:
        for o in outputs:
            if o.kind == "late":
                steps: Any = (("late", (o.value["id"],)),)
            else:
                steps = tuple((s, tuple(e["id"] for e in es)) for s, es in o.value.items())
            result[(o.kind, o.key, o.timestamp, steps)] += 1

    for watermark, rows in batches:
        for op in ops.values():
            if watermark > 0 and watermark > op.current_watermark:
                add(op.process_watermark(watermark))
        latest: dict[int, int] = {}
        for row in rows:
            if row["user"] is None or row["ms"] is None:
                result[("invalid", row["user"], row["ms"], (("invalid", (row["id"],)),))] += 1
                continue
            b = bucket_of[row["user"]]
            op = ops.get(b)
            if op is None:
                op = ops[b] = CepOperator(
                    crash_driver.pattern(), key_by=lambda r: r["user"], out_of_orderness=None
                )
                if watermark > 0:
                    add(op.process_watermark(watermark))
            add(op.process_element(row, row["ms"]))
            latest[b] = max(latest.get(b, row["ms"]), row["ms"])
        for b, ms in latest.items():
            own = ms - crash_driver.OUT_OF_ORDERNESS
            if own > ops[b].current_watermark:
                add(ops[b].process_watermark(own))
    return result


def _sink(spark: Any, tmp_path: Path) -> Counter[tuple[Any, ...]]:
    schema = (
        "key string, kind string, timestamp timestamp, first_ts timestamp, last_ts timestamp, events string"
    )
    rows = (
        spark.read.schema(schema)
        .json(str(tmp_path / "sink"))  # through the sink's _spark_metadata: committed files only
        .select("key", "kind", F.unix_millis("timestamp").alias("ms"), "events")
        .collect()
    )
    result: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        events = json.loads(r.events)
        events.pop("reason", None)
        steps = tuple((s, tuple(e["id"] for e in es)) for s, es in events.items())
        result[(r.kind, r.key, r.ms, steps)] += 1
    return result


def test_killed_driver_restarted_from_its_checkpoint_commits_every_result_once(spark, tmp_path):
    _write_input(tmp_path / "in")
    kills, runs = _run_with_kills(tmp_path, random.Random(time.time_ns()))
    batches = micro_batches(tmp_path / "ck")
    assert committed(tmp_path / "ck") == {b.batch_id for b in batches}, "a planned batch never committed"
    assert sum(len(b.files) for b in batches) == FILES  # every file read, once

    got = _sink(spark, tmp_path)
    want = _reference(spark, tmp_path)
    kinds = Counter(kind for kind, *_ in want.elements())
    print(
        f"\ncrash test: {len(kills)} kills (committed micro-batches at each: {kills}), {runs} runs, "
        f"{len(batches)} micro-batches, results {dict(kinds)}"
    )
    assert len(kills) == PLANNED_KILLS, f"only {len(kills)} kills landed before the input was consumed"
    assert got == want, (
        f"missing: {sorted((want - got).elements())[:10]}\nextra: {sorted((got - want).elements())[:10]}"
    )
    assert {"match", "timeout", "late", "invalid"} <= set(kinds)
