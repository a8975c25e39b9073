"""Property tests on random small patterns and streams: no crash, well-formed matches, the
buffer ends empty once every run has ended, and results independent of how the stream is split."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from flowcep import AfterMatchSkipStrategy, ConditionError, MalformedPatternException, Pattern
from flowcep.nfa import NFACompiler
from flowcep.nfa.compiler import original_name
from flowcep.nfa.computation_state import NO_COMPLETED_MATCHES
from flowcep.runtime import snapshot
from flowcep.sharedbuffer import PathlessBuffer, SharedBuffer
from flowcep.sharedbuffer import sharedbuffer as sharedbuffer_module

from .helpers import FINAL_TS, Event, Result, feed, finish, flat_ids, named

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

LETTERS = "abc"


@st.composite
def step_specs(draw, first: bool):
    names = draw(st.sets(st.sampled_from(LETTERS), min_size=1, max_size=2))
    quant = draw(st.sampled_from(["one", "optional", "one_or_more", "times2", "times1_2", "times_or_more2"]))
    inner = draw(st.sampled_from(["relaxed", "consecutive", "allow_combinations"]))
    optional_loop = draw(st.booleans())
    greedy = draw(st.booleans())
    contiguity = None if first else draw(st.sampled_from(["next", "followed_by", "followed_by_any"]))
    negation = None if first else draw(st.sampled_from([None, None, None, "not_next", "not_followed_by"]))
    return dict(
        names=tuple(sorted(names)),
        quant=quant,
        inner=inner,
        optional_loop=optional_loop,
        greedy=greedy,
        contiguity=contiguity,
        negation=negation,
    )


@st.composite
def pattern_specs(draw):
    n = draw(st.integers(1, 3))
    steps = [draw(step_specs(first=(i == 0))) for i in range(n)]
    window = draw(st.sampled_from([None, 3, 5, 8]))
    skip = draw(
        st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last"])
    )
    return dict(steps=steps, window=window, skip=skip)


def build(spec, condition=named, negation_condition=named) -> Pattern:
    """The pattern of ``spec``; ``condition(*names)`` makes each step's condition,
    ``negation_condition(name)`` each negation's."""
    steps = spec["steps"]
    skip_name = {
        "no_skip": lambda: AfterMatchSkipStrategy.no_skip(),
        "skip_to_next": lambda: AfterMatchSkipStrategy.skip_to_next(),
        "skip_past_last_event": lambda: AfterMatchSkipStrategy.skip_past_last_event(),
        "skip_to_first": lambda: AfterMatchSkipStrategy.skip_to_first(f"s{len(steps) - 1}"),
        "skip_to_last": lambda: AfterMatchSkipStrategy.skip_to_last("s0"),
    }[spec["skip"]]()
    p = None
    for i, s in enumerate(steps):
        name = f"s{i}"
        if p is None:
            p = Pattern.begin(name, skip_name)
        elif s["negation"] is not None:
            p = getattr(p, s["negation"])(f"n{i}").where(negation_condition(s["names"][0]))
            p = getattr(p, s["contiguity"])(name)
        else:
            p = getattr(p, s["contiguity"])(name)
        p = p.where(condition(*s["names"]))
        q = s["quant"]
        looping = q in ("one_or_more", "times2", "times1_2", "times_or_more2")
        if q == "optional":
            p = p.optional()
        elif q == "one_or_more":
            p = p.one_or_more()
        elif q == "times2":
            p = p.times(2)
        elif q == "times1_2":
            p = p.times(1, 2)
        elif q == "times_or_more2":
            p = p.times_or_more(2)
        if looping:
            if s["inner"] == "consecutive":
                p = p.consecutive()
            elif s["inner"] == "allow_combinations":
                p = p.allow_combinations()
            if s["optional_loop"]:
                p = p.optional()
            if s["greedy"] and s["inner"] != "allow_combinations":
                p = p.greedy()
    if spec["window"] is not None:
        p = p.within(spec["window"])
    return p


