"""Dewey versions of runs (Flink's DeweyNumberTest; seed 001's truth table)."""

import pytest

from flowcep.sharedbuffer.dewey import add_stage, dewey, increase, is_compatible, parse, to_string


def v(text):
    return parse(text)


def test_parse_and_to_string_round_trip():
    assert parse("1.0.2") == dewey(1, 0, 2)
    assert to_string(dewey(1, 0, 2)) == "1.0.2"
    assert to_string(parse("7")) == "7"


def test_generation():
    # DeweyNumberTest.testDeweyNumberGeneration
    start = dewey(1)
    increased = increase(start)
    assert increased == v("2")
    assert add_stage(increased) == v("2.0")
    start_stage = add_stage(start)
    assert start_stage == v("1.0")
    assert increase(start_stage) == v("1.1")
    assert add_stage(increase(start_stage)) == v("1.1.0")
    assert increase(add_stage(increase(start_stage)), 2) == v("1.1.2")


def test_increase_does_not_mutate_and_bumps_only_the_last_digit():
    a = v("3.4.5")
    assert increase(a) == v("3.4.6")
    assert increase(a, 3) == v("3.4.8")
    assert a == v("3.4.5")


def test_increase_by_zero_is_the_same_version():
    # DeweyNumberTest.testZeroSplitsDeweyNumber
    assert increase(v("1.0.4"), 0) == v("1.0.4")


def test_add_stage_appends_a_zero():
    assert add_stage(v("2.3")) == v("2.3.0")


# seed 001: isCompatibleWith(this, other)
#  - this longer than other: compatible iff other is a prefix of this
#  - same length: all but the last digit equal and this.last >= other.last
#  - this shorter: never compatible
TRUTH_TABLE = [
    ("1", "1", True),
    ("2", "1", True),
    ("1", "2", False),
    ("1.0", "1", True),
    ("1.0.0", "1", True),
    ("1.0.0", "1.0", True),
    ("1.1", "1", True),
    ("2.0", "1", False),
    ("1", "1.0", False),
    ("1.0", "1.0.0", False),
    ("1.0.1", "1.0.0", True),
    ("1.0.0", "1.0.1", False),
    ("1.1", "1.0", True),
    ("1.0", "1.1", False),
    ("1.0.0", "1.1", False),
    ("1.1.0", "1.1", True),
    ("2.0.0", "1.0", False),  # seed 001: e6 -> e4 (2.0.0) must not continue over e4 -> e3 (1.0)
    ("1.2.3", "1.2.3", True),
    ("1.2.4", "1.2.3", True),
    ("1.3.0", "1.2.3", False),
    ("1.2.3.0.7", "1.2.3", True),
    ("1.2.3.0.7", "1.2.4", False),
]


@pytest.mark.parametrize(("this", "other", "expected"), TRUTH_TABLE)
def test_compatibility_truth_table(this, other, expected):
    assert is_compatible(v(this), v(other)) is expected


def test_compatibility_is_reflexive():
    for text in ["1", "1.0", "3.2.1.0"]:
        assert is_compatible(v(text), v(text))


def test_a_branch_is_compatible_with_its_ancestors_but_not_its_siblings_descendants():
    root = v("1")
    stage = add_stage(root)  # 1.0
    branch_a = add_stage(stage)  # 1.0.0
    branch_b = add_stage(increase(stage))  # 1.1.0
    assert is_compatible(branch_a, stage) and is_compatible(branch_a, root)
    assert is_compatible(branch_b, increase(stage)) and is_compatible(branch_b, root)
    assert not is_compatible(branch_b, stage)  # 1.1.0 does not descend from 1.0
    assert not is_compatible(branch_a, increase(stage))  # 1.0.0 does not descend from 1.1
