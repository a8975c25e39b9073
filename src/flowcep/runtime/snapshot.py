"""Operator snapshots: a versioned header, a pattern fingerprint and a canonical pickle payload.

Layout: ``MAGIC`` (8 bytes) | format version (2 bytes, big endian) | SHA-256 fingerprint of the
pattern (32 bytes) | pickle (protocol 5) of the operator's state.

Version 4 adds the count of dropped partial matches to the operator's counters; version 3 bytes
(five counters) are still read, with none dropped.

By default the payload is pickled canonically, so that equal states give equal bytes no matter
how the objects were created (straight through, or restored and continued): strings and tuples
of atoms are shared by value, not by identity, and sets are written sorted. ``canonical=False``
writes a plain pickle of the same payload instead, about three times faster to take (the
connectors' per-key state path, where equal bytes for equal states buy nothing); both read back
the same way. Snapshots are pickles: restore only bytes that come from a trusted source.
"""

from __future__ import annotations

import enum
import hashlib
import io
import pickle
import types
from typing import Any, Final

import attrs

MAGIC: Final = b"FLOWCEP\x00"
FORMAT_VERSION: Final = 4
READ_VERSIONS: Final = (3, 4)  # the format versions ``unpack`` reads
_PROTOCOL: Final = 5
#: The bytes before the payload: the magic bytes, the format version and the fingerprint; the
#: same for every snapshot of one format version and one pattern.
HEADER: Final = len(MAGIC) + 2 + 32

_ATOMS: Final = frozenset((int, str, bytes, bool, type(None)))


class SnapshotError(ValueError):
    """Bytes that cannot be restored into this operator."""


# ---------------------------------------------------------------- the operator's state, typed

EVENT_TIME: Final = "event-time"
PROCESSING_TIME: Final = "processing-time"
# Format version 3 holds, after the largest timestamp, the first timestamp of the firing then
# under way, which nothing reads: the operator no longer keeps it, and writes this in its place.
_NO_FIRE_BASE: Final = -(2**63)


@attrs.frozen(slots=True)
class KeySnapshot:
    """One key's state: ``queue`` its buffered elements as ``(timestamp, [elements])``;
    ``buffer`` its shared buffer, or ``run_matches`` its runs' partial matches when the pattern
    keeps no paths (the buffer all keys share is then the operator's ``event_counts``)."""

    key: Any
    seq: int
    timers: list[int]
    state: Any
    buffer: Any
    queue: list[tuple[int, list[Any]]]
    run_matches: Any


@attrs.frozen(slots=True)
class OperatorSnapshot:
    """Everything an operator's snapshot holds, as written in format version 4 (``payload``)."""

    mode: str  # EVENT_TIME or PROCESSING_TIME
    watermark: int
    max_timestamp: int
    last_now: int
    next_seq: int
    resume: bool  # a firing was interrupted by an exception
    # events_in, late, matches, timeouts, bad_records, dropped_partial_matches
    counters: tuple[int, int, int, int, int, int]
    keys: list[KeySnapshot]
    event_counts: dict[int, int] | None  # the buffer without paths: arrival counters by timestamp
    idle: list[tuple[Any, list[int]]]  # keys that hold nothing but window timers, and those

    def encode(self, fingerprint: bytes, canonical: bool = True) -> bytes:
        """The snapshot's bytes (see ``pack``)."""
        return pack(fingerprint, self.payload(), canonical)

    def payload(self) -> tuple[Any, ...]:
        """The pickled layout: tuples and lists as format version 4 has them."""
        clocks = (
            self.watermark,
            self.max_timestamp,
            _NO_FIRE_BASE,
            self.last_now,
            self.next_seq,
            self.resume,
        )
        keys = [(k.key, k.seq, k.timers, k.state, k.buffer, k.queue, k.run_matches) for k in self.keys]
        return (self.mode, clocks, self.counters, keys, self.event_counts, self.idle)

    @classmethod
    def decode(cls, data: bytes, fingerprint: bytes) -> OperatorSnapshot:
        """Read ``data`` (``SnapshotError`` for another format, another pattern or a bad layout)."""
        version, payload = unpack_versioned(data, fingerprint)
        try:
            if len(payload) == 5:  # taken before keys with nothing but window timers were kept
                payload = (*payload, [])
            mode, clocks, counters, keys, event_counts, idle = payload
            watermark, max_timestamp, _, last_now, next_seq, resume = clocks
            if version == 3:  # no drops counted yet
                counters = (*counters, 0)
            events_in, late, matches, timeouts, bad_records, dropped = counters
            return cls(
                mode,
                watermark,
                max_timestamp,
                last_now,
                next_seq,
                resume,
                (events_in, late, matches, timeouts, bad_records, dropped),
                [KeySnapshot(*key) for key in keys],
                event_counts,
                [(key, [int(t) for t in timers]) for key, timers in idle],
            )
        except (TypeError, ValueError) as exc:
            raise SnapshotError(f"corrupt flowcep snapshot payload: unexpected layout ({exc})") from None


