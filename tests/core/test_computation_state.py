"""A run's fields (Flink's ``ComputationState``): flowcep keeps five and derives Flink's start
timestamp, start event id and previous timestamp from them."""

import pickle

from flowcep import Pattern
from flowcep.nfa import NFACompiler
from flowcep.nfa.computation_state import ComputationState, NFAState

from .helpers import named, run_full


def a_b_c():
    return (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .followed_by("c")
        .where(named("c"))
    )


def partial_runs(evs):
    result = run_full(a_b_c(), evs, final_ts=None)
    return {run.state: run for run in result.state.runs() if run.start_event_id is not None}


def test_a_run_reports_flinks_start_and_previous_timestamps_and_its_start_event():
    runs = partial_runs("a1@5 x2@7 b3@9 x4@11")
    waiting_for_c = runs["c"]
    assert waiting_for_c.start_timestamp == 5
    assert waiting_for_c.start_event_id == (5, 0)
    assert waiting_for_c.previous_timestamp == 9  # the b it took, not the x it ignored after


def test_a_run_that_has_only_ignored_since_its_start_keeps_its_start_as_previous():
    runs = partial_runs("a1@5 x2@7 x3@8")
    waiting_for_b = runs["b"]
    assert (waiting_for_b.start_timestamp, waiting_for_b.previous_timestamp) == (5, 5)


def test_a_start_run_has_no_start_event_and_minus_one_for_both_timestamps():
    run = ComputationState.start("a")
    assert (run.state, run.start_event_id, run.start_timestamp, run.previous_timestamp) == ("a", None, -1, -1)


def test_the_second_event_taken_at_a_timestamp_has_its_arrival_counter_in_the_start_event_id():
    result = run_full(a_b_c(), "a1@5 a2@5", final_ts=None)
    starts = sorted(run.start_event_id for run in result.state.runs() if run.start_event_id is not None)
    assert starts == [(5, 0), (5, 1)]
    assert {run.start_timestamp for run in result.state.runs() if run.start_event_id is not None} == {5}


def test_a_run_keeps_its_state_name_once_the_nfa_has_given_it_its_decision_slot():
    result = run_full(a_b_c(), "a1@5 a2@6 b3@7", final_ts=None)
    states = sorted(run.state for run in result.state.runs() if run.start_event_id is not None)
    assert states == ["c", "c"]
    assert all(not isinstance(run.slot, str) for run in result.state.runs())  # set by the plans


def test_a_pickled_run_holds_flinks_six_fields_and_comes_back_equal():
    run = partial_runs("a1@5 x2@7 b3@9")["c"]
    assert run.__getstate__() == ("c", run.previous_entry, run.version, 5, 9, (5, 0))
    restored = pickle.loads(pickle.dumps(run))
    assert restored == run
    assert restored.slot == "c"  # the name until the NFA finds the slot again


def test_a_run_has_five_fields_so_that_pypy_keeps_it_in_one_object():
    assert len(ComputationState.__slots__) <= 5


def test_a_new_keys_state_made_in_one_go_is_the_one_made_run_by_run():
    # NFA.create_initial_state's one start run: NFAState.of_start_run, without the calls of
    # ComputationState.start and of_start_runs, and with every field they set
    nfa = NFACompiler.compile(a_b_c())
    slot = nfa._slots["a"]  # noqa: SLF001  (the decision slot the NFA gives start runs)
    made = NFAState.of_start_run(slot)
    run = ComputationState.start("a")
    run.slot = slot
    expected = NFAState.of_start_runs([run], unbound=False)
    fields = ("queue", "completed_matches", "new_start_partial_match", "runs_changed", "unbound")
    assert [getattr(made, f) for f in fields] == [getattr(expected, f) for f in fields]
    [start] = made.queue
    assert [getattr(start, f) for f in ComputationState.__slots__] == [
        getattr(run, f) for f in ComputationState.__slots__
    ]
    assert nfa.create_initial_state().queue == made.queue
