"""The embedded runtime's ``RuntimeContext``: what ``open(context)`` of a process function, of a
timeout function and of a ``RichIterativeCondition`` receives (Flink's ``RuntimeContext``, as
far as one process has one): the current key, the operator's metrics and the job's parameters.
Also ``open_operator``/``close_operator``, one lifecycle for the operator's rich conditions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from flowcep.pattern.pattern import Pattern, pattern_rich_conditions


class RuntimeContext:
    """``get_current_key()``: in a condition, the key of the element it is asked about; in a
    function, the key of the match or timed-out partial match being handled (None in ``open``,
    and for a stream without ``key_by``); ``get_metrics()``: the operator's
    ``stats()`` now; ``get_job_parameter(name, default)`` / ``get_job_parameters()``: what
    ``CEP.pattern(job_parameters=...)`` gave. ``get_task_name()``,
    ``get_number_of_parallel_subtasks()`` and ``get_index_of_this_subtask()``: one of one in the
    embedded runtime; in Spark, the partition and the partitions of the stage."""

    __slots__ = ("_keyed", "_metrics", "_parameters", "_task", "_index", "_tasks")

    def __init__(
        self,
        metrics: Callable[[], dict[str, Any]],
        job_parameters: Mapping[str, Any] | None = None,
        keyed: Any = None,
        task_name: str = "CepOperator",
        subtask_index: int = 0,
        subtasks: int = 1,
    ) -> None:
        """``keyed``: an object whose ``current_key`` attribute is the current key (the operator:
        it sets it to the key of each element its NFA runs, and the pull API to the key of each
        result it hands to the function)."""
        self._keyed = keyed
        self._metrics = metrics
        self._parameters: Mapping[str, Any] = MappingProxyType(dict(job_parameters or {}))
        self._task = task_name
        self._index = subtask_index
        self._tasks = subtasks

    def get_current_key(self) -> Any:
        return None if self._keyed is None else self._keyed.current_key

    def get_metrics(self) -> dict[str, Any]:
        return self._metrics()

    def get_job_parameters(self) -> Mapping[str, Any]:
        return self._parameters

    def get_job_parameter(self, name: str, default: Any = None) -> Any:
        return self._parameters.get(name, default)

    def get_task_name(self) -> str:
        return self._task

    def get_number_of_parallel_subtasks(self) -> int:
        return self._tasks

    def get_index_of_this_subtask(self) -> int:
        return self._index

    getCurrentKey = get_current_key
    getMetrics = get_metrics
    getJobParameters = get_job_parameters
    getJobParameter = get_job_parameter
    getTaskName = get_task_name
    getNumberOfParallelSubtasks = get_number_of_parallel_subtasks
    getIndexOfThisSubtask = get_index_of_this_subtask


def open_operator(pattern: Pattern[Any], context: Any) -> None:
    """``open(context)`` on each rich condition of ``pattern``, after giving it the context."""
    open_conditions(pattern_rich_conditions(pattern), context)


def open_conditions(conditions: Iterable[Any], context: Any) -> None:
    """``open(context)`` on each of ``conditions`` (rich conditions), after giving it the context."""
    for condition in conditions:
        condition.set_runtime_context(context)
        condition.open(context)


def close_operator(pattern: Pattern[Any]) -> None:
    """``close()`` on each rich condition of ``pattern`` (all of them, the first error raised)."""
    close_all(pattern_rich_conditions(pattern))


def close_all(closables: Iterable[Any]) -> None:
    """``close()`` on each of ``closables``, all of them; then the first error is raised."""
    error: BaseException | None = None
    for closable in closables:
        try:
            closable.close()
        except BaseException as exc:  # noqa: BLE001 - close the others first
            error = error or exc
    if error is not None:
        raise error