# ---------------------------------------------------------------- canonical pickling


def _atom_key(value: tuple[Any, ...]) -> Any:
    """A type-aware value key for a tuple of atoms (or of such tuples), or None if there is none.

    ``(1,)`` and ``(True,)`` are equal tuples but pickle differently, hence the types in the key.
    """
    types_ = tuple(map(type, value))
    for kind in types_:
        if kind not in _ATOMS:
            if kind is not tuple:
                return None
            # nested tuples: key each item
            parts = []
            for item in value:
                item_kind = type(item)
                if item_kind is tuple:
                    k = _atom_key(item)
                    if k is None:
                        return None
                elif item_kind in _ATOMS:
                    k = (item_kind, item)
                else:
                    return None
                parts.append(k)
            return (tuple, tuple(parts))
    return (value, types_)


class _CanonicalPickler(pickle.Pickler):
    """Routes strings, bytes, tuples of atoms and sets through persistent ids, shared by value."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=_PROTOCOL)
        self._strings: dict[str | bytes, str | bytes] = {}
        self._tuples: dict[Any, tuple[str, list[Any]]] = {}
        # id -> (pid or None, the object kept alive so that its id stays unique)
        self._seen: dict[int, tuple[Any, Any]] = {}

    def persistent_id(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is int:
            return None
        if kind is str or kind is bytes:
            return self._strings.setdefault(obj, obj)
        if kind is tuple or kind is set or kind is frozenset:
            known = self._seen.get(id(obj))
            if known is None:
                known = self._seen[id(obj)] = (self._container_pid(obj, kind), obj)
            return known[0]
        return None

    def _container_pid(self, obj: Any, kind: type) -> Any:
        if kind is tuple:
            key = _atom_key(obj) if obj else None
            if key is None:
                return None
            pid = self._tuples.get(key)
            if pid is None:
                # a list inside the pid, so that the tuple does not come back here
                pid = self._tuples[key] = ("t", list(obj))
            return pid
        try:
            items = tuple(sorted(obj))
        except TypeError:
            return None  # not orderable: written as is
        return ("s" if kind is set else "f", items)


class _CanonicalUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self._loaded: dict[int, tuple[Any, Any]] = {}

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is str or type(pid) is bytes:
            return pid
        # a memoised pid object stands for one object: load it once
        cached = self._loaded.get(id(pid))
        if cached is None:
            tag = pid[0]
            if tag == "t":
                value: Any = tuple(pid[1])
            elif tag == "s":
                value = set(pid[1])
            elif tag == "f":
                value = frozenset(pid[1])
            else:
                raise pickle.UnpicklingError(f"unknown persistent id tag {tag!r}")
            cached = self._loaded[id(pid)] = (pid, value)
        return cached[1]


def dumps(payload: Any) -> bytes:
    """Canonical pickle of ``payload``."""
    buf = io.BytesIO()
    _CanonicalPickler(buf).dump(payload)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    return _CanonicalUnpickler(io.BytesIO(data)).load()


# ---------------------------------------------------------------- header


_VERSION_BYTES: Final = FORMAT_VERSION.to_bytes(2, "big")


def pack(fingerprint: bytes, payload: Any, canonical: bool = True) -> bytes:
    """Header + pickle (canonical, or plain: same layout, read back alike)."""
    body = dumps(payload) if canonical else pickle.dumps(payload, _PROTOCOL)
    return MAGIC + _VERSION_BYTES + fingerprint + body


def unpack(data: bytes, fingerprint: bytes) -> Any:
    """Check the header against ``fingerprint`` and return the payload; ``SnapshotError`` if wrong."""
    return unpack_versioned(data, fingerprint)[1]


def unpack_versioned(data: bytes, fingerprint: bytes) -> tuple[int, Any]:
    """The format version and the payload (see ``unpack``)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < HEADER or not data.startswith(MAGIC):
        raise SnapshotError("not a flowcep operator snapshot (bad magic bytes)")
    version = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 2], "big")
    if version not in READ_VERSIONS:
        raise SnapshotError(
            f"unsupported flowcep snapshot format version {version}; this flowcep reads versions "
            + " and ".join(map(str, READ_VERSIONS))
        )
    found = data[len(MAGIC) + 2 : HEADER]
    if found != fingerprint:
        raise SnapshotError(
            "snapshot was taken with a different pattern "
            f"(pattern fingerprint {found.hex()[:16]} in the snapshot, {fingerprint.hex()[:16]} for this "
            "operator); restore it into an operator built with the same pattern"
        )
    try:
        return version, loads(data[HEADER:])
    except Exception as exc:
        raise SnapshotError(f"corrupt flowcep snapshot payload: {exc}") from exc


# ---------------------------------------------------------------- pattern fingerprint


