"""The embedded runtime: ``CepOperator`` (push API) and ``CEP.pattern`` (pull API)."""

from flowcep.runtime.context import RuntimeContext
from flowcep.runtime.functions import (
    Collector,
    Context,
    OutputTag,
    PatternProcessFunction,
    TimedOutPartialMatchHandler,
)
from flowcep.runtime.gctuning import tune_gc
from flowcep.runtime.limits import DroppedPartialMatch, PartialMatchLimit, PartialMatchLimitError
from flowcep.runtime.multipattern import MultiPatternOperator, PatternOutput
from flowcep.runtime.operator import LONG_MAX, LONG_MIN, CepOperator
from flowcep.runtime.options import OperatorOptions
from flowcep.runtime.output import BadRecord, BadRecordError, HeldBackMatchesWarning, Output
from flowcep.runtime.ruledir import RuleDirectory
from flowcep.runtime.snapshot import SnapshotError
from flowcep.runtime.stream import (
    BAD_RECORDS,
    CEP,
    DROPPED_PARTIAL_MATCHES,
    LATE_DATA,
    TIMED_OUT,
    PatternStream,
    ResultStream,
    SideOutputStream,
)
from flowcep.runtime.updates import PatternUpdate, RuleRecordError, load_rule

__all__ = [
    "BAD_RECORDS",
    "CEP",
    "DROPPED_PARTIAL_MATCHES",
    "LATE_DATA",
    "LONG_MAX",
    "LONG_MIN",
    "MultiPatternOperator",
    "TIMED_OUT",
    "BadRecord",
    "BadRecordError",
    "CepOperator",
    "Collector",
    "Context",
    "DroppedPartialMatch",
    "HeldBackMatchesWarning",
    "Output",
    "OperatorOptions",
    "OutputTag",
    "PartialMatchLimit",
    "PartialMatchLimitError",
    "PatternProcessFunction",
    "PatternOutput",
    "PatternStream",
    "PatternUpdate",
    "ResultStream",
    "RuleDirectory",
    "RuleRecordError",
    "RuntimeContext",
    "SideOutputStream",
    "SnapshotError",
    "TimedOutPartialMatchHandler",
    "load_rule",
    "tune_gc",
]