def compile_or_reject(spec, condition=named, negation_condition=named):
    """``spec``'s pattern and its NFA (``build``'s conditions); a pattern Flink rejects is not an example."""
    try:
        pattern = build(spec, condition, negation_condition)
        return pattern, NFACompiler.compile(pattern, timeout_handling=True)
    except MalformedPatternException:
        assume(False)
    except Exception as exc:  # builder errors Flink raises as other exception types
        if type(exc).__name__ in ("UnsupportedOperationException", "IllegalArgumentException"):
            assume(False)
        raise


event_streams = st.lists(
    st.tuples(st.sampled_from(LETTERS + "x"), st.integers(0, 3)), min_size=0, max_size=10
).map(lambda xs: _to_events(xs))


def _to_events(xs):
    out, ts = [], 0
    for i, (name, gap) in enumerate(xs, start=1):
        ts += gap
        out.append(Event(name=name, ts=ts, id=i))
    return out


def fresh(nfa):
    return nfa.create_initial_state(), SharedBuffer()


def run_whole(nfa, evs, final=True):
    state, buffer = fresh(nfa)
    r = Result(nfa, state, buffer, [], [])
    feed(nfa, state, buffer, evs, r)
    if final:
        finish(nfa, state, buffer, r)
    return r


def outcome(r: Result):
    return sorted(flat_ids(x.match) for x in r.emitted), sorted((flat_ids(m), ts) for m, ts in r.timed_out)


@SETTINGS
@given(pattern_specs(), event_streams)
def test_random_patterns_do_not_crash_and_give_well_formed_matches(spec, evs):
    pattern, nfa = compile_or_reject(spec)
    r = run_whole(nfa, evs)
    step_order = [f"s{i}" for i in range(len(spec["steps"]))]
    by_id = {e.id: e for e in evs}
    for x in r.emitted:
        keys = list(x.match)
        assert keys == [k for k in step_order if k in keys], keys  # pattern order
        for k, taken in x.match.items():
            ids = [e.id for e in taken]
            assert ids == sorted(ids) and len(set(ids)) == len(ids)  # event order, no repeats per step
            allowed = spec["steps"][int(k[1:])]["names"]
            assert all(by_id[i].name in allowed for i in ids)
        all_ids = flat_ids(x.match)
        assert len(set(all_ids)) == len(all_ids)  # an event is taken at most once per match
        if spec["window"] is not None:
            ts = [by_id[i].ts for i in all_ids]
            assert max(ts) - min(ts) < spec["window"]


@SETTINGS
@given(pattern_specs(), event_streams)
def test_buffer_is_empty_once_every_run_has_ended(spec, evs):
    pattern, nfa = compile_or_reject(spec)
    r = run_whole(nfa, evs)
    if spec["window"] is not None:
        # the final advance_time passes every window: no run is left
        assert r.state.is_empty()
    if r.state.is_empty():
        assert r.buffer.is_empty()


@SETTINGS
@given(pattern_specs(), event_streams)
def test_keys_holding_no_completed_match_share_one_queue_that_stays_empty(spec, evs):
    # skip strategies hold completed matches back in a queue of the key's own; the shared queue
    # of the keys that hold none must never be written
    pattern, nfa = compile_or_reject(spec)
    r = run_whole(nfa, evs, final=False)
    assert not NO_COMPLETED_MATCHES.queue
    if not r.state.completed_matches.queue:
        assert r.state.completed_matches is NO_COMPLETED_MATCHES
    finish(nfa, r.state, r.buffer, r)
    assert not NO_COMPLETED_MATCHES.queue
    if not r.state.completed_matches.queue:
        assert r.state.completed_matches is NO_COMPLETED_MATCHES


