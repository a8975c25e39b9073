"""A looping group whose steps are all optional: Flink's epsilon search never ends; flowcep stops
with a clear error (docs/semantics.md 10.2)."""

import pytest

from flowcep import FlinkRuntimeException, Pattern
from flowcep.nfa import NFACompiler
from flowcep.sharedbuffer import SharedBuffer


def test_a_proceed_loop_raises_instead_of_hanging():
    p = (
        Pattern.begin("a")
        .where(lambda e: e == "a")
        .followed_by(Pattern.begin("g").where(lambda e: e == "g").optional())
        .one_or_more()
        .followed_by("c")
        .where(lambda e: e == "c")
    )
    nfa = NFACompiler.compile(p)  # compiling is fine, as in Flink
    state, buffer = nfa.create_initial_state(), SharedBuffer()
    with pytest.raises(FlinkRuntimeException, match="loops through PROCEED edges without taking an event"):
        nfa.process(buffer, state, "a", 1)
