"""Compile expression trees into Python functions, once: source generated from the validated
tree (names become string constants, values become literals or bound constants), compiled with
``compile`` and registered with ``linecache`` so tracebacks show it. No user text is evaluated.

Two contexts:

* a condition (DEFINE of ``variable``): ``fn(event)``, or ``fn(event, ctx)`` when it reads other
  rows of the partial match through ``ctx.get_events_for_pattern``; the row being tested counts as
  ``variable``'s last row and as the last row of the default variable;
* measures: ``fn(match) -> tuple`` of values over a finished match ``{variable: [rows]}``.

Each sub-expression is compiled in one of two ways: as a SQL value (True/False/None for
predicates) or, where only "is it TRUE" matters (a condition's top, CASE WHEN, under AND/OR
there), as a Python truth value with NULL falsy, so that AND/OR become Python's ``and``/``or``.
"""

from __future__ import annotations

import itertools
import keyword
import linecache
from collections.abc import Callable, Sequence
from typing import Any

from flowcep.expr import functions as fns
from flowcep.expr.nodes import (
    COMPARISONS,
    Aggregate,
    And,
    Between,
    Binary,
    Call,
    Case,
    Cast,
    Expr,
    Field,
    In,
    IsNull,
    Like,
    Literal,
    MatchRowtime,
    Navigation,
    Negate,
    Not,
    Or,
    field_vars,
    walk,
)

ITEM = "item"  # rows are mappings: row["price"]
ATTR = "attr"  # rows are objects: row.price
ANY = "any"  # rows are dicts or objects, told apart row by row (JSON rules: the rule does not know)

_PY_COMPARE = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_SIMPLE_LITERALS = (bool, int, float, str, type(None))
_sources = itertools.count()


class ExpressionError(ValueError):
    """An expression that cannot be compiled; the message names the construct."""


