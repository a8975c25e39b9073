"""flowcep: Flink CEP for Python.

The same pattern language (snake_case, with Flink's camelCase names as
aliases), the same matches, in pure Python; connectors for PySpark and PyFlink.
"""

from typing import Any

from flowcep.pattern import (
    AfterMatchSkipStrategy,
    BooleanConditions,
    ConditionError,
    FlinkRuntimeException,
    GroupPattern,
    IllegalArgumentException,
    IterativeCondition,
    MalformedPatternException,
    NullPointerException,
    Pattern,
    RichIterativeCondition,
    SimpleCondition,
    UnsupportedOperationException,
    WithinType,
    and_,
    not_,
    or_,
)
from flowcep.pattern import serialization as _serialization

__version__ = "0.1.0"


def _json_rules() -> Any:
    """The JSON rule format of ``Pattern.to_json`` / ``from_json``, imported on first use."""
    from flowcep.rules import CODEC

    return CODEC


_serialization.register(_json_rules)

_RUNTIME_NAMES = {
    "BadRecord",
    "BadRecordError",
    "CEP",
    "CepOperator",
    "MultiPatternOperator",
    "Output",
    "OutputTag",
    "PatternProcessFunction",
    "PatternOutput",
    "PatternStream",
    "PatternUpdate",
    "TimedOutPartialMatchHandler",
}


def __getattr__(name: str) -> Any:
    # The runtime is imported on first use, so that ``import flowcep`` stays light
    # for code that only builds and compiles patterns.
    if name in _RUNTIME_NAMES:
        import flowcep.runtime as runtime

        return getattr(runtime, name)
    raise AttributeError(f"module 'flowcep' has no attribute {name!r}")


__all__ = [
    "AfterMatchSkipStrategy",
    "BadRecord",
    "BadRecordError",
    "BooleanConditions",
    "CEP",
    "CepOperator",
    "ConditionError",
    "FlinkRuntimeException",
    "GroupPattern",
    "IllegalArgumentException",
    "IterativeCondition",
    "MalformedPatternException",
    "MultiPatternOperator",
    "NullPointerException",
    "Output",
    "OutputTag",
    "Pattern",
    "PatternOutput",
    "PatternProcessFunction",
    "PatternStream",
    "PatternUpdate",
    "RichIterativeCondition",
    "SimpleCondition",
    "TimedOutPartialMatchHandler",
    "UnsupportedOperationException",
    "WithinType",
    "and_",
    "not_",
    "or_",
]
