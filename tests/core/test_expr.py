"""The expression language: SQL values (NULL, three-valued logic, Java integer arithmetic),
navigation and aggregates over pattern variables, compiled once to plain functions."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from flowcep.expr import (
    ANY,
    ATTR,
    Aggregate,
    And,
    Between,
    Binary,
    Call,
    Case,
    ExpressionCondition,
    ExpressionError,
    Field,
    In,
    IsNull,
    Like,
    Literal,
    MatchRowtime,
    Navigation,
    Not,
    Or,
    compile_condition_function,
    compile_measures_function,
)


def value(expr: Any, **row: Any) -> Any:
    """The SQL value of ``expr`` over one row (a measure over a one-row match)."""
    return compile_measures_function([expr], ["A"])({"A": [row]})[0]


class Ctx:
    def __init__(self, match: dict[str, list[Any]]) -> None:
        self.match = match

    def get_events_for_pattern(self, name: str) -> list[Any]:
        return list(self.match.get(name, ()))


NULL, TRUE, FALSE = Literal(None), Literal(True), Literal(False)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (And((TRUE, NULL)), None),
        (And((FALSE, NULL)), False),
        (And((NULL, FALSE)), False),
        (Or((TRUE, NULL)), True),
        (Or((NULL, TRUE)), True),
        (Or((FALSE, NULL)), None),
        (Not(NULL), None),
        (Not(FALSE), True),
        (Binary("<", NULL, Literal(1)), None),
        (Binary("+", Literal(1), NULL), None),
        (IsNull(NULL), True),
        (IsNull(Literal(0), negated=True), True),
    ],
)
def test_three_valued_logic(expr: Any, expected: Any) -> None:
    assert value(expr) is expected


@pytest.mark.parametrize(
    ("op", "left", "right", "expected"),
    [
        ("/", 7, 2, 3),
        ("/", -7, 2, -3),
        ("/", 7, -2, -3),
        ("/", 7.0, 2, 3.5),
        ("%", -7, 3, -1),
        ("%", 7, -3, 1),
    ],
)
def test_integer_division_truncates_toward_zero_as_java_does(
    op: str, left: Any, right: Any, expected: Any
) -> None:
    assert value(Binary(op, Literal(left), Literal(right))) == expected


def test_division_by_zero_raises() -> None:
    with pytest.raises(ZeroDivisionError):
        value(Binary("/", Field("price"), Literal(0)), price=3)


def test_in_like_between_case_and_functions() -> None:
    assert value(In(Field("s"), (Literal("a"), Literal("b"))), s="b") is True
    assert value(In(Field("s"), (Literal("a"), NULL)), s="c") is None
    assert value(In(Field("s"), (Literal("a"),), negated=True), s="c") is True
    assert value(Like(Field("s"), "X_Z%"), s="XYZ-1") is True
    assert value(Like(Field("s"), "X_Z%"), s="XZ") is False
    assert value(Like(Field("s"), "a!%", escape="!"), s="a%") is True
    assert value(Between(Field("p"), Literal(1), Literal(3)), p=3) is True
    assert value(Between(Field("p"), Literal(1), Literal(3), negated=True), p=3) is False
    case = Case(((Binary(">", Field("p"), Literal(12)), Literal("hi")),), Literal("lo"))
    assert [value(case, p=p) for p in (12, 13, None)] == ["lo", "hi", "lo"]
    assert value(Call("UPPER", (Field("s"),)), s="xyz") == "XYZ"
    assert value(Call("SUBSTRING", (Field("s"), Literal(2), Literal(2))), s="abcd") == "bc"
    assert value(Call("CHAR_LENGTH", (Field("s"),)), s=None) is None
    assert value(Call("COALESCE", (Field("s"), Literal("d"))), s=None) == "d"
    assert value(Binary("||", Field("s"), Literal(1)), s="a") == "a1"


def test_aggregates_skip_nulls_and_avg_of_integers_is_an_integer() -> None:
    fn = compile_measures_function(
        [
            Aggregate("SUM", Field("p", "A"), "A"),
            Aggregate("AVG", Field("p", "A"), "A"),
            Aggregate("COUNT", Field("p", "A"), "A"),
            Aggregate("COUNT", None, None),
            Aggregate("MIN", Field("p"), None),
            Aggregate("MAX", Field("p", "B"), "B"),
            Aggregate("SUM", Field("p", "B"), "B"),
        ],
        ["A", "B"],
    )
    match = {"A": [{"p": 3}, {"p": None}, {"p": 4}], "B": [{"p": 1}]}
    assert fn(match) == (7, 3, 2, 4, 1, 1, 1)
    assert fn({"A": [{"p": 3}]}) == (3, 3, 1, 1, 3, None, None)


def test_navigation_counts_from_either_end_and_is_null_past_it() -> None:
    fn = compile_measures_function(
        [
            Navigation("FIRST", Field("p", "A"), "A", 0),
            Navigation("FIRST", Field("p", "A"), "A", 1),
            Navigation("LAST", Field("p", "A"), "A", 0),
            Navigation("LAST", Binary("*", Field("p", "A"), Field("t", "A")), "A", 2),
            Navigation("LAST", Field("p", "A"), "A", 3),
            Field("p", "A"),
            Field("p"),
            MatchRowtime(),
        ],
        ["A", "B"],
        time_field="t",
    )
    match = {"A": [{"p": 1, "t": 10}, {"p": 2, "t": 11}, {"p": 3, "t": 12}], "B": [{"p": 9, "t": 13}]}
    assert fn(match) == (1, 2, 3, 10, None, 3, 9, 13)


def test_a_condition_on_the_row_alone_is_simple() -> None:
    fn, iterative = compile_condition_function(Binary(">", Field("price", "A"), Literal(10)), "A", ["A", "B"])
    assert not iterative
    assert [fn({"price": p}) for p in (10, 11)] == [False, True]
    assert not fn({"price": None})


def test_a_condition_counts_the_row_being_tested_as_its_variables_last_row() -> None:
    # B AS B.price > A.price AND SUM(price) < 100 AND SUM(B.price) < 80 (Flink's documentation)
    cond = And(
        (
            Binary(">", Field("price", "B"), Field("price", "A")),
            Binary("<", Aggregate("SUM", Field("price"), None), Literal(100)),
            Binary("<", Aggregate("SUM", Field("price", "B"), "B"), Literal(80)),
        )
    )
    fn, iterative = compile_condition_function(cond, "B", ["A", "B"])
    assert iterative
    ctx = Ctx({"A": [{"price": 10}], "B": [{"price": 15}, {"price": 20}]})
    assert fn({"price": 31}, ctx)
    ctx = Ctx({"A": [{"price": 10}], "B": [{"price": 15}, {"price": 20}, {"price": 31}]})
    assert not fn({"price": 35}, ctx)  # SUM(price) = 111


def test_not_of_null_rejects_the_row() -> None:
    fn, _ = compile_condition_function(Not(Binary(">", Field("price"), Literal(1))), "A", ["A"])
    assert not fn({"price": None})
    assert fn({"price": 0})


def test_objects_are_read_by_attribute() -> None:
    fn, _ = compile_condition_function(Binary("=", Field("class"), Literal("x")), "A", ["A"], access=ATTR)
    assert fn(SimpleNamespace(**{"class": "x"}))


def test_any_access_reads_dicts_by_key_and_other_rows_by_attribute() -> None:
    tree = And((Binary("=", Field("class"), Literal("x")), Binary(">", Field("price"), Field("price", "A"))))
    fn, iterative = compile_condition_function(tree, "B", ["A", "B"], access=ANY)
    assert iterative
    earlier = Ctx({"A": [SimpleNamespace(price=3)]})
    assert fn({"class": "x", "price": 4}, earlier)
    assert fn(SimpleNamespace(**{"class": "x", "price": 4}), earlier)
    assert not fn(SimpleNamespace(**{"class": "x", "price": 2}), earlier)


def test_a_pickled_condition_keeps_its_text_and_dialect() -> None:
    import pickle

    cond = ExpressionCondition(
        Binary("=", Field("a"), Literal(1)), "A", ["A"], text="a == 1", dialect="AVIATOR"
    )
    again = pickle.loads(pickle.dumps(cond))
    assert (again, again.text, again.dialect) == (cond, "a == 1", "AVIATOR")
    assert again.test({"a": 1})


def test_expression_conditions_compare_by_tree() -> None:
    tree = Binary(">", Field("price"), Literal(1))
    assert ExpressionCondition(tree, "A", ["A"]) == ExpressionCondition(tree, "A", ["A"])
    assert ExpressionCondition(tree, "A", ["A"]) != ExpressionCondition(tree, "A", ["A", "B"])


def test_unknown_variables_and_mixed_navigation_are_errors() -> None:
    with pytest.raises(ExpressionError, match="unknown pattern variable 'C'"):
        compile_condition_function(IsNull(Field("p", "C")), "A", ["A", "B"])
    with pytest.raises(ExpressionError, match="one pattern variable"):
        compile_measures_function(
            [Navigation("LAST", Binary("*", Field("p", "A"), Field("t", "B")), "A")], ["A", "B"]
        )
    with pytest.raises(ExpressionError, match="only allowed in MEASURES"):
        compile_condition_function(IsNull(MatchRowtime()), "A", ["A"])


def test_generated_source_is_registered_for_tracebacks() -> None:
    import linecache

    fn, _ = compile_condition_function(Binary(">", Field("price"), Literal(1)), "A", ["A"])
    filename = fn.__code__.co_filename
    assert filename.startswith("<flowcep-condition-")
    assert "def condition(e):" in "".join(linecache.getlines(filename))
