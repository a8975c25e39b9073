"""Bounded-data evaluators beside the NFA: OptiSeq (seed 000) and operator trees (seed 002).

They take one key's bounded, time-ordered events and give the NFA's matches for the patterns
they serve (``plan.py`` lists the class); ``planner.py`` chooses between them and the NFA.
"""

from flowcep.bounded.evaluate import evaluate, explain, run_nfa, run_plan, timestamps
from flowcep.bounded.operators import Composite, SequenceOperator, Stream
from flowcep.bounded.plan import BoundedPattern, UnsupportedPattern, compile_bounded, support
from flowcep.bounded.planner import EVALUATORS, Plan, plan

__all__ = [
    "EVALUATORS",
    "BoundedPattern",
    "Composite",
    "Plan",
    "SequenceOperator",
    "Stream",
    "UnsupportedPattern",
    "compile_bounded",
    "evaluate",
    "explain",
    "plan",
    "run_nfa",
    "run_plan",
    "support",
    "timestamps",
]
