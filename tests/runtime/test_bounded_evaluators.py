"""``CEP.pattern(..., evaluator=...)``: the bounded evaluators behind the runtime's outputs."""

from __future__ import annotations

import pytest

from flowcep import CEP, Pattern, PatternProcessFunction, TimedOutPartialMatchHandler
from flowcep.bounded import UnsupportedPattern
from flowcep.runtime import BadRecordError

from .support import Ev, is_

EVALUATORS = ["nfa", "optiseq", "tree", "auto"]


def abc_any(window: int = 10) -> Pattern:
    return (
        Pattern.begin("a").where(is_("a"))
        .followed_by_any("b").where(is_("b"))
        .followed_by_any("c").where(is_("c"))
        .within(window)
    )  # fmt: skip


def brief(match) -> str:
    return " ".join(repr(e) for evs in match.values() for e in evs)


STREAM = [
    Ev("a", 1), Ev("a", 2, "y"), Ev("b", 3), Ev("b", 4, "y"), Ev("b", 5), Ev("c", 6, "y"),
    Ev("c", 7), Ev("b", 2),  # late: the watermark is 6 after c@7
    Ev("c", 7, "y"), Ev("c", 9),
]  # fmt: skip


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_keys_late_events_and_the_output_order(evaluator):
    result = CEP.pattern(STREAM, abc_any(), key_by="key", timestamp="ts", evaluator=evaluator).select(brief)
    matches = list(result)
    late = list(result.get_side_output(CEP.LATE_DATA))
    # by the last event's time, then its arrival, then the evaluator's order
    expected = [
        "a@2/y b@4/y c@6/y",
        "a@1 b@3 c@7",
        "a@1 b@5 c@7",
        "a@2/y b@4/y c@7/y",
        "a@1 b@3 c@9",
        "a@1 b@5 c@9",
    ]
    if evaluator == "nfa":
        assert sorted(matches) == sorted(expected)
    else:
        assert matches == expected
    assert late == [Ev("b", 2)]


@pytest.mark.parametrize("evaluator", ["optiseq", "tree", "auto"])
def test_out_of_orderness_sorts_the_events_as_the_nfa_runtime_does(evaluator):
    stream = [Ev("b", 3), Ev("a", 1), Ev("c", 4), Ev("a", 2)]
    run = CEP.pattern(stream, abc_any(), timestamp="ts", out_of_orderness=2, evaluator=evaluator).select(
        brief
    )
    nfa = CEP.pattern(stream, abc_any(), timestamp="ts", out_of_orderness=2).select(brief)
    assert list(run) == ["a@1 b@3 c@4", "a@2 b@3 c@4"]
    assert sorted(nfa) == ["a@1 b@3 c@4", "a@2 b@3 c@4"]


def test_a_bounded_evaluator_needs_a_sized_collection():
    with pytest.raises(TypeError, match="evaluator='optiseq' needs a finite, sized collection"):
        CEP.pattern(iter(STREAM), abc_any(), timestamp="ts", evaluator="optiseq")
    with pytest.raises(TypeError, match="evaluator='auto' needs a finite, sized collection"):
        CEP.pattern((e for e in STREAM), abc_any(), timestamp="ts", evaluator="auto")


def test_an_explicit_evaluator_refuses_a_pattern_it_does_not_serve():
    p = Pattern.begin("a").where(is_("a")).next("b").where(is_("b"))
    with pytest.raises(UnsupportedPattern, match="next before step 'b'"):
        CEP.pattern(STREAM, p, timestamp="ts", evaluator="tree")
    auto = CEP.pattern(STREAM, p, key_by="key", timestamp="ts", evaluator="auto").select(brief)
    assert sorted(auto) == ["a@1 b@3", "a@2/y b@4/y"]


class WithTimeouts(PatternProcessFunction, TimedOutPartialMatchHandler):
    def __init__(self) -> None:
        self.timed_out: list[str] = []

    def process_match(self, match, ctx, out):
        out.collect(brief(match))

    def process_timed_out_match(self, match, ctx):
        self.timed_out.append(brief(match))