@SETTINGS
@given(pattern_specs(), event_streams, st.integers(0, 10))
def test_results_do_not_depend_on_how_the_stream_is_split(spec, evs, cut):
    pattern, nfa = compile_or_reject(spec)
    whole = run_whole(nfa, evs)
    state, buffer = fresh(nfa)
    halves = Result(nfa, state, buffer, [], [])
    feed(nfa, state, buffer, evs[:cut], halves)
    feed(nfa, state, buffer, evs[cut:], halves)
    finish(nfa, state, buffer, halves)
    assert outcome(halves) == outcome(whole)


@SETTINGS
@given(pattern_specs(), event_streams, st.integers(0, 10))
def test_results_survive_a_pickled_state_between_the_halves(spec, evs, cut):
    pattern, nfa = compile_or_reject(spec)
    whole = run_whole(nfa, evs)
    state, buffer = fresh(nfa)
    first = Result(nfa, state, buffer, [], [])
    feed(nfa, state, buffer, evs[:cut], first)
    state, buffer = pickle.loads(pickle.dumps((state, buffer)))
    second = Result(nfa, state, buffer, [], [])
    feed(nfa, state, buffer, evs[cut:], second)
    finish(nfa, state, buffer, second)
    combined = Result(nfa, state, buffer, first.emitted + second.emitted, first.timed_out + second.timed_out)
    assert outcome(combined) == outcome(whole)


@SETTINGS
@given(pattern_specs(), event_streams)
def test_a_match_is_never_emitted_before_its_last_event(spec, evs):
    pattern, nfa = compile_or_reject(spec)
    r = run_whole(nfa, evs)
    position = {e.id: i for i, e in enumerate(evs)}
    for x in r.emitted:
        if x.at != "end":
            assert all(position[i] <= position[x.at] for i in flat_ids(x.match))


@SETTINGS
@given(pattern_specs(), event_streams)
def test_compiling_twice_gives_the_same_matcher(spec, evs):
    pattern, nfa = compile_or_reject(spec)
    again = NFACompiler.compile(pattern, timeout_handling=True)
    assert outcome(run_whole(nfa, evs)) == outcome(run_whole(again, evs))


def test_final_ts_constant_is_far_beyond_any_test_timestamp():
    assert FINAL_TS > 10**15


@SETTINGS
@given(pattern_specs(), event_streams)
def test_indexed_edges_give_the_results_of_scanned_edges(spec, evs):
    # nodes switch from scanning their edge list to a version index past some edges; forcing
    # either representation everywhere must not change a match, a timeout or the final buffer
    pattern, nfa = compile_or_reject(spec)
    runs = {}
    for threshold in (1, 10**9):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sharedbuffer_module, "_INDEX_FROM", threshold)
            r = run_whole(nfa, evs)
            runs[threshold] = (outcome(r), [x.match for x in r.emitted], r.buffer.is_empty())
    assert runs[1] == runs[10**9]


@SETTINGS
@given(pattern_specs())
def test_decision_tables_decide_as_the_depth_first_search(spec):
    """A state's precompiled decision table gives, for every event, what the generic search gives."""
    from flowcep.nfa.context import EventHandle

    _, nfa = compile_or_reject(spec)
    tabled = [name for name, slot in nfa._slots.items() if slot.table is not None and not slot.per_run]
    for name in tabled:
        for letter in LETTERS + "x":
            handle = EventHandle(Event(name=letter), 0)
            expected = nfa._decide(None, None, handle, nfa.states[name], None)
            tabled_decision = nfa._slots[name].table(handle.event)
            assert (
                tabled_decision.plans is not None and expected.plans is None
            )  # precompiled decisions get plans
            fields = ("edges", "takes", "ignores", "finals", "unchanged")
            assert [getattr(tabled_decision, f) for f in fields] == [getattr(expected, f) for f in fields]


