"""``CEP.patterns(items, patterns, ...)``: the pull API of a ``MultiPatternOperator``.

``items`` is one iterable of events and control records, in one order: a control record changes
the pattern set between the elements around it (taking effect at the watermark then, see
``MultiPatternOperator.replace``). A control record is a ``PatternUpdate``, or any item for which
``is_control(item)`` is true, which ``loader(item)`` turns into one (default: ``load_rule``, a
JSON rule record). Results are ``PatternOutput``s, lazily, as they become ready.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flowcep.runtime.multipattern import MultiPatternOperator, PatternOutput, PatternSet
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.output import BAD_RECORD, BadRecord, BadRecordError
from flowcep.runtime.updates import Loader, PatternUpdate, load_rule

__all__ = ["STAGE_RULE", "PatternSetStream"]

#: The stage of a bad record that is a control record which could not be loaded or applied.
STAGE_RULE = "rule"


class PatternSetStream(Iterator[PatternOutput]):
    """The results of a pattern set over ``items``, pulled lazily (single pass); ``operator`` is
    the ``MultiPatternOperator`` (its ``stats()`` and ``patterns``)."""

    def __init__(
        self,
        items: Iterable[Any],
        patterns: PatternSet,
        options: OperatorOptions,
        is_control: Callable[[Any], bool] | None = None,
        loader: Loader | None = None,
    ) -> None:
        self.operator = MultiPatternOperator.from_options(options, patterns)
        self._items = iter(items)
        self._is_control = is_control
        self._loader: Loader = loader if loader is not None else load_rule
        self._ready: deque[PatternOutput] = deque()
        self._finished = False
        self._error: BaseException | None = None

    def __iter__(self) -> PatternSetStream:
        return self

    def __next__(self) -> PatternOutput:
        ready = self._ready
        while not ready:
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if self._finished:
                raise StopIteration
            self._pump()
        return ready.popleft()

    def _pump(self) -> None:
        op = self.operator
        is_control = self._is_control
        try:
            for item in self._items:
                if type(item) is PatternUpdate:
                    self._apply(item, item)
                elif is_control is not None and is_control(item):
                    self._apply(item, None)
                else:
                    outputs = op.process_element(item)
                    if outputs:
                        self._ready.extend(outputs)
                        return
            self._finished = True
            self._ready.extend(op.flush())
        except BadRecordError as exc:
            # what the call produced comes out first, then the error (as from CEP.pattern)
            self._ready.extend(exc.outputs)  # type: ignore[arg-type]
            self._error = exc

    def _apply(self, record: Any, update: PatternUpdate | None) -> None:
        """Apply a control record; one that cannot be loaded or applied raises, or (``on_error=
        "side_output"``) comes out as a bad record of stage ``"rule"``."""
        try:
            if update is None:
                update = self._loader(record)
            self.operator.update(update)
        except Exception as exc:
            if self.operator.options.on_error == "raise":
                raise
            name = update.name if update is not None else None
            bad = BadRecord(record, f"control record not applied: {type(exc).__name__}: {exc}", STAGE_RULE)
            self._ready.append(PatternOutput(BAD_RECORD, name, None, None, bad, None))
