"""The choice of a hierarchy's engine, and ``detect`` (the pull API).

``"levels"`` is ``HierarchyOperator``, one ``CepOperator`` per complex event type, for any
hierarchy; ``"one_pass"`` is ``OnePassHierarchy``, one structure per key, for the hierarchies of
its class (``HierarchyError`` for another); ``"auto"`` (the default) takes the one-pass engine
when the hierarchy is in its class, else the levels. docs/semantics.md 11.9 says what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, Final, Union

from flowcep.hierarchy.definition import Hierarchy, HierarchyPlan
from flowcep.hierarchy.engine import HierarchyOperator, LevelOutput
from flowcep.hierarchy.onepass import OnePassHierarchy
from flowcep.hierarchy.onepass_class import one_pass_levels

ENGINES: Final = ("levels", "one_pass", "auto")
AnyHierarchyOperator = Union[HierarchyOperator, OnePassHierarchy]


def hierarchy_operator(
    hierarchy: Hierarchy | HierarchyPlan, *, engine: str = "auto", **options: Any
) -> AnyHierarchyOperator:
    """The push operator of ``hierarchy`` on ``engine`` (``ENGINES``); ``options`` are
    ``HierarchyOperator``'s keyword arguments."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "auto":
        plan = hierarchy.build()
        engine = "levels" if isinstance(one_pass_levels(plan), str) else "one_pass"
        hierarchy = plan
    if engine == "one_pass":
        return OnePassHierarchy(hierarchy, **options)
    return HierarchyOperator(hierarchy, **options)


def detect(
    hierarchy: Hierarchy | HierarchyPlan,
    events: Iterable[Any],
    *,
    key_by: Callable[[Any], Hashable] | str | None = None,
    timestamp: Callable[[Any], int] | str,
    out_of_orderness: Any = 0,
    emit: Iterable[str] | None = None,
    on_error: str = "raise",
    engine: str = "auto",
) -> Iterator[LevelOutput]:
    """The pull API: run ``hierarchy`` over ``events`` (any iterable, possibly unbounded) and
    yield its ``LevelOutput``s as they become ready, lazily, on ``engine``."""
    operator = hierarchy_operator(
        hierarchy,
        engine=engine,
        key_by=key_by,
        timestamp=timestamp,
        out_of_orderness=out_of_orderness,
        emit=emit,
        on_error=on_error,
    )
    with operator:
        for event in events:
            yield from operator.process_element(event)
        yield from operator.flush()
