"""``RuleDirectory``: the rule set of a directory of rule files, read again as files change."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flowcep.pattern import Pattern
from flowcep.runtime.updates import Loader, PatternUpdate, RuleRecordError, load_rule

log = logging.getLogger(__name__)

__all__ = ["RuleDirectory"]


class RuleDirectory:
    """Each ``*.json`` file of ``path`` is one rule record, which ``loader`` turns into a
    ``PatternUpdate`` (default ``load_rule``). ``current()`` lists the directory and parses
    again only the files whose size or modification time changed.

    A file that cannot be loaded keeps the rule it held before (logged as a warning); one that
    was never loaded holds none. A record that removes its rule (``"pattern": null``) holds
    none. Two files with one rule id are an error (``RuleRecordError``). Picklable: a copy reads the
    directory afresh (the Spark connector ships one to each worker).
    """

    def __init__(self, path: str | os.PathLike[str], loader: Loader | None = None) -> None:
        self.path = str(path)
        self.loader = loader
        self._files: dict[str, tuple[int, int, PatternUpdate | None]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "loader": self.loader}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self.loader = state["loader"]
        self._files = {}

    def current(self) -> dict[str, tuple[int, Pattern]]:
        """The rule set now: rule id -> ``(version, Pattern)``, in file name order."""
        return {u.name: (u.version, u.pattern) for u in self.updates()}  # type: ignore[misc]

    def updates(self) -> list[PatternUpdate]:
        """The rule set now, as the ``PatternUpdate``s that put it (with their
        ``keep_partial_matches``), in file name order."""
        files: dict[str, tuple[int, int, PatternUpdate | None]] = {}
        try:
            entries = [e for e in os.scandir(self.path) if e.name.endswith(".json") and e.is_file()]
        except FileNotFoundError:
            raise RuleRecordError(f"rule directory {self.path!r} does not exist") from None
        for entry in sorted(entries, key=lambda e: e.name):
            stat = entry.stat()
            known = self._files.get(entry.name)
            if known is not None and known[:2] == (stat.st_size, stat.st_mtime_ns):
                files[entry.name] = known
                continue
            files[entry.name] = (stat.st_size, stat.st_mtime_ns, self._load(entry.path, known))
        self._files = files
        rules: list[PatternUpdate] = []
        owner: dict[str, str] = {}
        for name, (_, _, update) in files.items():
            if update is None or update.pattern is None:
                continue
            if update.name in owner:
                raise RuleRecordError(
                    f"rule {update.name!r} is in two files: {owner[update.name]} and {name}"
                )
            owner[update.name] = name
            rules.append(update)
        return rules

    def _load(self, path: str, known: tuple[int, int, PatternUpdate | None] | None) -> PatternUpdate | None:
        loader = self.loader if self.loader is not None else load_rule
        try:
            update = loader(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            previous = known[2] if known is not None else None
            log.warning("flowcep: rule file %s not loaded (%s); keeping %s", path, exc, _what(previous))
            return previous
        if not isinstance(update, PatternUpdate):
            raise TypeError(f"the rule loader returned {update!r} for {path}, not a PatternUpdate")
        return update


def _what(update: PatternUpdate | None) -> str:
    if update is None or update.pattern is None:
        return "no rule from it"
    return f"rule {update.name!r} version {update.version}"
