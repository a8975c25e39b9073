"""The operator's output records."""

from __future__ import annotations

import attrs
import pytest

from flowcep.runtime import Output
from flowcep.runtime.output import make_output


def test_the_hot_path_constructor_makes_the_record_the_class_makes() -> None:
    match = {"a": ["e1"], "b": ["e2"]}
    made = make_output("match", "k", match, 7)
    assert type(made) is Output
    assert made == Output("match", "k", match, 7)
    assert (made.kind, made.key, made.value, made.timestamp) == ("match", "k", match, 7)
    assert repr(made) == repr(Output("match", "k", match, 7))
    assert attrs.asdict(make_output("timeout", None, "x", None)) == {
        "kind": "timeout",
        "key": None,
        "value": "x",
        "timestamp": None,
    }


def test_a_record_from_the_hot_path_constructor_is_frozen() -> None:
    made = make_output("match", "k", {}, 7)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.kind = "timeout"  # type: ignore[misc]
