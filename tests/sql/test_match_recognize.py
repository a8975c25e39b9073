"""MATCH_RECOGNIZE over Python rows. The cases are those of Flink's "Pattern Recognition" page
and more; every expected row (and every rejection) was produced by Flink SQL 2.3 itself
(PyFlink 2.3's table environment, streaming mode, rowtime = the ``ts`` column, parallelism 1)."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest

from flowcep import FlinkRuntimeException
from flowcep.sql import SqlError, run


def ticker(
    prices: list[int], taxes: list[int] | None = None, symbol: str = "XYZ", step: int = 1000
) -> list[dict[str, Any]]:
    taxes = taxes or [1] * len(prices)
    return [
        {"symbol": symbol, "ts": 1000 + i * step, "price": p, "tax": t}
        for i, (p, t) in enumerate(zip(prices, taxes))
    ]


def query(body: str, order: str = "ORDER BY ts") -> str:
    if "DEFINE" not in body:
        body += " DEFINE A AS TRUE"  # Flink SQL's grammar requires DEFINE
    return f"SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol {order} {body}) AS T"


def rows(q: str, data: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in run(q, data)]


AVG_ROWS = ticker([12, 17, 13, 16, 25, 2, 4, 10, 15, 25, 25, 30])
SKIP_ROWS = ticker([7, 9, 10, 5, 10, 7, 14], [1, 2, 1, 2, 2, 2, 2])
GREEDY_ROWS = ticker([10, 11, 12, 13, 14, 16], [1, 2, 1, 2, 1, 2])


def test_falling_prices_the_documentation_example() -> None:
    data = ticker([12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19], symbol="ACME")
    q = query(
        """MEASURES START_ROW.ts AS start_tstamp, LAST(PRICE_DOWN.ts) AS bottom_tstamp, LAST(PRICE_UP.ts) AS end_tstamp
        ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP
        PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
        DEFINE PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price)
                             OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
               PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)"""
    )
    assert list(run(q, data)) == [
        {"symbol": "ACME", "start_tstamp": 5000, "bottom_tstamp": 8000, "end_tstamp": 9000}
    ]


def test_avg_in_define_and_measures_of_integers_is_an_integer() -> None:
    q = query(
        "MEASURES FIRST(A.ts) AS s, LAST(A.ts) AS e, AVG(A.price) AS ap ONE ROW PER MATCH "
        "AFTER MATCH SKIP PAST LAST ROW PATTERN (A+ B) DEFINE A AS AVG(A.price) < 15"
    )
    assert rows(q, AVG_ROWS) == [("XYZ", 1000, 4000, 14), ("XYZ", 6000, 11000, 13)]
    floats = [dict(r, price=float(r["price"])) for r in AVG_ROWS]
    assert rows(q, floats) == [("XYZ", 1000, 4000, 14.5), ("XYZ", 6000, 11000, 13.5)]


SKIP_QUERY = (
    "MEASURES SUM(A.price) AS sumPrice, FIRST(ts) AS startTime, LAST(ts) AS endTime "
    "ONE ROW PER MATCH {} PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"
)


@pytest.mark.parametrize(
    ("skip", "expected"),
    [
        ("AFTER MATCH SKIP PAST LAST ROW", [(26, 1000, 4000), (17, 5000, 7000)]),
        (
            "AFTER MATCH SKIP TO NEXT ROW",
            [(26, 1000, 4000), (24, 2000, 5000), (25, 3000, 6000), (22, 4000, 7000), (17, 5000, 7000)],
        ),
        ("AFTER MATCH SKIP TO LAST A", [(26, 1000, 4000), (25, 3000, 6000), (17, 5000, 7000)]),
        # no AFTER MATCH clause: Flink SQL skips to the next row
        ("", [(26, 1000, 4000), (24, 2000, 5000), (25, 3000, 6000), (22, 4000, 7000), (17, 5000, 7000)]),
    ],
)
def test_after_match_skip_strategies(skip: str, expected: list[tuple[int, int, int]]) -> None:
    assert rows(query(SKIP_QUERY.format(skip)), SKIP_ROWS) == [("XYZ", *e) for e in expected]


def test_skip_to_first_of_the_first_variable_fails_at_run_time() -> None:
    q = query(SKIP_QUERY.format("AFTER MATCH SKIP TO FIRST A"))
    with pytest.raises(FlinkRuntimeException, match="Could not skip to first element of a match"):
        list(run(q, SKIP_ROWS))


def test_measures_over_the_whole_match_and_match_rowtime() -> None:
    q = query(
        "MEASURES SUM(A.price) AS sumPrice, MATCH_ROWTIME() AS mrt, price AS lastp, COUNT(*) AS c, "
        "COUNT(A.price) AS ca, MIN(price) AS mn, MAX(A.price) AS mx "
        "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST A PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30"
    )
    assert rows(q, SKIP_ROWS) == [
        ("XYZ", 26, 4000, 5, 4, 3, 5, 10),
        ("XYZ", 25, 6000, 7, 4, 3, 5, 10),
        ("XYZ", 17, 7000, 14, 3, 2, 7, 10),
    ]


def test_greedy_and_reluctant_quantifiers() -> None:
    q = (
        "MEASURES C.price AS lastPrice ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B*{} C) "
        "DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12"
    )
    data = ticker([10, 11, 12, 13, 14, 16])
    assert rows(query(q.format("")), data) == [("XYZ", 16)]
    assert rows(query(q.format("?")), data) == [("XYZ", 13), ("XYZ", 16)]


def test_a_greedy_loop_takes_rows_the_next_variable_wants() -> None:
    # 16 is both an A and a B: the greedy A{2,} keeps it, and no B follows (as Flink CEP does)
    q = query(
        "MEASURES FIRST(A.price) AS p, LAST(A.price) AS q ONE ROW PER MATCH "
        "PATTERN (A{2,} B) DEFINE A AS A.price > 10, B AS B.price > 15"
    )
    assert rows(q, GREEDY_ROWS) == []


def test_times_with_logical_offsets_past_the_rows() -> None:
    q = query(
        "MEASURES A.price AS p, LAST(A.price, 1) AS q, FIRST(A.price, 5) AS r, A.tax AS t "
        "ONE ROW PER MATCH PATTERN (A{3} B) DEFINE A AS A.price > 10"
    )
    assert rows(q, GREEDY_ROWS) == [("XYZ", 13, 12, None, 2), ("XYZ", 14, 13, None, 1)]


def test_reluctant_loop_with_aggregates_over_its_rows() -> None:
    q = query(
        "MEASURES A.price AS p, LAST(B.price) - FIRST(B.price) AS d, AVG(B.price) AS av, MIN(B.price) AS mn "
        "ONE ROW PER MATCH PATTERN (A B+? C) DEFINE A AS A.price = 10, B AS B.price < 14, C AS C.price >= 14"
    )
    assert rows(q, GREEDY_ROWS) == [("XYZ", 10, 2, 12, 11)]


def test_last_of_the_default_variable_skips_an_absent_optional_row() -> None:
    q = query(
        "MEASURES A.price AS p, C.price AS cp ONE ROW PER MATCH PATTERN (A B? C) "
        "DEFINE B AS B.price > 100, C AS LAST(price, 1) < C.price"
    )
    assert rows(q, GREEDY_ROWS) == [
        ("XYZ", 10, 11),
        ("XYZ", 11, 12),
        ("XYZ", 12, 13),
        ("XYZ", 13, 14),
        ("XYZ", 14, 16),
    ]


def test_a_variable_not_matched_yet_is_null_in_a_condition() -> None:
    null_b = query(
        "MEASURES A.price AS p, B.price AS bp ONE ROW PER MATCH PATTERN (A B) DEFINE A AS B.price IS NULL AND A.price > 10"
    )
    assert rows(null_b, GREEDY_ROWS) == [("XYZ", 11, 12), ("XYZ", 12, 13), ("XYZ", 13, 14), ("XYZ", 14, 16)]
    compared = query(
        "MEASURES A.price AS p ONE ROW PER MATCH PATTERN (A B) DEFINE A AS A.price > 10 AND B.price > 3"
    )
    assert rows(compared, GREEDY_ROWS) == []
    empty = query(
        "MEASURES A.price AS p ONE ROW PER MATCH PATTERN (A B) "
        "DEFINE A AS A.price > 10 AND LAST(B.price) IS NULL AND SUM(B.price) IS NULL AND COUNT(B.price) = 0"
    )
    assert rows(empty, GREEDY_ROWS) == [("XYZ", 11), ("XYZ", 12), ("XYZ", 13), ("XYZ", 14)]


def test_scalar_operators_and_functions() -> None:
    q = query(
        "MEASURES A.price AS p, B.price AS b ONE ROW PER MATCH PATTERN (A B) DEFINE B AS B.price > A.price + 1 OR B.tax = 2"
    )
    assert rows(q, GREEDY_ROWS) == [("XYZ", 10, 11), ("XYZ", 12, 13), ("XYZ", 14, 16)]
    q = query(
        "MEASURES A.price AS p ONE ROW PER MATCH PATTERN (A B) DEFINE A AS A.price > 10, "
        "B AS B.price IN (12, 14, 16) AND B.symbol LIKE 'X%' AND UPPER(B.symbol) = 'XYZ' AND CHAR_LENGTH(B.symbol) = 3"
    )
    assert rows(q, GREEDY_ROWS) == [("XYZ", 11), ("XYZ", 13), ("XYZ", 14)]
    q = query(
        "MEASURES A.price AS p, CASE WHEN A.price > 12 THEN 'hi' ELSE 'lo' END AS lvl ONE ROW PER MATCH "
        "PATTERN (A B) DEFINE B AS B.price BETWEEN 12 AND 14"
    )
    assert rows(q, GREEDY_ROWS) == [("XYZ", 11, "lo"), ("XYZ", 12, "lo"), ("XYZ", 13, "hi")]


def test_integer_arithmetic_truncates_as_flink_does() -> None:
    q = query(
        "MEASURES A.price / 2 AS h, A.price % 4 AS m, -A.price / 4 AS neg ONE ROW PER MATCH PATTERN (A) DEFINE A AS A.price > 9"
    )
    assert rows(q, SKIP_ROWS) == [("XYZ", 5, 2, -2), ("XYZ", 5, 2, -2), ("XYZ", 7, 2, -3)]


def test_within_drops_a_match_spanning_the_whole_interval() -> None:
    data = ticker([10, 20, 30, 40, 50], step=1500)
    q = "MEASURES A.price AS a, C.price AS c ONE ROW PER MATCH PATTERN (A B C) WITHIN INTERVAL '{}' SECOND DEFINE A AS A.price > 0"
    assert rows(query(q.format(3)), data) == []  # A to C is exactly 3 s
    assert rows(query(q.format(4)), data) == [("XYZ", 10, 30), ("XYZ", 20, 40), ("XYZ", 30, 50)]


def test_secondary_order_by_sorts_rows_of_one_time() -> None:
    data = [{"k": 1, "ts": 5, "price": p} for p in (1, 3, 2)]
    q = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts, price DESC MEASURES A.price AS a, B.price AS b PATTERN (A B) DEFINE A AS TRUE) AS T"
    assert rows(q, data) == [(3, 2), (2, 1)]


def test_partitions_match_separately_and_select_picks_and_renames_columns() -> None:
    data = ticker([1, 5, 2], symbol="a") + ticker([9, 3, 4], symbol="b")
    data.sort(key=lambda r: r["ts"])
    q = (
        "SELECT T.up AS rise, symbol FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts "
        "MEASURES B.price - A.price AS up PATTERN (A B) DEFINE B AS B.price > A.price) AS T"
    )
    assert list(run(q, data)) == [{"rise": 4, "symbol": "a"}, {"rise": 1, "symbol": "b"}]


def test_objects_and_datetimes() -> None:
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    data = [SimpleNamespace(ts=start.replace(minute=i), price=p) for i, p in enumerate([3, 1, 2])]
    q = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES B.price AS low, MATCH_ROWTIME() AS at PATTERN (A B C) DEFINE B AS B.price < A.price, C AS C.price > B.price)"
    assert list(run(q, data)) == [{"low": 1, "at": start.replace(minute=2)}]


def test_results_come_lazily() -> None:
    def endless() -> Any:
        i = 0
        while True:
            yield {"ts": i, "price": i % 3}
            i += 1

    q = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.ts AS at PATTERN (A B) DEFINE A AS A.price = 2, B AS B.price = 0)"
    results = run(q, endless())
    assert [next(results) for _ in range(3)] == [{"at": 2}, {"at": 5}, {"at": 8}]


def test_late_rows_go_to_on_late() -> None:
    late: list[Any] = []
    data = [{"ts": 10, "p": 1}, {"ts": 20, "p": 2}, {"ts": 5, "p": 3}, {"ts": 30, "p": 4}]
    q = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.p AS a, B.p AS b PATTERN (A B) DEFINE B AS TRUE)"
    assert rows(q, data) == [(1, 2), (2, 4)]
    assert list(run(q, data, on_late=late.append)) == [{"a": 1, "b": 2}, {"a": 2, "b": 4}]
    assert late == [{"ts": 5, "p": 3}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("PATTERN (A B*) DEFINE B AS B.price < 15", "Greedy quantifiers are not allowed as the last element"),
        ("PATTERN (A B?? C)", "Reluctant optional variables are not supported yet"),
        ("PATTERN (A | B)", "alternation"),
        ("PATTERN ((A B)+ C)", "Group patterns are not supported yet"),
        ("PATTERN (PERMUTE(A, B))", "PERMUTE"),
        ("PATTERN (A {- X*? -} B)", "exclusion"),
        ("PATTERN (A*)", "empty matches"),
        ("PATTERN (A B{0})", "The to should be a number greater than or equal to from: 1"),
        ("PATTERN (A{,2} B)", "The from should be a positive number greater than 0"),
        ("PATTERN (A B A)", "Pattern variables must be unique"),
        ("AFTER MATCH SKIP TO LAST Q PATTERN (A B)", "unknown pattern variable 'Q'"),
        ("ALL ROWS PER MATCH PATTERN (A B)", "ALL ROWS PER MATCH is not supported"),
        ("PATTERN (A B) DEFINE B AS B.price > PREV(B.price)", "physical offsets"),
        ("PATTERN (A B) DEFINE A AS NEXT(A.price) > 10", "physical offsets"),
        ("MEASURES PREV(A.price) AS pp PATTERN (A B)", "physical offsets"),
        ("MEASURES CLASSIFIER() AS p PATTERN (A B)", "CLASSIFIER"),
        ("MEASURES MATCH_NUMBER() AS p PATTERN (A B)", "MATCH_NUMBER"),
        ("MEASURES SUM(A.price + B.price) AS p PATTERN (A B)", "Multiple pattern variables"),
        ("MEASURES FIRST(A.price * B.tax) AS p PATTERN (A B)", "Multiple pattern variables"),
        ("MEASURES COUNT(DISTINCT A.price) AS p PATTERN (A B)", "DISTINCT aggregations are not supported"),
        ("MEASURES A.price AS p PATTERN (A B) DEFINE C AS C.price > 1", "C is not a variable of PATTERN"),
        ("MEASURES A.price, B.price AS b PATTERN (A B)", "needs a name"),
        ("MEASURES FOO(A.price) AS p PATTERN (A B)", "function FOO is not supported"),
    ],
)
def test_what_flink_sql_rejects_is_rejected_with_the_construct_named(body: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        list(run(query(body), GREEDY_ROWS))


@pytest.mark.parametrize(
    ("order", "message"),
    [("ORDER BY rowtime DESC", "ascending on time"), ("", "ORDER BY is required")],
)
def test_order_by_must_start_ascending_on_time(order: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        list(run(query("PATTERN (A B)", order=order), GREEDY_ROWS))


def test_define_is_required_as_in_flink_sqls_grammar() -> None:
    with pytest.raises(SqlError, match="needs a DEFINE clause"):
        list(
            run(
                "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.price AS a PATTERN (A B))",
                GREEDY_ROWS,
            )
        )


def test_other_clauses_around_match_recognize_are_rejected() -> None:
    with pytest.raises(SqlError, match="WHERE is not supported"):
        list(run(query("PATTERN (A B)") + " WHERE T.symbol = 'x'", GREEDY_ROWS))
