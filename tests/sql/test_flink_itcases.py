"""Scenarios of Flink's own MATCH_RECOGNIZE integration tests (MatchRecognizeITCase in
flink-table-planner), written as flowcep specifications. Every expected row was produced by
running the same query over the same rows through Flink SQL 2.3 (PyFlink 2.3's table
environment, streaming mode, ``ts`` as rowtime with a watermark, parallelism 1)."""

from __future__ import annotations

from typing import Any

from flowcep.sql import run


def named(*spec: tuple[int, str | None, int]) -> list[dict[str, Any]]:
    """Rows ``(id, name, second)``; ``nullField`` is always NULL."""
    return [{"id": i, "name": n, "nullField": None, "ts": s * 1000} for i, n, s in spec]


def rows(q: str, data: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in run(q, data)]


A_B_C = """SELECT T.aid, T.bid, T.cid FROM MyTable MATCH_RECOGNIZE (ORDER BY ts
    MEASURES A.id AS aid, B.id AS bid, C.id AS cid
    PATTERN (A B C) {within}
    DEFINE A AS name = 'a', B AS name = 'b', C AS name = 'c') AS T"""


def test_strict_contiguity_without_partition_by() -> None:
    data = named(
        (1, "a", 1), (2, "z", 2), (3, "b", 3), (4, "c", 4), (5, "d", 5),
        (6, "a", 6), (7, "b", 7), (8, "c", 8), (9, "h", 9),
    )  # fmt: skip
    assert rows(A_B_C.format(within=""), data) == [(6, 7, 8)]


def test_within_one_minute_drops_the_slower_sequence() -> None:
    data = named(
        (1, "z", 1), (2, "a", 2), (3, "b", 30), (4, "c", 60), (5, "x", 100),
        (6, "a", 101), (7, "b", 131), (8, "c", 162), (9, "z", 200),
    )  # fmt: skip
    q = A_B_C.format(within="WITHIN INTERVAL '1' MINUTE")
    assert rows(q, data) == [(2, 3, 4)]  # 6, 7, 8 span 61 seconds


def test_null_fields_in_define_and_measures() -> None:
    data = named(
        (1, "a", 1), (2, "b", 2), (3, "c", 3), (4, "d", 4), (5, None, 5),
        (6, "a", 6), (7, "b", 7), (8, "c", 8), (9, None, 9),
    )  # fmt: skip
    q = """SELECT T.aid, T.bNull, T.cid, T.aNull FROM MyTable MATCH_RECOGNIZE (ORDER BY ts
        MEASURES A.id AS aid, A.nullField AS aNull, LAST(B.nullField) AS bNull, C.id AS cid
        PATTERN (A B C)
        DEFINE A AS name = 'a' AND nullField IS NULL,
               B AS name = 'b' AND LAST(A.nullField) IS NULL,
               C AS name = 'c') AS T"""
    assert rows(q, data) == [(1, None, 3, None), (6, None, 8, None)]


def test_two_partition_columns_like_and_navigation_before_the_match() -> None:
    spec = [
        (1, "a", "key1", "second_key3"), (2, "b", "key1", "second_key3"),
        (3, "c", "key1", "second_key3"), (4, "d", "key", "second_key"),
        (5, "e", "key", "second_key"), (6, "a", "key2", "second_key4"),
        (7, "b", "key2", "second_key4"), (8, "c", "key2", "second_key4"),
        (9, "f", "key", "second_key"),
    ]  # fmt: skip
    data = [{"id": i, "name": n, "key1": k1, "key2": k2, "ts": i * 1000} for i, n, k1, k2 in spec]
    q = """SELECT * FROM MyTable MATCH_RECOGNIZE (PARTITION BY key1, key2 ORDER BY ts
        MEASURES A.id AS aid, A.key1 AS akey1, LAST(B.id) AS bid, C.id AS cid, C.key2 AS ckey2
        PATTERN (A B C)
        DEFINE A AS name = 'a' AND key1 LIKE '%key%' AND id > 0,
               B AS name = 'b' AND LAST(A.name, 2) IS NULL,
               C AS name = 'c' AND LAST(A.name) = 'a') AS T"""
    assert rows(q, data) == [
        ("key1", "second_key3", 1, "key1", 2, 3, "second_key3"),
        ("key2", "second_key4", 6, "key2", 7, 8, "second_key4"),
    ]


def acme(prices: list[int], taxes: list[int]) -> list[dict[str, Any]]:
    """Rows with ``id`` and ``tstamp`` counting from 1; ``ts`` (milliseconds) equals ``tstamp``."""
    return [
        {"id": i, "symbol": "ACME", "tstamp": i, "price": p, "tax": t, "ts": i}
        for i, (p, t) in enumerate(zip(prices, taxes), 1)
    ]


def test_first_and_last_of_expressions_over_a_falling_run() -> None:
    data = acme([19, 17, 13, 20, 20, 26, 20, 25], [1, 2, 3, 4, 5, 6, 7, 8])
    q = """SELECT * FROM Ticker MATCH_RECOGNIZE (ORDER BY ts
        MEASURES FIRST(DOWN.tstamp) AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
                 UP.tstamp AS end_tstamp, FIRST(DOWN.price + DOWN.tax + 1) AS bottom_total,
                 UP.price + UP.tax AS end_total
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (DOWN{2,} UP)
        DEFINE DOWN AS price < LAST(DOWN.price, 1) OR LAST(DOWN.price, 1) IS NULL,
               UP AS price < FIRST(DOWN.price)) AS T"""
    assert rows(q, data) == [(6, 7, 8, 33, 33)]


def test_offsets_of_first_and_last_over_the_whole_match() -> None:
    data = acme([20, 19, 18, 17, 16, 15, 14, 20], [0] * 8)
    q = """SELECT * FROM Ticker MATCH_RECOGNIZE (ORDER BY ts
        MEASURES FIRST(id, 0) AS id0, FIRST(id, 1) AS id1, FIRST(id, 3) AS id3,
                 FIRST(id, 7) AS id7, LAST(id, 0) AS id8, LAST(id, 1) AS id9, LAST(id, 7) AS id15
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (DOWN{2,} UP)
        DEFINE DOWN AS price < LAST(price, 1) OR LAST(price, 1) IS NULL,
               UP AS price = FIRST(price) AND price > FIRST(price, 3) AND price = LAST(price, 7)) AS T"""
    assert rows(q, data) == [(1, 2, 4, 8, 8, 7, 1)]
