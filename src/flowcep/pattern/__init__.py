"""The pattern language: builder, quantifiers, conditions and after-match skip strategies."""

from flowcep.pattern.aftermatch import (
    AfterMatchSkipStrategy,
    NoSkipStrategy,
    SkipPastLastStrategy,
    SkipToElementStrategy,
    SkipToFirstStrategy,
    SkipToLastStrategy,
    SkipToNextStrategy,
)
from flowcep.pattern.conditions import (
    BooleanConditions,
    Condition,
    IterativeCondition,
    RichAndCondition,
    RichNotCondition,
    RichOrCondition,
    SimpleCondition,
    SubtypeCondition,
    and_,
    as_condition,
    not_,
    or_,
)
from flowcep.pattern.durations import Duration, parse_duration, to_millis
from flowcep.pattern.exceptions import (
    ConditionError,
    FlinkRuntimeException,
    IllegalArgumentException,
    MalformedPatternException,
    NullPointerException,
    UnsupportedOperationException,
)
from flowcep.pattern.pattern import GroupPattern, Pattern, WithinType
from flowcep.pattern.quantifier import ConsumingStrategy, Quantifier, QuantifierProperty, Times

__all__ = [
    "AfterMatchSkipStrategy",
    "BooleanConditions",
    "Condition",
    "ConditionError",
    "ConsumingStrategy",
    "Duration",
    "FlinkRuntimeException",
    "GroupPattern",
    "IllegalArgumentException",
    "IterativeCondition",
    "MalformedPatternException",
    "NoSkipStrategy",
    "NullPointerException",
    "Pattern",
    "Quantifier",
    "QuantifierProperty",
    "RichAndCondition",
    "RichNotCondition",
    "RichOrCondition",
    "SimpleCondition",
    "SkipPastLastStrategy",
    "SkipToElementStrategy",
    "SkipToFirstStrategy",
    "SkipToLastStrategy",
    "SkipToNextStrategy",
    "SubtypeCondition",
    "Times",
    "UnsupportedOperationException",
    "WithinType",
    "and_",
    "as_condition",
    "not_",
    "or_",
    "parse_duration",
    "to_millis",
]
