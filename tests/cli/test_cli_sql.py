"""``flowcep sql QUERY-FILE INPUT``: result rows as JSON lines, errors naming the construct."""

from __future__ import annotations

import json

from flowcep.cli import main

CSV = """symbol,ts,price
XYZ,2018-09-17T10:00:01Z,7
XYZ,2018-09-17T10:00:02Z,9
XYZ,2018-09-17T10:00:03Z,10
XYZ,2018-09-17T10:00:04Z,5
XYZ,2018-09-17T10:00:05Z,10
XYZ,2018-09-17T10:00:06Z,7
XYZ,2018-09-17T10:00:07Z,14
"""

QUERY = """SELECT * FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY ts
    MEASURES SUM(A.price) AS sumPrice, FIRST(ts) AS startTime, LAST(ts) AS endTime
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A+ C)
    DEFINE A AS SUM(A.price) < 30
)"""


def test_sql_writes_one_json_line_per_match(tmp_path, capsys):
    (tmp_path / "t.csv").write_text(CSV)
    (tmp_path / "q.sql").write_text(QUERY)
    assert main(["sql", str(tmp_path / "q.sql"), str(tmp_path / "t.csv")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"symbol": "XYZ", "sumPrice": 26, "startTime": 1537178401000, "endTime": 1537178404000},
        {"symbol": "XYZ", "sumPrice": 17, "startTime": 1537178405000, "endTime": 1537178407000},
    ]


def test_sql_rejects_what_flink_sql_rejects_with_exit_status_3(tmp_path, capsys):
    (tmp_path / "t.csv").write_text(CSV)
    (tmp_path / "q.sql").write_text(QUERY.replace("A+ C", "A | C"))
    assert main(["sql", str(tmp_path / "q.sql"), str(tmp_path / "t.csv")]) == 3
    assert "alternation '|' is not supported" in capsys.readouterr().err
