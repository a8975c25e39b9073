"""A priority queue laid out exactly like ``java.util.PriorityQueue``.

Flink iterates its run queues in heap-array order, so the order of matches
and timeouts emitted within one step depends on the heap layout; using
Java's sift rules (not ``heapq``'s) reproduces Flink's emission order.
Elements are compared by ``element.order`` (a tuple).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any


class JavaPriorityQueue:
    __slots__ = ("queue",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self.queue: list[Any] = []
        for item in items:
            self.add(item)

    def add(self, x: Any) -> None:
        q = self.queue
        q.append(x)
        k = len(q) - 1
        key = x.order
        while k > 0:
            parent = (k - 1) >> 1
            e = q[parent]
            if key >= e.order:
                break
            q[k] = e
            k = parent
        q[k] = x

    def add_all(self, items: Iterable[Any]) -> None:
        for item in items:
            self.add(item)

    def peek(self) -> Any:
        return self.queue[0] if self.queue else None

    def poll(self) -> Any:
        q = self.queue
        if not q:
            return None
        result = q[0]
        last = q.pop()
        if q:
            self._sift_down(0, last)
        return result

    def _sift_down(self, k: int, x: Any) -> None:
        q = self.queue
        n = len(q)
        half = n >> 1
        key = x.order
        while k < half:
            child = 2 * k + 1
            c = q[child]
            right = child + 1
            if right < n and c.order > q[right].order:
                child = right
                c = q[child]
            if key <= c.order:
                break
            q[k] = c
            k = child
        q[k] = x

    def remove_if(self, predicate: Callable[[Any], bool]) -> bool:
        """Java's ``removeIf``/``removeAll``: compact survivors, then heapify."""
        q = self.queue
        kept = [x for x in q if not predicate(x)]
        if len(kept) == len(q):
            return False
        self.queue = kept
        for i in range((len(kept) >> 1) - 1, -1, -1):
            self._sift_down(i, kept[i])
        return True

    def __iter__(self) -> Iterator[Any]:
        return iter(self.queue)

    def __len__(self) -> int:
        return len(self.queue)

    def __bool__(self) -> bool:
        return bool(self.queue)

    def __getstate__(self) -> list[Any]:
        return self.queue

    def __setstate__(self, state: list[Any]) -> None:
        self.queue = state
