"""What a streaming query's checkpoint says it did: its micro-batches, their watermarks and files.

Spark writes, before running micro-batch N, ``offsets/N``: a version line, the batch's metadata
(``batchWatermarkMs``...) and one offset per source; a file source's offset is ``{"logOffset": L}``
and its log (``sources/0/``, compacted every few entries into ``K.compact``) lists each file with
the ``batchId`` (log offset) that added it. A batch reads the files added after the previous
batch's offset, up to its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MicroBatch:
    batch_id: int
    watermark: int
    files: tuple[str, ...]  # local paths, in the order the source log lists them


def _entries(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"{path}: not a Spark metadata log file")
    return [line for line in lines[1:] if line.strip()]


def _source_files(source_log: Path) -> dict[int, list[str]]:
    by_offset: dict[int, list[str]] = {}
    seen: set[str] = set()
    logs = [f for f in source_log.iterdir() if f.name.split(".")[0].isdigit()]  # not .crc or .tmp
    for f in sorted(logs, key=lambda p: int(p.name.split(".")[0])):
        for line in _entries(f):
            entry = json.loads(line)
            path = entry["path"].removeprefix("file://")
            if path not in seen:
                seen.add(path)
                by_offset.setdefault(entry["batchId"], []).append(path)
    return by_offset


def micro_batches(checkpoint: Path) -> list[MicroBatch]:
    """The checkpoint's micro-batches in order (a planned one that never committed included)."""
    files = _source_files(checkpoint / "sources" / "0")
    batches = []
    previous = -1
    offsets = sorted(
        (p for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
    )
    for p in offsets:
        metadata, source = (json.loads(line) for line in _entries(p)[:2])
        offset = source["logOffset"]
        added = [f for log_offset in range(previous + 1, offset + 1) for f in files.get(log_offset, [])]
        batches.append(MicroBatch(int(p.name), metadata["batchWatermarkMs"], tuple(added)))
        previous = offset
    return batches


def committed(checkpoint: Path) -> set[int]:
    """The ids of the micro-batches whose results the sink committed."""
    return {int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