class _Generator:
    """Generates one function's source; each instance is used once."""

    def __init__(
        self, variables: Sequence[str], access: str, current: str | None, time_field: str | None
    ) -> None:
        if access not in (ITEM, ATTR, ANY):
            raise ValueError(f"access must be {ITEM!r}, {ATTR!r} or {ANY!r}, got {access!r}")
        self.variables = tuple(variables)
        self.access = access
        self.current = current  # a condition's variable; None compiles measures
        self.time_field = time_field
        self.constants: dict[str, Any] = {}
        self.row_lists: dict[str | None, str] = {}  # variable -> local holding its rows
        self.uses_ctx = False
        self._temps = itertools.count()

    # --- names ------------------------------------------------------------------------------------

    def temp(self) -> str:
        return f"_t{next(self._temps)}"

    def constant(self, value: Any) -> str:
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def literal(self, value: Any) -> str:
        if type(value) in _SIMPLE_LITERALS:
            return repr(value)
        return self.constant(value)

    def column(self, row: str, name: str) -> str:
        if self.access == ITEM:
            return f"{row}[{name!r}]"
        if name.isidentifier() and not keyword.iskeyword(name):
            attribute = f"{row}.{name}"
        else:
            attribute = f"getattr({row}, {name!r})"
        if self.access == ANY:  # (row is a local or a subscript of one: reading it twice is cheap)
            return f"({row}[{name!r}] if isinstance({row}, dict) else {attribute})"
        return attribute

    # --- rows ---------------------------------------------------------------------------------------

    def check_var(self, var: str | None) -> None:
        if var is not None and var not in self.variables:
            raise ExpressionError(
                f"unknown pattern variable {var!r} (the pattern has {', '.join(self.variables)})"
            )

    def rows(self, var: str | None) -> str:
        """An expression for the list of ``var``'s rows (None: all rows, in match order), loaded on
        first use and kept in a local."""
        self.check_var(var)
        local = self.row_lists.get(var)
        if local is None:
            local = self.row_lists[var] = f"_rows{len(self.row_lists)}"
        return f"({local} if {local} is not None else ({local} := {self.load_rows(var)}))"

    def load_rows(self, var: str | None) -> str:
        names = self.variables if var is None else (var,)
        if self.current is None:
            parts = [f"*m.get({n!r}, ())" for n in names]
            return f"[{', '.join(parts)}]"
        self.uses_ctx = True
        parts = [f"*ctx.get_events_for_pattern({n!r})" for n in names]
        if var is None or var == self.current:
            parts.append("e")
        return f"[{', '.join(parts)}]"

    # --- values ---------------------------------------------------------------------------------------

    def value(self, node: Expr, row: str | None = None) -> str:
        """Python source for ``node``'s SQL value; ``row`` names the row fields read (inside
        navigation and aggregates), else fields follow their variable."""
        if isinstance(node, Literal):
            return self.literal(node.value)
        if isinstance(node, Field):
            return self.field(node, row)
        if isinstance(node, Negate):
            return self.strict("-{0}", [node.operand], row)
        if isinstance(node, Binary):
            return self.binary(node, row)
        if isinstance(node, (And, Or)):
            return self.logic(node, row)
        if isinstance(node, Not):
            t = self.temp()
            return f"(None if ({t} := {self.value(node.operand, row)}) is None else not {t})"
        if isinstance(node, IsNull):
            if isinstance(node.operand, Literal):  # folded: "0 is None" is a SyntaxWarning
                return repr((node.operand.value is None) != node.negated)
            return f"({self.value(node.operand, row)} is {'not ' if node.negated else ''}None)"
        if isinstance(node, In):
            return self.in_(node, row)
        if isinstance(node, Between):
            return self.value(self.between(node), row)
        if isinstance(node, Like):
            regex = self.constant(fns.like_regex(node.pattern, node.escape))
            test = "is None" if node.negated else "is not None"
            return self.strict(f"({regex}.fullmatch({{0}}) {test})", [node.operand], row)
        if isinstance(node, Call):
            return self.call(node, row)
        if isinstance(node, Case):
            out = "None" if node.default is None else self.value(node.default, row)
            for cond, result in reversed(node.whens):
                out = f"({self.value(result, row)} if {self.truth(cond, row)} else {out})"
            return out
        if isinstance(node, Cast):
            cast = fns.CASTS.get(node.type.upper())
            if cast is None:
                raise ExpressionError(
                    f"CAST to {node.type} is not supported (supported: {', '.join(fns.CASTS)})"
                )
            return f"{self.constant(cast)}({self.value(node.operand, row)})"
        if isinstance(node, Navigation):
            return self.navigation(node, row)
        if isinstance(node, Aggregate):
            return self.aggregate(node, row)
        if isinstance(node, MatchRowtime):
            if self.current is not None:
                raise ExpressionError("MATCH_ROWTIME() is only allowed in MEASURES")
            if self.time_field is None:
                raise ExpressionError("MATCH_ROWTIME() needs the time column (ORDER BY)")
            return self.field(Field(self.time_field), None)
        raise ExpressionError(f"not an expression node: {node!r}")

    def field(self, node: Field, row: str | None) -> str:
        if row is not None:
            return self.column(row, node.name)
        self.check_var(node.var)
        if self.current is not None and node.var in (None, self.current):
            return self.column("e", node.name)  # the row being tested
        t = self.temp()
        return f"(None if not ({t} := {self.rows(node.var)}) else {self.column(f'{t}[-1]', node.name)})"

    def strict(self, template: str, operands: Sequence[Expr], row: str | None) -> str:
        """``template`` formatted with the operands, NULL if any operand is NULL."""
        names = []
        checks = []
        for operand in operands:
            if isinstance(operand, Literal) and operand.value is not None:
                names.append(self.literal(operand.value))
                continue
            t = self.temp()
            checks.append(f"({t} := {self.value(operand, row)}) is None")
            names.append(t)
        body = template.format(*names)
        return f"(None if {' or '.join(checks)} else {body})" if checks else f"({body})"

    def binary(self, node: Binary, row: str | None) -> str:
        op = node.op
        if op in COMPARISONS:
            return self.strict(f"{{0}} {_PY_COMPARE[op]} {{1}}", [node.left, node.right], row)
        if op in ("+", "-", "*"):
            return self.strict(f"{{0}} {op} {{1}}", [node.left, node.right], row)
        helper = {"/": fns.java_div, "%": fns.java_mod, "||": fns.concat}[op]
        return f"{self.constant(helper)}({self.value(node.left, row)}, {self.value(node.right, row)})"

    def logic(self, node: And | Or, row: str | None) -> str:
        # three-valued: AND is FALSE once an operand is FALSE, else NULL if any was NULL, else
        # TRUE; OR the same way round. Operands after the deciding one are not evaluated.
        is_and = isinstance(node, And)
        temps = []
        parts = []
        for operand in node.operands:
            t = self.temp()
            temps.append(t)
            source = self.value(operand, row)
            if is_and:
                parts.append(f"False if ({t} := {source}) is not None and not {t} else")
            else:
                parts.append(f"True if ({t} := {source}) else")
        any_null = " or ".join(f"{t} is None" for t in temps)
        return f"({' '.join(parts)} None if {any_null} else {'True' if is_and else 'False'})"

    def in_(self, node: In, row: str | None) -> str:
        values = [o.value for o in node.options if isinstance(o, Literal)]
        if len(values) == len(node.options):
            has_null = any(v is None for v in values)
            try:
                options = self.constant(frozenset(v for v in values if v is not None))
            except TypeError:
                options = self.constant(tuple(v for v in values if v is not None))
        else:
            has_null = False
            options = "(" + "".join(f"{self.value(o, row)}, " for o in node.options) + ")"
        t = self.temp()
        miss = "None" if has_null else ("True" if node.negated else "False")
        hit = "False" if node.negated else "True"
        return f"(None if ({t} := {self.value(node.operand, row)}) is None else ({hit} if {t} in {options} else {miss}))"

    @staticmethod
    def between(node: Between) -> Expr:
        inside = And((Binary(">=", node.operand, node.low), Binary("<=", node.operand, node.high)))
        return Not(inside) if node.negated else inside

    def call(self, node: Call, row: str | None) -> str:
        name = node.name.upper()
        spec = fns.FUNCTIONS.get(name)
        if spec is None:
            raise ExpressionError(
                f"function {name} is not supported (supported: {', '.join(sorted(fns.FUNCTIONS))})"
            )
        fn, least, most = spec
        if not least <= len(node.args) <= most:
            raise ExpressionError(
                f"{name} takes {least}"
                + (f" to {most}" if most != least else "")
                + f" arguments, got {len(node.args)}"
            )
        args = ", ".join(self.value(a, row) for a in node.args)
        return f"{self.constant(fn)}({args})"

    def single_var(self, what: str, operand: Expr | None, var: str | None) -> None:
        if operand is None:
            return
        named = field_vars(operand)
        if len(named) > 1 or (named and named != {var}):
            shown = ", ".join(sorted(v or "(none)" for v in named))
            raise ExpressionError(
                f"{what}: all columns in the argument must reference one pattern variable, not {shown}"
            )
        for inner in walk(operand):
            if isinstance(inner, (Navigation, Aggregate, MatchRowtime)):
                raise ExpressionError(f"{what}: navigation and aggregates cannot be nested")

    def navigation(self, node: Navigation, row: str | None) -> str:
        self.single_var(f"{node.kind}()", node.operand, node.var)
        t = self.temp()
        index = f"{node.offset}" if node.kind == "FIRST" else f"{-1 - node.offset}"
        return (
            f"(None if len({t} := {self.rows(node.var)}) <= {node.offset} "
            f"else {self.value(node.operand, f'{t}[{index}]')})"
        )

    def aggregate(self, node: Aggregate, row: str | None) -> str:
        self.single_var(f"{node.name}()", node.operand, node.var)
        rows = self.rows(node.var)
        if node.operand is None:
            return f"len({rows})"
        r, t = self.temp(), self.temp()
        # (a walrus may not sit in a comprehension's iterable: the rows are bound first)
        values = f"[{self.value(node.operand, r)} for {r} in {t}]"
        agg = self.constant(fns.AGGREGATE_FUNCTIONS[node.name])
        return f"({agg}({values}) if ({t} := {rows}) is not None else None)"

    # --- truth -------------------------------------------------------------------------------------

    def truth(self, node: Expr, row: str | None = None) -> str:
        """Python source that is truthy exactly when ``node`` is SQL TRUE."""
        if isinstance(node, And):
            return "(" + " and ".join(self.truth(o, row) for o in node.operands) + ")"
        if isinstance(node, Or):
            return "(" + " or ".join(self.truth(o, row) for o in node.operands) + ")"
        if isinstance(node, Not):
            t = self.temp()
            return f"(({t} := {self.value(node.operand, row)}) is not None and not {t})"
        if isinstance(node, Between) and not node.negated:
            return self.truth(self.between(node), row)
        if isinstance(node, Binary) and node.op in COMPARISONS:
            parts = []
            names = []
            for operand in (node.left, node.right):
                if isinstance(operand, Literal) and operand.value is not None:
                    names.append(self.literal(operand.value))
                    continue
                t = self.temp()
                parts.append(f"({t} := {self.value(operand, row)}) is not None")
                names.append(t)
            parts.append(f"{names[0]} {_PY_COMPARE[node.op]} {names[1]}")
            return "(" + " and ".join(parts) + ")"
        return self.value(node, row)

    # --- functions ----------------------------------------------------------------------------------

    def prologue(self) -> list[str]:
        if not self.row_lists:
            return []
        return ["    " + " = ".join(self.row_lists.values()) + " = None"]

    def build(self, name: str, params: str, body: list[str], kind: str) -> Callable[..., Any]:
        lines = [f"def {name}({params}):", *self.prologue(), *body]
        source = "\n".join(lines) + "\n"
        filename = f"<flowcep-{kind}-{next(_sources)}>"
        namespace: dict[str, Any] = dict(self.constants)
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - source generated from a validated tree
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        fn: Callable[..., Any] = namespace[name]
        fn.__flowcep_source__ = source  # type: ignore[attr-defined]
        return fn


def compile_condition_function(
    expr: Expr,
    variable: str,
    variables: Sequence[str],
    access: str = ITEM,
) -> tuple[Callable[..., Any], bool]:
    """``(fn, iterative)`` for the condition ``expr`` of ``variable``: ``fn(event)``, or
    ``fn(event, ctx)`` if it reads other rows of the partial match."""
    gen = _Generator(variables, access, variable, None)
    test = gen.truth(expr)
    if gen.uses_ctx:
        return gen.build("condition", "e, ctx", [f"    return {test}"], "condition"), True
    return gen.build("condition", "e", [f"    return {test}"], "condition"), False


def compile_measures_function(
    measures: Sequence[Expr],
    variables: Sequence[str],
    access: str = ITEM,
    time_field: str | None = None,
) -> Callable[[dict[str, list[Any]]], tuple[Any, ...]]:
    """``fn(match) -> tuple`` of the measures' values over a match ``{variable: [rows]}``."""
    gen = _Generator(variables, access, None, time_field)
    values = [gen.value(m) for m in measures]
    body = ["    return (" + "".join(f"{v}, " for v in values) + ")"]
    return gen.build("measures", "m", body, "measures")
