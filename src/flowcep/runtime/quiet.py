"""Timeouts on quiet streams in the pull API (``CEP.pattern(..., quiet_timeouts=True)``, processing
time): the input is read in a thread of its own, so that the operator's next timeout can pass
while the input waits for its next element.

``TimedFeed`` is the input as the result stream iterates it: the input's elements in order, and
``TICK`` whenever the operator's next processing-time timeout passes before an element arrives
(the result stream then calls ``advance_processing_time``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

TICK: Final = object()
_ITEM: Final = 0
_END: Final = 1
_ERROR: Final = 2


class TimedFeed(Iterator[Any]):
    """The elements of ``source``, read ahead by a daemon thread (at most ``capacity`` waiting),
    or ``TICK`` when ``next_timeout()`` (a time of ``clock()``, ms; None: none) passes first."""

    def __init__(
        self,
        source: Iterable[Any],
        next_timeout: Callable[[], int | None],
        clock: Callable[[], int],
        capacity: int = 1024,
    ) -> None:
        self._next_timeout = next_timeout
        self._clock = clock
        self._queue: queue.Queue[tuple[int, Any]] = queue.Queue(capacity)
        self._thread = threading.Thread(target=self._read, args=(source,), name="flowcep-input", daemon=True)
        self._thread.start()

    def _read(self, source: Iterable[Any]) -> None:
        put = self._queue.put
        try:
            for event in source:
                put((_ITEM, event))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            put((_ERROR, exc))
            return
        put((_END, None))

    def __next__(self) -> Any:
        deadline = self._next_timeout()
        wait = None if deadline is None else max(0.0, (deadline - self._clock()) / 1000)
        try:
            kind, value = self._queue.get(timeout=wait)
        except queue.Empty:
            return TICK
        if kind == _ITEM:
            return value
        if kind == _END:
            raise StopIteration
        raise value
