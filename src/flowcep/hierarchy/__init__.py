"""Event hierarchies (seed 004): complex event types built from raw events and from lower
complex events, each level detected once, the whole hierarchy in one pass.

``Hierarchy().define(name, pattern, compose=...)`` names a type; ``of_type(name, condition)`` is
the condition of a step that reads complex events of a type; ``HierarchyOperator`` (push) and
``detect`` (pull) run it. docs/semantics.md, section 11, states the semantics.
"""

from flowcep.hierarchy.conditions import OfType, of_type
from flowcep.hierarchy.definition import Hierarchy, HierarchyError, HierarchyPlan, Level
from flowcep.hierarchy.engine import RAW, HierarchyOperator, LevelOutput, detect
from flowcep.hierarchy.event import ComplexEvent

__all__ = [
    "RAW",
    "ComplexEvent",
    "Hierarchy",
    "HierarchyError",
    "HierarchyOperator",
    "HierarchyPlan",
    "Level",
    "LevelOutput",
    "OfType",
    "detect",
    "of_type",
]
