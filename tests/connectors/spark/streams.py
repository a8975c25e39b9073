"""Feeding a streaming query from a directory of JSON-lines files, one file per micro-batch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from .data import SCHEMA


class FileFeed:
    """A file source directory: ``write(rows)`` adds one file; the query reads it as a micro-batch."""

    def __init__(self, spark: SparkSession, root: Path, schema: str = SCHEMA) -> None:
        self.spark = spark
        self.dir = root / "in"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.count = 0

    def stream(self) -> DataFrame:
        # one file per trigger, so every write is its own micro-batch
        return self.spark.readStream.schema(self.schema).option("maxFilesPerTrigger", 1).json(str(self.dir))

    def write(self, rows: list[Any]) -> None:
        name = self.dir / f"part-{self.count:05d}.json"
        tmp = name.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r.asDict() if hasattr(r, "asDict") else r) + "\n")
        tmp.rename(name)  # the source must never see a half-written file
        self.count += 1
