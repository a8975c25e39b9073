"""``ComplexEvent``: what one level of a hierarchy detects, and what the levels above it read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any


def _same(event: Any) -> Any:
    return event


class ComplexEvent:
    """A detected complex event: its ``type`` (the level's name), ``key``, the interval
    ``[start, end]`` in event-time milliseconds, its ``attributes`` (what the level's composition
    function built) and ``match``, the constituents by step name (raw events and lower complex
    events), as the level's ``Pattern`` matched them.

    Conditions read attributes as ``c.severity`` or ``c["severity"]``; an attribute whose name is
    one of the fields above is read with ``c["start"]`` only.

    ``one_per_step`` makes one whose ``match`` (one event per step) and empty ``attributes`` are
    built when first read: most complex events a level makes are read by no one.
    """

    __slots__ = ("type", "key", "start", "end", "_attributes", "_match", "_steps")

    def __init__(
        self,
        type: str,
        key: Any,
        start: int,
        end: int,
        attributes: Mapping[str, Any],
        match: Mapping[str, list[Any]],
    ) -> None:
        self.type = type
        self.key = key
        self.start = start
        self.end = end
        self._attributes: Mapping[str, Any] | None = attributes
        self._match: Any = match
        self._steps: tuple[str, ...] | None = None

    @classmethod
    def one_per_step(
        cls, type: str, key: Any, start: int, end: int, steps: tuple[str, ...], events: tuple[Any, ...]
    ) -> ComplexEvent:
        """A complex event without attributes whose match is ``events[i]`` at ``steps[i]``."""
        event = cls.__new__(cls)
        event.type = type
        event.key = key
        event.start = start
        event.end = end
        event._attributes = None
        event._match = events
        event._steps = steps
        return event

    @property
    def match(self) -> Mapping[str, list[Any]]:
        steps = self._steps
        if steps is not None:
            self._match = {name: [e] for name, e in zip(steps, self._match)}
            self._steps = None
        return self._match  # type: ignore[no-any-return]

    @property
    def attributes(self) -> Mapping[str, Any]:
        attributes = self._attributes
        if attributes is None:
            attributes = self._attributes = {}
        return attributes

    def __getattr__(self, name: str) -> Any:
        # only reached when ``name`` is not a field: an attribute the composition function built
        try:
            attributes = object.__getattribute__(self, "attributes")
        except AttributeError:  # while unpickling, before the fields are set
            raise AttributeError(name) from None
        try:
            return attributes[name]
        except KeyError:
            raise AttributeError(
                f"complex event {self.type!r} has no attribute {name!r} (it has {sorted(attributes)!r})"
            ) from None

    def __getitem__(self, name: str) -> Any:
        return self.attributes[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.attributes.get(name, default)

    def constituents(self) -> Iterator[Any]:
        """The match's events in pattern order (raw events and complex events)."""
        if self._steps is not None:
            yield from self._match
            return
        for events in self.match.values():
            yield from events

    def raw_events(self) -> list[Any]:
        """Every raw event underneath, depth first in pattern order."""
        out: list[Any] = []
        for event in self.constituents():
            if type(event) is ComplexEvent:
                out.extend(event.raw_events())
            else:
                out.append(event)
        return out

    def as_dict(self, raw: Callable[[Any], Any] = _same) -> dict[str, Any]:
        """The complex event as plain values (for JSON): ``type``, ``start``, ``end``,
        ``attributes`` and ``match``, whose complex constituents are such dicts too and whose raw
        events are ``raw(event)`` (by default the events themselves)."""
        return {
            "type": self.type,
            "start": self.start,
            "end": self.end,
            "attributes": dict(self.attributes),
            "match": plain_match(self.match, raw),
        }

    def __reduce__(self) -> tuple[Any, ...]:
        return (ComplexEvent, (self.type, self.key, self.start, self.end, self.attributes, self.match))

    def __eq__(self, other: object) -> bool:
        if type(other) is not ComplexEvent:
            return NotImplemented
        return (self.type, self.key, self.start, self.end, self.attributes, self.match) == (
            other.type,
            other.key,
            other.start,
            other.end,
            other.attributes,
            other.match,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ComplexEvent({self.type!r}, key={self.key!r}, [{self.start}, {self.end}], "
            f"{dict(self.attributes)!r})"
        )


def plain_match(match: Mapping[str, list[Any]], raw: Callable[[Any], Any] = _same) -> dict[str, list[Any]]:
    """A (partial) match of a level as plain values: each complex event ``as_dict(raw)``, each raw
    event ``raw(event)``."""
    return {
        step: [e.as_dict(raw) if type(e) is ComplexEvent else raw(e) for e in events]
        for step, events in match.items()
    }