def pattern_fingerprint(pattern: Any) -> bytes:
    """SHA-256 over the pattern's structure and conditions.

    Covers step names and order, groups, quantifiers, contiguity, times, windows, the skip
    strategy, and for each condition its kind, argument count, referenced names, constants and
    simple closure values. It is stable across processes and Python versions (no bytecode, ids
    or hash order), so it does not see a changed operator such as ``>`` into ``<``.
    """
    description = _Describer().pattern(pattern)
    return hashlib.sha256(repr(description).encode("utf-8")).digest()


class _Describer:
    _MAX_DEPTH: Final = 24

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def pattern(self, node: Any) -> Any:
        steps = []
        while node is not None:
            fields = [(name, self.value(v, 0)) for name, v in _fields(node) if name != "previous"]
            steps.append((_type_name(node), tuple(fields)))
            node = getattr(node, "previous", None)
        return tuple(steps)

    def value(self, v: Any, depth: int) -> Any:  # noqa: C901 - one dispatch on type
        if depth > self._MAX_DEPTH:
            return "..."
        kind = type(v)
        if v is None or kind in (int, str, bool, float, bytes):
            return repr(v)
        if isinstance(v, enum.Enum):
            return f"{_type_name(v)}.{v.name}"
        if kind in (tuple, list):
            return (kind.__name__,) + tuple(self.value(x, depth + 1) for x in v)
        if kind in (set, frozenset):
            return ("set",) + tuple(sorted(repr(self.value(x, depth + 1)) for x in v))
        if kind is dict:
            items = sorted((repr(self.value(k, depth + 1)), self.value(x, depth + 1)) for k, x in v.items())
            return ("dict",) + tuple(items)
        if isinstance(v, type):
            return ("type", _type_name(v))
        if isinstance(v, types.MethodType):
            return (
                "method",
                v.__func__.__name__,
                self.value(v.__func__, depth + 1),
                self.value(v.__self__, depth + 1),
            )
        if isinstance(v, types.FunctionType):
            return self.function(v, depth)
        if isinstance(v, types.CodeType):
            return self.code(v, depth)
        if callable(v) and not hasattr(v, "__dict__") and not hasattr(type(v), "__slots__"):
            return ("callable", _type_name(v))  # builtins, C functions
        if id(v) in self._seen:
            return ("cycle", _type_name(v))
        self._seen.add(id(v))
        try:
            if hasattr(v, "previous") and hasattr(v, "quantifier"):  # a nested (group) pattern
                return ("pattern", self.pattern(v))
            fields = tuple((name, self.value(x, depth + 1)) for name, x in _fields(v))
            methods: tuple[Any, ...] = ()
            module = getattr(type(v), "__module__", "") or ""
            if not module.startswith("flowcep."):
                # a user class: what it does lives in its methods
                methods = tuple(
                    (name, self.code(f.__code__, depth + 1))
                    for name, f in sorted(vars(type(v)).items())
                    if isinstance(f, types.FunctionType) and not name.startswith("__")
                )
            return ("obj", _type_name(v), fields, methods)
        finally:
            self._seen.discard(id(v))

    def function(self, fn: types.FunctionType, depth: int) -> Any:
        closure: tuple[Any, ...] = ()
        if fn.__closure__:
            closure = tuple(
                self._simple(cell.cell_contents) for cell in fn.__closure__ if _has_contents(cell)
            )
        defaults = tuple(self._simple(d) for d in (fn.__defaults__ or ()))
        return ("fn", self.code(fn.__code__, depth + 1), closure, defaults)

    def code(self, code: types.CodeType, depth: int) -> Any:
        consts = tuple(
            self.code(c, depth + 1) if isinstance(c, types.CodeType) else self._simple(c)
            for c in code.co_consts
            if c is not None
        )
        return ("code", code.co_argcount, code.co_names, consts)

    def _simple(self, v: Any) -> Any:
        if v is None or type(v) in (int, str, bool, float, bytes):
            return repr(v)
        if type(v) in (tuple, frozenset, list, set) and len(v) <= 64:
            parts = [self._simple(x) for x in v]
            return tuple(sorted(map(repr, parts))) if type(v) in (frozenset, set) else tuple(parts)
        if isinstance(v, enum.Enum):
            return f"{_type_name(v)}.{v.name}"
        if isinstance(v, types.FunctionType):
            return self.function(v, self._MAX_DEPTH - 2)
        if isinstance(v, type):
            return ("type", _type_name(v))
        return ("value", _type_name(v))


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - probing an empty cell
    except ValueError:
        return False
    return True


def _type_name(v: Any) -> str:
    t = v if isinstance(v, type) else type(v)
    return f"{t.__module__}.{t.__qualname__}"


def _fields(obj: Any) -> list[tuple[str, Any]]:
    """Instance fields from ``__slots__`` (whole MRO) and ``__dict__``, in a stable order."""
    out: dict[str, Any] = {}
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for name in slots:
            if name in ("__dict__", "__weakref__") or name in out:
                continue
            try:
                out[name] = getattr(obj, name)
            except AttributeError:
                continue
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        for name, value in d.items():
            out.setdefault(name, value)
    return sorted(out.items())
