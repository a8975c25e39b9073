"""The words of the JSON rule format that the reader and the writer share."""

from __future__ import annotations

FORMAT_VERSION = 1

# Flink's condition classes, as Ververica's documents name them for the AND/OR/NOT/SUBTYPE wrappers
CONDITIONS_PACKAGE = "org.apache.flink.cep.pattern.conditions."
AND_CLASS = CONDITIONS_PACKAGE + "RichAndCondition"
OR_CLASS = CONDITIONS_PACKAGE + "RichOrCondition"
NOT_CLASS = CONDITIONS_PACKAGE + "RichNotCondition"
SUBTYPE_CLASS = CONDITIONS_PACKAGE + "SubtypeCondition"

# condition types whose "expression" is compiled by flowcep.expr
EXPRESSION_TYPES = ("SQL", "AVIATOR")
CONDITION_TYPES = ("CLASS", *EXPRESSION_TYPES, "GROOVY", "MVEL")

UNIT_MS = {
    "DAYS": 86_400_000,
    "HOURS": 3_600_000,
    "MINUTES": 60_000,
    "SECONDS": 1000,
    "MILLISECONDS": 1,
}
SKIP_TYPES = ("NO_SKIP", "SKIP_TO_NEXT", "SKIP_PAST_LAST_EVENT", "SKIP_TO_FIRST", "SKIP_TO_LAST")
EDGE_TYPES = ("STRICT", "SKIP_TILL_NEXT", "SKIP_TILL_ANY", "NOT_NEXT", "NOT_FOLLOW")
INNER_STRATEGIES = ("STRICT", "SKIP_TILL_NEXT", "SKIP_TILL_ANY")
PROPERTIES = ("SINGLE", "LOOPING", "TIMES", "OPTIONAL", "GREEDY")
KINDS = ("SINGLE", "LOOPING", "TIMES")
WINDOW_TYPES = ("FIRST_AND_LAST", "PREVIOUS_AND_CURRENT")
