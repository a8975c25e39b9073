"""What an iterative condition sees, as one base for every evaluator: ``ConditionContextBase``.

The NFA's ``ConditionContext`` and the bounded evaluators' ``Context`` differ in where the
partial match comes from; the rest is this: the tested event's ``timestamp()`` and
``current_processing_time()``, the clock of the operator that runs the pattern (Flink's
processing-time service; the wall clock unless ``CEP.pattern(clock=...)`` gives one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar


def wall_clock_millis() -> int:
    """The default processing-time clock: epoch milliseconds."""
    return time.time_ns() // 1_000_000


class ConditionContextBase:
    """The context API of iterative conditions (``get_events_for_pattern``, ``timestamp``,
    ``current_processing_time``, and Flink's camelCase names)."""

    __slots__ = ()

    # the processing-time clock; a subclass per operator clock (``with_clock``) sets its own
    clock: ClassVar[Callable[[], int]] = staticmethod(wall_clock_millis)

    def get_events_for_pattern(self, name: str) -> list[Any]:
        raise NotImplementedError

    def timestamp(self) -> int:
        raise NotImplementedError

    def current_processing_time(self) -> int:
        """The operator's processing time, in epoch ms."""
        return int(type(self).clock())

    @classmethod
    def with_clock(cls, clock: Callable[[], int] | None) -> type[Any]:
        """This context class, or a subclass whose ``current_processing_time()`` reads ``clock``."""
        if clock is None or clock is wall_clock_millis:
            return cls
        return type(cls.__name__, (cls,), {"__slots__": (), "clock": staticmethod(clock)})

    def getEventsForPattern(self, name: str) -> list[Any]:  # noqa: N802 - Flink's name
        return self.get_events_for_pattern(name)

    def currentProcessingTime(self) -> int:  # noqa: N802 - Flink's name
        return self.current_processing_time()
