"""NFA compilation and execution: states, runs, Dewey versions."""

from flowcep.nfa.compiler import NFACompiler
from flowcep.nfa.computation_state import ComputationState, NFAState
from flowcep.nfa.names import ENDING_STATE_NAME, original_name
from flowcep.nfa.nfa import NFA, ConditionContext
from flowcep.nfa.state import State, StateTransition, StateTransitionAction, StateType
from flowcep.sharedbuffer.dewey import DeweyNumber

__all__ = [
    "ENDING_STATE_NAME",
    "NFA",
    "ComputationState",
    "ConditionContext",
    "DeweyNumber",
    "NFACompiler",
    "NFAState",
    "State",
    "StateTransition",
    "StateTransitionAction",
    "StateType",
    "original_name",
]
