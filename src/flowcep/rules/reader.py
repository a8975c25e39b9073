"""JSON rule documents to ``Pattern`` objects, checked part by part: a bad document raises
``RuleError`` naming the JSON path of the bad part and the problem (docs/rules.md).

A graph's nodes may come in any order: its edges chain them, from the one node no edge points to.
Builder calls are the ones a Python user would make, so Flink's own checks (an optional step
after a greedy one, greedy on a single step...) apply too, reported at the node's path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from flowcep.expr import ANY, ATTR, ITEM
from flowcep.pattern import (
    AfterMatchSkipStrategy,
    Condition,
    IllegalArgumentException,
    MalformedPatternException,
    NullPointerException,
    Pattern,
    RichAndCondition,
    RichNotCondition,
    RichOrCondition,
    SubtypeCondition,
    UnsupportedOperationException,
    WithinType,
)
from flowcep.rules import names
from flowcep.rules.errors import RuleError
from flowcep.rules.expressions import ExpressionSyntaxError, expression_condition
from flowcep.rules.registry import ConditionRegistry

_BUILDER_ERRORS = (
    MalformedPatternException,
    IllegalArgumentException,
    UnsupportedOperationException,
    NullPointerException,
    TypeError,
)
_APPEND = {
    "STRICT": "next",
    "SKIP_TILL_NEXT": "followed_by",
    "SKIP_TILL_ANY": "followed_by_any",
    "NOT_NEXT": "not_next",
    "NOT_FOLLOW": "not_followed_by",
}
_SKIPS = {
    "NO_SKIP": AfterMatchSkipStrategy.no_skip,
    "SKIP_TO_NEXT": AfterMatchSkipStrategy.skip_to_next,
    "SKIP_PAST_LAST_EVENT": AfterMatchSkipStrategy.skip_past_last_event,
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return "an array" if isinstance(value, list) else "an object"


@attrs.frozen(slots=True)
class _Step:
    """One node of a graph, in chain order, with the edge type that leads to it (None: first)."""

    node: dict[str, Any]
    path: str
    edge: str | None


class _Reader:
    def __init__(self, registry: ConditionRegistry | None, access: str) -> None:
        if access not in (ANY, ITEM, ATTR):
            raise ValueError(f"access must be {ANY!r}, {ITEM!r} or {ATTR!r}, got {access!r}")
        self.registry = registry
        self.access = access
        self.chains: dict[int, list[_Step]] = {}  # id(graph) -> its nodes in chain order
        self.composites: set[int] = set()  # id(node) of the COMPOSITE nodes
        self.variables: list[str] = []  # the atomic steps, in pattern order

    # --- values -------------------------------------------------------------------------------

    @staticmethod
    def obj(value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise RuleError(path, f"expected an object, got {_kind(value)}")
        return value

    def get(
        self, d: dict[str, Any], key: str, path: str, kind: type | tuple[type, ...], required: bool
    ) -> Any:
        value = d.get(key)
        where = f"{path}.{key}"
        if value is None:
            if required:
                raise RuleError(where, "is required" if key not in d else "must not be null")
            return None
        if isinstance(value, bool) and kind in (int, (int, float)):
            raise RuleError(where, f"expected {'an integer' if kind is int else 'a number'}, got a boolean")
        if not isinstance(value, kind):
            wanted = {
                str: "a string",
                int: "an integer",
                list: "an array",
                dict: "an object",
                bool: "a boolean",
            }
            expected = wanted.get(kind, "a number") if isinstance(kind, type) else "a number"
            raise RuleError(where, f"expected {expected}, got {_kind(value)}")
        return value

    def enum(
        self, d: dict[str, Any], key: str, path: str, allowed: Sequence[str], required: bool = True
    ) -> Any:
        value = self.get(d, key, path, str, required)
        if value is not None and value not in allowed:
            raise RuleError(f"{path}.{key}", f"unknown value {value!r} (one of {', '.join(allowed)})")
        return value

    def duration(self, value: Any, path: str) -> int:
        d = self.obj(value, path)
        unit = self.enum(d, "unit", path, tuple(names.UNIT_MS))
        size = self.get(d, "size", path, int, True)
        return int(size) * names.UNIT_MS[unit]

    # --- the chain of a graph, first pass -------------------------------------------------------

    def chain(self, graph: dict[str, Any], path: str) -> list[_Step]:
        nodes = self.get(graph, "nodes", path, list, True)
        if not nodes:
            raise RuleError(f"{path}.nodes", "a graph needs at least one node")
        by_name: dict[str, tuple[dict[str, Any], str]] = {}
        for i, raw in enumerate(nodes):
            npath = f"{path}.nodes[{i}]"
            node = self.obj(raw, npath)
            name = self.get(node, "name", npath, str, True)
            if not name:
                raise RuleError(f"{npath}.name", "must not be empty")
            if name in by_name:
                raise RuleError(f"{npath}.name", f"node name {name!r} is used twice in this graph")
            by_name[name] = (node, npath)
        edges = self.get(graph, "edges", path, list, len(nodes) > 1) or []
        after: dict[str, tuple[str, str]] = {}  # source -> (target, edge type)
        before: dict[str, str] = {}
        for i, raw in enumerate(edges):
            epath = f"{path}.edges[{i}]"
            edge = self.obj(raw, epath)
            source = self.get(edge, "source", epath, str, True)
            target = self.get(edge, "target", epath, str, True)
            kind = self.enum(edge, "type", epath, names.EDGE_TYPES)
            for key, end in (("source", source), ("target", target)):
                if end not in by_name:
                    raise RuleError(f"{epath}.{key}", f"no node named {end!r} in this graph")
            if source in after:
                raise RuleError(
                    f"{epath}.source", f"node {source!r} already has an edge out: a pattern is a chain"
                )
            if target in before:
                raise RuleError(
                    f"{epath}.target", f"node {target!r} already has an edge in: a pattern is a chain"
                )
            after[source] = (target, kind)
            before[target] = source
        starts = [n for n in by_name if n not in before]
        if len(starts) != 1:
            shown = ", ".join(repr(s) for s in starts) or "none (the edges form a cycle)"
            raise RuleError(
                f"{path}.edges", f"the chain needs exactly one node no edge points to, found {shown}"
            )
        out: list[_Step] = []
        current: str | None = starts[0]
        edge_type: str | None = None
        while current is not None:
            node, npath = by_name[current]
            out.append(_Step(node, npath, edge_type))
            current, edge_type = after.get(current, (None, None))
        if len(out) != len(by_name):  # the other nodes form a cycle of their own
            on_chain = {step.node["name"] for step in out}
            missing = [n for n in by_name if n not in on_chain]
            raise RuleError(f"{path}.edges", f"nodes {missing} are not on the chain from {starts[0]!r}")
        return out

    def collect(self, graph: dict[str, Any], path: str) -> None:
        steps = self.chain(graph, path)
        self.chains[id(graph)] = steps
        for step in steps:
            kind = self.enum(step.node, "type", step.path, ("ATOMIC", "COMPOSITE"))
            if kind == "COMPOSITE":
                self.composites.add(id(step.node))
                self.collect(step.node, step.path)
            else:
                for key in ("nodes", "edges"):
                    if step.node.get(key) is not None:
                        raise RuleError(
                            f"{step.path}.{key}", "an ATOMIC node has no nodes or edges (make it COMPOSITE)"
                        )
                self.variables.append(step.node["name"])

    # --- building, second pass ------------------------------------------------------------------

    def graph(self, graph: dict[str, Any], path: str) -> Pattern[Any]:
        skip = self.skip(graph.get("afterMatchStrategy"), f"{path}.afterMatchStrategy")
        pattern: Pattern[Any] | None = None
        steps = self.chains[id(graph)]
        for i, step in enumerate(steps):
            composite = id(step.node) in self.composites
            target: str | Pattern[Any] = self.graph(step.node, step.path) if composite else step.node["name"]
            with _at(step.path):
                if pattern is None:
                    pattern = Pattern.begin(target, skip)
                else:
                    assert step.edge is not None
                    if composite and step.edge in ("NOT_NEXT", "NOT_FOLLOW"):
                        raise RuleError(
                            f"{path}.edges",
                            f"a {step.edge} edge cannot lead to a composite node ({step.node['name']!r})",
                        )
                    pattern = getattr(pattern, _APPEND[step.edge])(target)
            assert pattern is not None
            self.node(pattern, step, composite)
            own_window = step.node.get("groupWindow" if composite else "window")
            if own_window is not None:
                self.window(pattern, own_window, f"{step.path}.{'groupWindow' if composite else 'window'}")
            if i == len(steps) - 1 and graph.get("window") is not None:
                self.window(pattern, graph["window"], f"{path}.window")
        assert pattern is not None
        return pattern

    def node(self, pattern: Pattern[Any], step: _Step, composite: bool) -> None:
        node, path = step.node, step.path
        name = node["name"]
        condition = node.get("condition")
        if condition is not None:
            if composite:
                raise RuleError(f"{path}.condition", "a composite node has no condition (its nodes do)")
            cond = self.condition(condition, f"{path}.condition", name)
            with _at(f"{path}.condition"):
                pattern.where(cond)
        quantifier = self.obj(node.get("quantifier"), f"{path}.quantifier") if "quantifier" in node else None
        if quantifier is None:
            raise RuleError(f"{path}.quantifier", "is required")
        # a group's until condition belongs to the group step, which the builder names GroupPattern
        self.quantifier(pattern, quantifier, f"{path}.quantifier", pattern.name if composite else name)

    def quantifier(self, pattern: Pattern[Any], q: dict[str, Any], path: str, step: str) -> None:
        inner = self.enum(q, "consumingStrategy", path, names.INNER_STRATEGIES)
        props = self.get(q, "properties", path, list, True)
        seen: list[str] = []
        for i, prop in enumerate(props):
            if prop not in names.PROPERTIES:
                raise RuleError(
                    f"{path}.properties[{i}]",
                    f"unknown property {_kind(prop)} (one of {', '.join(names.PROPERTIES)})",
                )
            if prop in seen:
                raise RuleError(f"{path}.properties[{i}]", f"{prop} is given twice")
            seen.append(prop)
        kinds = [p for p in seen if p in names.KINDS]
        if len(kinds) != 1:
            raise RuleError(
                f"{path}.properties", f"needs exactly one of SINGLE, LOOPING, TIMES, got {kinds or 'none'}"
            )
        kind = kinds[0]
        times = q.get("times")
        tpath = f"{path}.times"
        optional_done = False
        with _at(path):
            if kind == "SINGLE":
                if times is not None:
                    raise RuleError(tpath, "a SINGLE quantifier has no times (use TIMES or LOOPING)")
            elif kind == "LOOPING":
                low, _, window = self.times(times, tpath, looping=True)
                pattern.times_or_more(low, window=window)
            else:
                if times is None:
                    raise RuleError(tpath, "a TIMES quantifier needs times")
                low, high, window = self.times(times, tpath, looping=False)
                if "OPTIONAL" in seen and low == 1:
                    low, optional_done = 0, True  # times(0, n) is Flink's optional times(1, n)
                pattern.times(low, high, window=window)
            if "OPTIONAL" in seen and not optional_done:
                pattern.optional()
            if "GREEDY" in seen:
                pattern.greedy()
            if kind != "SINGLE":  # between the repetitions of a single step there is nothing
                if inner == "STRICT":
                    pattern.consecutive()
                elif inner == "SKIP_TILL_ANY":
                    pattern.allow_combinations()
        until = q.get("untilCondition")
        if until is not None:
            cond = self.condition(until, f"{path}.untilCondition", step)
            with _at(f"{path}.untilCondition"):
                pattern.until(cond)

    def times(self, value: Any, path: str, looping: bool) -> tuple[int, int, int | None]:
        if value is None:
            return 1, 1, None
        t = self.obj(value, path)
        low = self.get(t, "from", path, int, True)
        if low < (1 if looping else 0):
            raise RuleError(f"{path}.from", f"must be at least {1 if looping else 0}, got {low}")
        high = self.get(t, "to", path, int, not looping)
        if high is None:
            high = low
        if high < max(low, 1):
            raise RuleError(f"{path}.to", f"must be at least from ({low}) and 1, got {high}")
        window = t.get("windowTime")
        return low, high, None if window is None else self.duration(window, f"{path}.windowTime")

    def window(self, pattern: Pattern[Any], value: Any, path: str) -> None:
        windows = value if isinstance(value, list) else [value]
        seen: set[str] = set()
        for i, w in enumerate(windows):
            wpath = f"{path}[{i}]" if isinstance(value, list) else path
            d = self.obj(w, wpath)
            kind = self.enum(d, "type", wpath, names.WINDOW_TYPES, required=False) or "FIRST_AND_LAST"
            if kind in seen:
                raise RuleError(f"{wpath}.type", f"a second {kind} window")
            seen.add(kind)
            ms = self.duration(d.get("time"), f"{wpath}.time")
            pattern.within(ms, WithinType[kind])

    def skip(self, value: Any, path: str) -> AfterMatchSkipStrategy:
        if value is None:
            return AfterMatchSkipStrategy.no_skip()
        d = self.obj(value, path)
        kind = self.enum(d, "type", path, names.SKIP_TYPES)
        if kind in _SKIPS:
            return _SKIPS[kind]()
        target = self.get(d, "patternName", path, str, True)
        strategy = (
            AfterMatchSkipStrategy.skip_to_first(target)
            if kind == "SKIP_TO_FIRST"
            else AfterMatchSkipStrategy.skip_to_last(target)
        )
        if self.get(d, "throwExceptionOnMiss", path, bool, False):
            return strategy.throw_exception_on_miss()
        return strategy

    # --- conditions -----------------------------------------------------------------------------

    def condition(self, value: Any, path: str, step: str) -> Condition:
        d = self.obj(value, path)
        kind = self.enum(d, "type", path, names.CONDITION_TYPES)
        if kind in names.EXPRESSION_TYPES:
            text = self.get(d, "expression", path, str, True)
            try:
                return expression_condition(text, step, self.variables, kind, self.access)
            except ExpressionSyntaxError as exc:
                raise RuleError(f"{path}.expression", f"{text!r}: {exc}") from None
        if kind != "CLASS":
            raise RuleError(
                f"{path}.type",
                f"{kind} conditions run JVM code and cannot run here: write the expression as type SQL "
                "(or AVIATOR), or register a Python condition and name it in a CLASS condition",
            )
        class_name = self.get(d, "className", path, str, True)
        if d.get("nestedConditions") is not None:
            return self.nested(d, class_name, path, step)
        if d.get("subClassName") is not None:
            if class_name != names.SUBTYPE_CLASS and not class_name.endswith(".SubtypeCondition"):
                raise RuleError(
                    f"{path}.className", f"subClassName goes with {names.SUBTYPE_CLASS}, not {class_name!r}"
                )
            sub = self.get(d, "subClassName", path, str, True)
            try:
                return SubtypeCondition(self.lookup().subtype(sub))
            except KeyError as exc:
                raise RuleError(f"{path}.subClassName", exc.args[0]) from None
        args = self.get(d, "args", path, list, False)
        if args is not None:
            for i, a in enumerate(args):
                if not isinstance(a, str):
                    raise RuleError(f"{path}.args[{i}]", f"expected a string, got {_kind(a)}")
        try:
            return self.lookup().condition(class_name, *(args or ()))
        except KeyError as exc:
            raise RuleError(f"{path}.className", exc.args[0]) from None
        except Exception as exc:  # a factory refusing its arguments
            raise RuleError(
                f"{path}.args", f"condition {class_name!r}: {type(exc).__name__}: {exc}"
            ) from None

    def nested(self, d: dict[str, Any], class_name: str, path: str, step: str) -> Condition:
        parts = self.get(d, "nestedConditions", path, list, True)
        conds = [self.condition(p, f"{path}.nestedConditions[{i}]", step) for i, p in enumerate(parts)]
        short = class_name.rsplit(".", 1)[-1]
        if short == "RichNotCondition":
            if len(conds) != 1:
                raise RuleError(f"{path}.nestedConditions", f"NOT takes one condition, got {len(conds)}")
            return RichNotCondition(conds[0])
        if short in ("RichAndCondition", "RichOrCondition"):
            if len(conds) < 2:
                raise RuleError(
                    f"{path}.nestedConditions", f"{short} takes two or more conditions, got {len(conds)}"
                )
            kind = RichAndCondition if short == "RichAndCondition" else RichOrCondition
            result: Condition = conds[0]
            for c in conds[1:]:
                result = kind(result, c)
            return result
        raise RuleError(
            f"{path}.className",
            f"nestedConditions go with {names.AND_CLASS}, {names.OR_CLASS} or {names.NOT_CLASS}, not {class_name!r}",
        )

    def lookup(self) -> ConditionRegistry:
        return self.registry if self.registry is not None else ConditionRegistry()


@contextmanager
def _at(path: str) -> Iterator[None]:
    """Turns the builder's exceptions (Flink's checks) into a ``RuleError`` at ``path``."""
    try:
        yield
    except _BUILDER_ERRORS as exc:
        raise RuleError(path, str(exc)) from exc


def read_document(
    document: Any, registry: ConditionRegistry | None = None, access: str = ANY
) -> Pattern[Any]:
    """The pattern of one rule document: JSON text (str or bytes) or a parsed dict."""
    if isinstance(document, (str, bytes, bytearray)):
        try:
            document = json.loads(document)
        except json.JSONDecodeError as exc:
            raise RuleError("$", f"not JSON: {exc}") from None
    graph = _Reader.obj(document, "$")
    reader = _Reader(registry, access)
    reader.enum(graph, "type", "$", ("COMPOSITE",), required=False)
    if not reader.get(graph, "name", "$", str, True):
        raise RuleError("$.name", "must not be empty")
    version = reader.get(graph, "version", "$", int, False)
    if version is not None and version != names.FORMAT_VERSION:
        raise RuleError(
            "$.version",
            f"format version {version} is not supported (this reader knows {names.FORMAT_VERSION})",
        )
    reader.collect(graph, "$")
    return reader.graph(graph, "$")