def test_timeouts_need_the_nfa():
    with pytest.raises(ValueError, match="evaluator='tree' does not serve timed-out partial matches"):
        CEP.pattern(STREAM, abc_any(5), key_by="key", timestamp="ts", evaluator="tree").process(
            WithTimeouts()
        )
    fn = WithTimeouts()
    matches = list(
        CEP.pattern(STREAM, abc_any(5), key_by="key", timestamp="ts", evaluator="auto").process(fn)
    )
    assert matches == ["a@2/y b@4/y c@6/y"]
    assert fn.timed_out  # the NFA ran: auto gives the timeouts too


def test_processing_time_and_comparators_need_the_nfa():
    stream = CEP.pattern(STREAM, abc_any(), timestamp="ts", evaluator="optiseq")
    with pytest.raises(ValueError, match="does not serve processing time"):
        stream.in_processing_time().select(brief)
    with pytest.raises(ValueError, match="does not serve a comparator"):
        CEP.pattern(STREAM, abc_any(), timestamp="ts", comparator=lambda e: e.value, evaluator="tree").select(
            brief
        )


@pytest.mark.parametrize("evaluator", ["optiseq", "tree"])
def test_bad_records_are_reported_as_the_nfa_reports_them(evaluator):
    stream = [{"name": "a", "ts": 1}, {"name": "b"}, {"name": "b", "ts": 2}, {"name": "c", "ts": 3}]
    p = (
        Pattern.begin("a").where(lambda e: e["name"] == "a")
        .followed_by_any("b").where(lambda e: e["name"] == "b")
        .followed_by_any("c").where(lambda e: e["name"] == "c")
    )  # fmt: skip
    run = CEP.pattern(stream, p, timestamp="ts", on_error="side_output", evaluator=evaluator).select(
        lambda m: m
    )
    assert [m["b"][0]["ts"] for m in run] == [2]
    assert [b.record for b in run.get_side_output(CEP.BAD_RECORDS)] == [{"name": "b"}]
    with pytest.raises(BadRecordError):
        list(CEP.pattern(stream, p, timestamp="ts", evaluator=evaluator).select(lambda m: m))


@pytest.mark.parametrize("evaluator", ["optiseq", "tree"])
def test_a_raising_condition_is_reported_as_the_nfa_reports_it(evaluator):
    p = Pattern.begin("a").where(is_("a")).followed_by_any("b").where(lambda e, ctx: 1 / e.value > 0)
    stream = [Ev("a", 1, value=1), Ev("b", 2, value=0)]

    def failure(ev: str) -> str:
        with pytest.raises(BadRecordError) as info:
            list(CEP.pattern(stream, p, timestamp="ts", evaluator=ev).select(brief))
        return str(info.value)

    assert failure(evaluator) == failure("nfa")


def test_an_event_hierarchy_in_a_batch_runs_on_the_nfa():
    from flowcep.hierarchy import Hierarchy
    from flowcep.runtime.bounded import batch_evaluator

    hierarchy = Hierarchy().define("pair", abc_any())
    assert batch_evaluator("auto", hierarchy, streaming=False, timeouts_out=False) == "nfa"
    with pytest.raises(ValueError, match="event hierarchy runs on the NFA"):
        batch_evaluator("tree", hierarchy, streaming=False, timeouts_out=False)


def test_a_partial_match_limit_in_a_batch_runs_on_the_nfa():
    from flowcep.runtime.bounded import batch_evaluator

    assert batch_evaluator("auto", abc_any(), streaming=False, timeouts_out=False, limited=True) == "nfa"
    assert batch_evaluator("auto", abc_any(), streaming=False, timeouts_out=False) == "auto"
    with pytest.raises(ValueError, match="does not serve a partial-match limit"):
        batch_evaluator("tree", abc_any(), streaming=False, timeouts_out=False, limited=True)
