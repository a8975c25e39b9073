"""What users porting a Flink job reach for: field names for key_by and timestamp, the package
root's BadRecordError, typed OutputTags, and matches a skip strategy holds back for ever."""

from __future__ import annotations

import warnings

import pytest

import flowcep
from flowcep.pattern import AfterMatchSkipStrategy, Pattern
from flowcep.runtime import CEP, CepOperator, HeldBackMatchesWarning, Output, OutputTag

from .support import Ev, ab_within, is_


def first_names(match: dict[str, list[Ev]]) -> str:
    return " ".join(e.name for evs in match.values() for e in evs)


# ----------------------------------------------------------------------------- field names


def test_key_by_and_timestamp_name_dict_keys() -> None:
    rows = [
        {"name": "a", "ts": 1, "user": "u1"},
        {"name": "a", "ts": 2, "user": "u2"},
        {"name": "b", "ts": 3, "user": "u2"},
    ]
    pattern = (
        Pattern.begin("a")
        .where(lambda e: e["name"] == "a")
        .followed_by("b")
        .where(lambda e: e["name"] == "b")
    )
    stream = CEP.pattern(rows, pattern, key_by="user", timestamp="ts")
    matches = list(stream.process(lambda m, ctx, out: out.collect((ctx.key, m))))
    assert matches == [("u2", {"a": [rows[1]], "b": [rows[2]]})]


def test_key_by_and_timestamp_name_attributes_of_other_events() -> None:
    evs = [Ev("a", 1, key="k1"), Ev("a", 2, key="k2"), Ev("b", 3, key="k2")]
    op = CepOperator(ab_within(10), key_by="key", timestamp="ts", timeout_handling=False)
    out = op.process_elements(evs) + op.flush()
    assert [(o.kind, o.key, o.value) for o in out] == [("match", "k2", {"a": [evs[1]], "b": [evs[2]]})]


def test_an_event_without_the_named_key_field_is_a_bad_record() -> None:
    op = CepOperator(ab_within(10), key_by="user", timestamp="ts", on_error="side_output")
    (out,) = op.process_element({"name": "a", "ts": 1})
    assert out.kind == "bad_record" and out.value.stage == "key"
    assert (
        out.value.error
        == "key extractor failed: LookupError: the event has no field 'user' (no key of that name)"
    )


def test_an_event_without_the_named_timestamp_field_is_a_bad_record() -> None:
    op = CepOperator(ab_within(10), timestamp="time", on_error="side_output")
    (out,) = op.process_element(Ev("a", 1))
    assert out.kind == "bad_record" and out.value.stage == "timestamp"
    assert out.value.error == (
        "timestamp extractor raised LookupError: the event has no field 'time' (no attribute of that name)"
    )


def test_key_by_that_is_neither_callable_nor_a_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"key_by must be a callable or a field name, got 3"):
        CepOperator(ab_within(10), key_by=3)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the package root


def test_bad_record_error_is_importable_from_the_package_root() -> None:
    from flowcep import BadRecordError

    op = CepOperator(ab_within(10), timestamp="ts")
    with pytest.raises(BadRecordError):
        op.process_element({"name": "a"})
    assert "BadRecordError" in flowcep.__all__


# ----------------------------------------------------------------------------- typed output tags


def test_an_output_tag_keeps_its_type_for_documentation() -> None:
    tag = OutputTag("late", str)
    assert (tag.name, tag.type_info) == ("late", str)


def test_output_tags_of_one_name_are_one_output_whatever_their_types() -> None:
    assert OutputTag("late", str) == OutputTag("late") == OutputTag("late", type_info=int)
    assert hash(OutputTag("late", str)) == hash(OutputTag("late"))


# ----------------------------------------------------------------------------- held-back matches


# Flink's documentation of skip strategies, `b+ c` over b1 b2 b3 c with SKIP_TO_FIRST[b]: its table
# lists b1 b2 b3 c, b2 b3 c and b3 c; Flink 2.3 emits the first only. b2 b3 c and b3 c complete,
# but wait behind the partial match b1 b2 b3..., which started earlier, could still take more
# b's and, with no window, never closes.
def b_plus_c() -> Pattern:
    return (
        Pattern.begin("b", AfterMatchSkipStrategy.skip_to_first("b"))
        .where(lambda e: e.name.startswith("b"))
        .one_or_more()
        .next("c")
        .where(is_("c"))
    )


B1_B2_B3_C = [Ev("b1", 1), Ev("b2", 2), Ev("b3", 3), Ev("c", 4)]


def test_matches_held_back_behind_an_open_partial_match_are_counted() -> None:
    op = CepOperator(b_plus_c(), timestamp="ts")
    out = op.process_elements(B1_B2_B3_C) + op.process_watermark(4)
    assert [first_names(o.value) for o in out] == ["b1 b2 b3 c"]
    assert op.stats()["held_back_matches"] == 2


def test_the_end_of_input_warns_of_matches_that_never_came_out() -> None:
    op = CepOperator(b_plus_c(), timestamp="ts")
    op.process_elements(B1_B2_B3_C)
    with pytest.warns(HeldBackMatchesWarning, match=r"^2 completed matches of 1 key never came out"):
        out = op.flush()
    assert [first_names(o.value) for o in out] == ["b1 b2 b3 c"]


def test_a_window_lets_held_back_matches_out_at_the_end_without_a_warning() -> None:
    op = CepOperator(b_plus_c().within(100), timestamp="ts", timeout_handling=False)
    op.process_elements(B1_B2_B3_C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out: list[Output] = op.flush()
    assert [first_names(o.value) for o in out] == ["b1 b2 b3 c", "b2 b3 c", "b3 c"]
    assert op.stats()["held_back_matches"] == 0


def test_cep_pattern_warns_at_the_end_of_its_input() -> None:
    result = CEP.pattern(B1_B2_B3_C, b_plus_c(), timestamp="ts").select(first_names)
    with pytest.warns(HeldBackMatchesWarning):
        assert list(result) == ["b1 b2 b3 c"]
