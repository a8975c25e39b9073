"""The operator's options, as one record: what ``CepOperator``, ``CEP.pattern`` and the connectors
pass along, checked once where it is made."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, Final

import attrs

from flowcep.runtime.limits import PartialMatchLimit

ON_ERROR: Final = ("raise", "side_output")


def check_on_error(on_error: Any) -> str:
    """``on_error`` if it is one of ``ON_ERROR``, else a ``ValueError`` naming the choices."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    return on_error  # type: ignore[no-any-return]


def _check_clock(_: Any, __: Any, clock: Any) -> None:
    if clock is not None and not callable(clock):
        raise TypeError(f"clock must be a callable, got {clock!r}")


def _check_comparator(_: Any, __: Any, comparator: Any) -> None:
    comparator_key(comparator)


def _check_on_error(_: Any, __: Any, on_error: Any) -> None:
    check_on_error(on_error)


@attrs.frozen(slots=True)
class OperatorOptions:
    """How the operator reads and orders its input (see ``CepOperator``).

    ``key_by`` / ``timestamp``: functions of the event or field names; ``out_of_orderness``: ms
    or ``timedelta`` of the generated watermark's bound (None: no generated watermark);
    ``comparator``: ``compare(a, b) -> int`` (or an object with ``compare``) for equal timestamps;
    ``processing_time``; ``clock``: the processing-time clock (epoch ms by default); ``on_error``:
    ``"raise"`` or ``"side_output"``; ``partial_match_limit``: a ``PartialMatchLimit`` (None: Flink's
    unbounded partial matches); ``quiet_timeouts`` (processing time only, beyond Flink): partial
    matches time out at start + window even when no element arrives (``advance_processing_time``
    in the push API, a timer in the pull API); Flink only times out when an element arrives.
    """

    key_by: Callable[[Any], Hashable] | str | None = None
    timestamp: Callable[[Any], int] | str | None = None
    out_of_orderness: Any = 0
    comparator: Any = attrs.field(default=None, validator=_check_comparator)
    processing_time: bool = attrs.field(default=False, converter=bool)
    clock: Callable[[], int] | None = attrs.field(default=None, validator=_check_clock)
    on_error: str = attrs.field(default="raise", validator=_check_on_error)
    partial_match_limit: PartialMatchLimit | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(PartialMatchLimit))
    )
    quiet_timeouts: bool = attrs.field(default=False, converter=bool)

    def __attrs_post_init__(self) -> None:
        if self.quiet_timeouts and not self.processing_time:
            raise ValueError(
                "quiet_timeouts works in processing time (in event time, watermarks time partial "
                "matches out without elements)"
            )


def comparator_key(comparator: Any) -> Callable[[Any], Any] | None:
    """Flink's ``EventComparator`` as a sort key: from a ``compare(a, b) -> int`` callable or
    object (None: no comparator)."""
    if comparator is None:
        return None
    compare = getattr(comparator, "compare", comparator)
    if not callable(compare):
        raise TypeError(f"comparator must be a callable compare(a, b) -> int, got {comparator!r}")
    return functools.cmp_to_key(compare)