def test_a_condition_raising_in_a_tabled_state_names_its_step():
    def boom(event):
        raise ValueError("no price")

    nfa = NFACompiler.compile(Pattern.begin("a").where(boom).followed_by("b"), timeout_handling=True)
    start = nfa._slots[nfa._start_names[0]]
    assert start.table is not None and not start.per_run
    state, buffer = fresh(nfa)
    with pytest.raises(ConditionError) as raised:
        nfa.process(buffer, state, Event(name="a"), 1)
    assert raised.value.step == "a"
    assert isinstance(raised.value.cause, ValueError)


@SETTINGS
@given(pattern_specs(), event_streams)
def test_partial_matches_handed_from_run_to_run_are_what_the_buffer_gives(spec, evs):
    """Matches, timeouts and condition views built from the runs' chains equal the paths
    extracted from the shared buffer, in the same order, on random patterns and streams."""
    from flowcep.nfa import context as context_module

    pattern, nfa = compile_or_reject(spec)

    def extracted_every_time(buffer, run):
        if run.previous_entry is None:
            return {}
        paths = buffer.extract_patterns(run.previous_entry, run.version)
        return buffer.materialize_match(paths[0]) if paths else {}

    chained = run_whole(nfa, evs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(context_module, "current_match", extracted_every_time)
        mp.setattr(context_module, "built_match", extracted_every_time)
        extracted = run_whole(NFACompiler.compile(pattern, timeout_handling=True), evs)
    assert [(x.at, x.match) for x in chained.emitted] == [(x.at, x.match) for x in extracted.emitted]
    assert chained.timed_out == extracted.timed_out


@SETTINGS
@given(
    pattern_specs(), event_streams, st.integers(0, 10), st.sampled_from(["no_skip", "skip_past_last_event"])
)
def test_a_buffer_that_keeps_no_paths_gives_the_same_results_where_no_skip_strategy_reads_them(
    spec, evs, cut, skip
):
    """Without a skip strategy nothing reads the buffer's paths, and skip_past_last_event prunes by
    a match's last event alone. A PathlessBuffer (what the runtime gives such keys) gives the same
    matches, at the same events, and the same timeouts, in the same order, also when the runs'
    partial matches are pickled between the halves (what a snapshot keeps instead of the
    buffer); and the nodes it counts equal the full buffer's."""
    pattern, nfa = compile_or_reject(dict(spec, skip=skip))
    assert not nfa.needs_paths()
    full = Result(nfa, nfa.create_initial_state(), SharedBuffer(), [], [])
    lean = Result(nfa, nfa.create_initial_state(), PathlessBuffer(), [], [])
    for i, e in enumerate(evs):
        if i == cut:
            runs, matches = pickle.loads(pickle.dumps((lean.state, nfa.run_matches(lean.buffer, lean.state))))
            nfa.restore_run_matches(runs, matches)
            lean.state = runs
        for r in (full, lean):
            feed(nfa, r.state, r.buffer, [e], r)
        assert nfa.held_entries(lean.buffer, lean.state) == full.buffer.entry_count()
    for r in (full, lean):
        finish(nfa, r.state, r.buffer, r)
    assert [(x.at, x.match) for x in lean.emitted] == [(x.at, x.match) for x in full.emitted]
    assert lean.timed_out == full.timed_out
    assert lean.buffer.entry_count() == lean.buffer.event_count() == 0


def test_a_condition_raising_behind_a_proceed_edge_names_its_own_step():
    def boom(event):
        raise ValueError("no price")

    pattern = Pattern.begin("a").where(named("a")).optional().followed_by("b").where(boom)
    nfa = NFACompiler.compile(pattern, timeout_handling=True)
    start = nfa._slots[nfa._start_names[0]]
    assert start.table is not None and not start.per_run
    state, buffer = fresh(nfa)
    with pytest.raises(ConditionError) as raised:
        nfa.process(buffer, state, Event(name="x"), 1)
    assert raised.value.step == "b"


@SETTINGS
@given(pattern_specs(), event_streams)
def test_the_queue_head_gives_the_next_deadline_and_emptiness(spec, evs):
    """The deadline read off the queue's head is the minimum over all runs' windows, and the
    state is empty exactly when no run has started."""
    _, nfa = compile_or_reject(spec)
    state, buffer = fresh(nfa)
    for e in evs:
        nfa.advance_time(buffer, state, e.ts)
        nfa.process(buffer, state, e, e.ts)
        due = [
            t
            for run in state.partial_matches
            if run.start_event_id is not None
            for t in (
                run.start_timestamp + nfa.window_time if nfa.window_time > 0 else None,
                run.previous_timestamp + nfa.window_times[run.state]
                if nfa.window_times.get(run.state, 0) > 0
                else None,
            )
            if t is not None
        ]
        assert nfa.next_deadline(state) == (min(due) if due else None)
        # is_empty() reads the queue's head too
        assert state.is_empty() == (
            not list(state.completed_matches)
            and all(run.start_event_id is None for run in state.partial_matches)
        )


@SETTINGS
@given(pattern_specs(), event_streams)
def test_matches_held_back_behind_a_partial_match_that_stays_need_no_rebuild(spec, evs):
    """advance_time skips its rebuild while the held-back matches wait for a partial match that
    nothing times out: forcing the rebuild every time gives the same matches at the same events,
    the same timeouts and the same runs."""
    _, nfa = compile_or_reject(spec)
    results = []
    for forced in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            if forced:
                mp.setattr(type(nfa), "holds_back", lambda self, state, skip=None: False)
            r = run_whole(nfa, evs, final=False)
            runs = [(run.state, run.version, run.start_event_id) for run in r.state.partial_matches]
            held = [(run.state, run.version) for run in r.state.completed_matches]
            finish(nfa, r.state, r.buffer, r)
            results.append((r.emitted_at(), r.timeouts, runs, held))
    assert results[0] == results[1]


def _named_and_fewer_than_two_taken(*names):
    """Iterative: the name is one of ``names`` and the run took fewer than two events so far."""
    wanted = frozenset(names)

    def cond(e, ctx):
        taken = sum(len(ctx.get_events_for_pattern(f"s{i}")) for i in range(3))
        return e.name in wanted and taken < 2

    return cond


@SETTINGS
@given(pattern_specs(), event_streams)
def test_generated_decisions_with_iterative_conditions_decide_as_the_search(spec, evs):
    """States whose conditions read the partial match get a generated ``decide(event, ctx)``
    too; with those switched off (every such decision searched) the results are the same."""
    _, nfa = compile_or_reject(spec, _named_and_fewer_than_two_taken)
    assert any(slot.table is not None for slot in nfa._slots.values() if slot.per_run)
    generated = run_whole(nfa, evs)
    with pytest.MonkeyPatch.context() as mp:
        for slot in nfa._slots.values():
            if slot.per_run:
                mp.setattr(slot, "table", None)
        searched = run_whole(nfa, evs)
    assert generated.emitted_at() == searched.emitted_at()
    assert generated.timeouts == searched.timeouts


def _an_even_number_taken(name):
    """Iterative, whatever the event's name: the run took an even number of events, so that
    runs in one state that took different events decide differently."""

    def cond(e, ctx):
        return sum(len(ctx.get_events_for_pattern(f"s{i}")) for i in range(3)) % 2 == 0

    return cond


def _decide_every_run_by_searching(nfa) -> None:
    """Switch off every shared decision: each run's decision is searched with its own context."""
    nfa._needs_context = dict.fromkeys(nfa.states, True)
    for slot in nfa._slots.values():
        slot.per_run = True
        slot.table = None
    nfa._simple_start = False


def test_switching_every_shared_decision_off_makes_each_run_search_its_own():
    """The switch above reaches process(): the property test below compares two paths, not one."""
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    nfa = NFACompiler.compile(pattern, timeout_handling=True)
    _decide_every_run_by_searching(nfa)
    searched = []
    with pytest.MonkeyPatch.context() as mp:
        decide = nfa._decide
        mp.setattr(
            nfa,
            "_decide",
            lambda buffer, run, *rest: searched.append(run.state) or decide(buffer, run, *rest),
        )
        state, buffer = fresh(nfa)
        for t, name in enumerate("aab", 1):
            nfa.process(buffer, state, Event(name=name), t)
    # every run, in queue order (by start event, the start run last): a1 meets the start run;
    # a2 the run that took a1, then the start run; b both runs that took an a, then the start run
    assert [original_name(s) for s in searched] == ["a", "b", "a", "b", "b", "a"]


@st.composite
def specs_ending_in_a_negated_step(draw):
    """Three steps (sometimes two), the first looping, the last behind a negation and often
    optional: the shape in which runs of one state hold different partial matches and the search
    for a final state after a TAKE passes the negation's PROCEED edge."""
    steps = [draw(step_specs(first=(i == 0))) for i in range(draw(st.sampled_from([2, 3, 3])))]
    steps[0]["quant"] = draw(st.sampled_from(["one_or_more", "times_or_more2", "times1_2"]))
    steps[-1]["negation"] = draw(st.sampled_from(["not_next", "not_followed_by"]))
    steps[-1]["quant"] = draw(st.sampled_from(["optional", "optional", "one", "one_or_more"]))
    window = draw(st.sampled_from([None, 3, 5, 8]))
    return dict(steps=steps, window=window, skip=draw(st.sampled_from(["no_skip", "skip_past_last_event"])))


def _step(quant: str, contiguity: str | None = None, negation: str | None = None) -> dict:
    return dict(
        names=("a",),
        quant=quant,
        inner="relaxed",
        optional_loop=False,
        greedy=False,
        contiguity=contiguity,
        negation=negation,
    )


# The shape is narrow: random search found the bug this guards against (a not_next with an
# iterative condition before optional steps, oracle case s9001-370) 1 time in 5 at 100 examples,
# 6 times in 6 at 1,000. Searches with the fix taken out shrink to the example below: pinned, it
# fails at once without the fix, so the random search can stay at 200 examples (1,000 took about
# as long as the rest of the core suite).
@settings(SETTINGS, max_examples=200)
@given(specs_ending_in_a_negated_step(), event_streams)
@example(
    dict(
        steps=[_step("one_or_more"), _step("one", "next"), _step("optional", "next", "not_next")],
        window=None,
        skip="no_skip",
    ),
    _to_events([("a", 0), ("a", 0), ("a", 0)]),
)
def test_decisions_shared_by_the_runs_of_a_state_are_what_each_run_decides(spec, evs):
    """Simple steps and iterative negations: a state's decision is shared by its runs only when
    nothing it evaluates reads a partial match, including the search for a final state after a
    TAKE (a negation's iterative condition sits on the PROCEED edge past it). Deciding every run
    on its own gives the same results."""
    pattern, shared = compile_or_reject(spec, named, _an_even_number_taken)
    per_run = NFACompiler.compile(pattern, timeout_handling=True)
    _decide_every_run_by_searching(per_run)
    a, b = run_whole(shared, evs), run_whole(per_run, evs)
    assert a.emitted_at() == b.emitted_at()
    assert a.timeouts == b.timeouts


@SETTINGS
@given(pattern_specs())
def test_no_edge_but_its_ignore_loop_reaches_a_start_state(spec):
    """So a run in a start state is a start run without events, which a plan updates in place
    (flowcep.nfa.plans): every other state is made before the start state and points at states
    made before it or at itself."""
    _, nfa = compile_or_reject(spec)
    for state in nfa.raw_states:
        for t in state.transitions:
            if t.target.is_start:
                assert t.source is t.target and t.action.name == "IGNORE", (state.name, t.action)


def assert_like_the_reference(spec, evs, keeps_paths, switch):
    """Feed ``evs`` to a key of ``spec``'s pattern and to one whose NFA has ``switch`` off (its
    reference path): after every event the same matches and timeouts, and the same runs,
    versions, buffer and flags, down to the bytes of a snapshot (whose pickler shares equal
    strings and tuples of atoms by value, as generated code may share them)."""
    _, fast = compile_or_reject(spec)
    if not keeps_paths:
        assume(not fast.needs_paths())
    _, reference = compile_or_reject(spec)
    setattr(reference, switch, False)
    make_buffer = SharedBuffer if keeps_paths else PathlessBuffer
    keys = [
        (nfa, Result(nfa, nfa.create_initial_state(), make_buffer(), [], [])) for nfa in (fast, reference)
    ]
    for e in evs:
        for nfa, r in keys:
            feed(nfa, r.state, r.buffer, [e], r)
        (_, a), (_, b) = keys
        assert a.state.new_start_partial_match == b.state.new_start_partial_match
        assert snapshot.dumps((a.state, a.buffer)) == snapshot.dumps((b.state, b.buffer))
        assert a.timed_out == b.timed_out
        if not keeps_paths:
            assert fast.run_matches(a.buffer, a.state) == reference.run_matches(b.buffer, b.state)
    for nfa, r in keys:
        finish(nfa, r.state, r.buffer, r)
    (_, a), (_, b) = keys
    assert [(x.at, x.match) for x in a.emitted] == [(x.at, x.match) for x in b.emitted]
    assert a.timed_out == b.timed_out


@SETTINGS
@given(pattern_specs(), event_streams, st.booleans())
def test_decision_plans_do_what_compute_next_states_does(spec, evs, keeps_paths):
    """A precompiled decision's generated plan (flowcep.nfa.plans) leaves the key exactly as
    _compute_next_states and the loop after it do."""
    assert_like_the_reference(spec, evs, keeps_paths, "plans_enabled")


@SETTINGS
@given(pattern_specs(), event_streams, st.booleans())
def test_timing_out_a_queue_in_start_order_leaves_what_re_adding_every_run_leaves(spec, evs, keeps_paths):
    """advance_time's shortcut for runs in the order of their start events (only a prefix of them
    times out, the others keep their places) leaves the key exactly as Flink's way does, every run
    that stays re-added to a new queue. (A key's events come in time order, which keeps its runs
    in start order; test_nfa_windows has runs out of that order.)"""
    assert_like_the_reference(spec, evs, keeps_paths, "prefix_timeouts_enabled")


@st.composite
def chains(draw):
    """A run's partial match as the NFA hands it on: links (parent, page, event) on a match that
    is empty or built (a dict of events by step)."""
    base = draw(
        st.dictionaries(st.sampled_from(LETTERS), st.lists(st.integers(0, 9), min_size=1, max_size=3))
    )
    link = draw(st.sampled_from([{}, base])) if base else {}
    for page, event in draw(
        st.lists(st.tuples(st.sampled_from(LETTERS), st.integers(10, 99)), min_size=1, max_size=5)
    ):
        link = (link, page, event)
    return link


@SETTINGS
@given(chains())
def test_a_short_chain_read_without_a_loop_gives_what_walking_it_gives(link):
    """built_match reads chains of up to three links without a loop; chain_match, which walks any
    chain back and forth, is the reference: the same events by step, the steps in the same order,
    and lists of its own (the chain's built match is left as it was)."""
    from flowcep.nfa import context as context_module
    from flowcep.nfa.computation_state import ComputationState

    base = link
    while type(base) is tuple:
        base = base[0]
    base_before = {page: list(events) for page, events in base.items()}
    run = ComputationState("s", ((1, 0), "s"), (1, 0), (1, 0))
    run.match = link
    built = context_module.built_match(SharedBuffer(), run)
    expected = context_module.chain_match(link)
    assert list(built.items()) == list(expected.items())
    assert base == base_before
    assert all(built[page] is not events for page, events in base.items())
