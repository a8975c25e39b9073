"""A ``RichIterativeCondition`` in Spark: opened once and closed once per task, on the workers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flowcep import Pattern, RichIterativeCondition
from flowcep.connectors.spark import detect

from .data import SCHEMA, events


class LoggedTypeB(RichIterativeCondition):
    """``type == "b"``, the letter set in ``open``; each open and close appended to a file (the
    workers are other processes)."""

    def __init__(self, log: str) -> None:
        self.log = log
        self.letter = None

    def _write(self, line: str) -> None:
        with open(self.log, "a") as f:
            f.write(f"{line} {os.getpid()}\n")

    def open(self, context: Any) -> None:
        self.letter = "b"
        self._write(f"open {context.get_index_of_this_subtask()}")

    def close(self) -> None:
        self._write("close -")

    def filter(self, value: Any, ctx: Any) -> bool:
        return value.type == self.letter


def test_a_rich_condition_is_opened_and_closed_once_per_spark_task(spark: Any, tmp_path: Path) -> None:
    log = tmp_path / "lifecycle.log"
    pattern = Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(LoggedTypeB(str(log)))
    df = spark.createDataFrame(events(300, users=6), SCHEMA)
    out = detect(df, pattern, key="user", timestamp="ms")
    tasks = out.rdd.getNumPartitions()
    assert sum(1 for r in out.collect() if r.kind == "match") > 0  # opened: the letter is set
    lines = [line.split() for line in log.read_text().splitlines()]
    opens = sorted(int(index) for kind, index, _ in lines if kind == "open")
    assert opens == list(range(tasks))  # each task's partition once
    assert [kind for kind, _, _ in lines].count("close") == tasks
    # in each worker process, every open is closed before the next one
    by_process: dict[str, list[str]] = {}
    for kind, _, pid in lines:
        by_process.setdefault(pid, []).append(kind)
    assert all(kinds == ["open", "close"] * (len(kinds) // 2) for kinds in by_process.values())


class TypeBOfTheCurrentKey(RichIterativeCondition):
    """``type == "b"`` for an event of the key the context says is current (none if it says
    another, or no key)."""

    def open(self, context: Any) -> None:
        self.context = context

    def filter(self, value: Any, ctx: Any) -> bool:
        return bool(value.type == "b" and self.context.get_current_key() == value.user)


def test_a_rich_conditions_context_gives_the_key_of_the_row_it_runs_on(spark: Any) -> None:
    def pattern(b_condition: Any) -> Pattern:
        return (
            Pattern.begin("a").where(lambda e: e.type == "a").followed_by("b").where(b_condition).within(20)
        )

    df = spark.createDataFrame(events(300, users=6), SCHEMA)
    keyed = detect(df, pattern(TypeBOfTheCurrentKey()), key="user", timestamp="ms").collect()
    plain = detect(df, pattern(lambda e: e.type == "b"), key="user", timestamp="ms").collect()
    assert sum(1 for r in plain if r.kind == "match") > 0
    assert sorted(map(tuple, keyed)) == sorted(map(tuple, plain))
