"""``flowcep.connectors.jsontext.dumps``: row values as the ``events`` column's JSON (pure Python)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from flowcep.connectors.jsontext import dumps, row_encoder


def test_times_are_iso_text_decimals_numbers_and_binary_base64() -> None:
    row = {
        "at": datetime(2026, 3, 2, 11, 31, 13, tzinfo=timezone.utc),
        "day": date(2026, 3, 2),
        "amount": Decimal("12.50"),
        "blob": b"\x00\xff",
    }
    assert (
        dumps(row)
        == '{"at": "2026-03-02T11:31:13+00:00", "day": "2026-03-02", "amount": 12.5, "blob": "AP8="}'
    )


def test_nan_and_infinities_are_null() -> None:
    assert dumps({"a": [float("nan"), 1.5, float("inf")]}) == '{"a": [null, 1.5, null]}'


def test_text_is_written_as_is() -> None:
    assert dumps({"city": "Zürich"}) == '{"city": "Zürich"}'


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.binary(max_size=4),
    st.lists(st.one_of(st.integers(), st.floats(), st.text()), max_size=3),
    st.tuples(st.integers(), st.text()),
)


@given(
    st.lists(st.text(max_size=5), min_size=0, max_size=6, unique=True),
    st.data(),
    st.integers(0, 2),
)
def test_a_row_encoder_writes_the_text_dumps_writes_for_the_row_as_a_dict(
    fields: list[str], data: st.DataObject, extra: int
) -> None:
    encode = row_encoder(tuple(fields), extra)
    assert encode is not None
    row = tuple(data.draw(values) for _ in fields) + tuple(range(extra))
    assert encode(row) == dumps(dict(zip(fields, row)))


def test_a_row_encoder_writes_names_with_quotes_and_percent_signs_as_json_does() -> None:
    encode = row_encoder(('say "hi"', "100%", "%s"))
    assert encode is not None
    assert encode(("x", 1.5, None)) == '{"say \\"hi\\"": "x", "100%": 1.5, "%s": null}'


def test_no_row_encoder_for_fields_sharing_a_name() -> None:
    assert row_encoder(("a", "a")) is None
