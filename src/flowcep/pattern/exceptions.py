"""Exceptions raised by the pattern layer, named after their Flink counterparts.

Each one also derives from the closest Python built-in, so ``except ValueError`` keeps working
for callers that do not know the Flink names.
"""

from __future__ import annotations

from typing import Any


class MalformedPatternException(ValueError):
    """An illegal pattern (Flink's ``MalformedPatternException``)."""


class IllegalArgumentException(ValueError):
    """An illegal argument (Flink's ``Preconditions.checkArgument``)."""


class UnsupportedOperationException(NotImplementedError):
    """An operation Flink CEP does not support."""


class NullPointerException(TypeError):
    """``None`` where a value is required (Flink's ``Preconditions.checkNotNull``)."""


class FlinkRuntimeException(RuntimeError):
    """A runtime error, for instance an after-match skip to a missing element."""


class ConditionError(RuntimeError):
    """A user condition raised while evaluating ``event`` for the step ``step``."""

    def __init__(self, step: str, event: Any, cause: BaseException | None = None) -> None:
        self.step = step
        self.event = event
        self.cause = cause
        what = f"{type(cause).__name__}: {cause}" if cause is not None else "an error"
        super().__init__(f"Condition of pattern step {step!r} raised {what} on event {event!r}")
        if cause is not None:
            self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduce would call __init__ with the message only.
        return (type(self), (self.step, self.event, self.cause))
