"""Event hierarchies (seed 004): complex event types built from raw events and from lower
complex events, each level detected once, the whole hierarchy in one pass.

``Hierarchy().define(name, pattern, compose=...)`` names a type; ``of_type(name, condition)`` is
the condition of a step that reads complex events of a type; ``HierarchyOperator`` (push) and
``detect`` (pull) run it; ``OnePassHierarchy`` runs a hierarchy of its class in one structure
per key (``hierarchy_operator(..., engine=...)`` and ``detect(..., engine=...)`` choose).
docs/semantics.md, section 11, states the semantics.
"""

from flowcep.hierarchy.conditions import OfType, of_type
from flowcep.hierarchy.definition import Hierarchy, HierarchyError, HierarchyPlan, Level
from flowcep.hierarchy.engine import RAW, HierarchyOperator, LevelOutput
from flowcep.hierarchy.engines import ENGINES, detect, hierarchy_operator
from flowcep.hierarchy.event import ComplexEvent
from flowcep.hierarchy.onepass import OnePassHierarchy

__all__ = [
    "ENGINES",
    "RAW",
    "ComplexEvent",
    "Hierarchy",
    "HierarchyError",
    "HierarchyOperator",
    "HierarchyPlan",
    "Level",
    "LevelOutput",
    "OfType",
    "OnePassHierarchy",
    "detect",
    "hierarchy_operator",
    "of_type",
]
