"""The JSON lines of ``flowcep run`` are written by an encoder made once, and a result line from
its parts; the text is what ``json.dumps`` with the command's options writes."""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from flowcep.cli_support.output import dumps, result_line, to_jsonable
from flowcep.cli_support.records import Record


def reference(obj: object) -> str:
    """``json.dumps`` as the command always called it (NaN and infinities as null)."""

    def clean(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    options = {"default": to_jsonable, "ensure_ascii": False, "separators": (", ", ": ")}
    try:
        return json.dumps(obj, allow_nan=False, **options)  # type: ignore[arg-type]
    except ValueError:
        return json.dumps(clean(obj), **options)  # type: ignore[arg-type]


@dataclasses.dataclass
class Point:
    x: int
    y: float


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),
    st.sampled_from([datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc), Point(1, 2.5), {1, 2}]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        st.dictionaries(st.text(max_size=5), inner, max_size=4).map(Record),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(value=VALUES)
def test_a_value_is_written_as_json_dumps_writes_it(value):
    assert dumps(value) == reference(value)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["match", "timeout"]),
    key=VALUES,
    timestamp=st.one_of(st.integers(), st.none()),
    value=VALUES,
)
def test_a_result_line_is_the_result_record_written_whole(kind, key, timestamp, value):
    whole = {"kind": kind, "key": key, "timestamp": timestamp, "match": value}
    assert result_line(kind, key, timestamp, "match", value) == reference(whole) + "\n"


def test_a_match_of_records_is_one_line():
    a = Record(ts=1, user="u1", amount=None)
    b = Record(ts=2, user="u1", amount=float("nan"))
    assert result_line("match", "u1", 2, "match", {"a": [a], "b": [b]}) == (
        '{"kind": "match", "key": "u1", "timestamp": 2, "match": '
        '{"a": [{"ts": 1, "user": "u1", "amount": null}], "b": [{"ts": 2, "user": "u1", "amount": null}]}}\n'
    )
