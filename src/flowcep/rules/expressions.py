"""A JSON rule's expression conditions, compiled by the one expression language (``flowcep.expr``).

``"SQL"`` conditions are Flink SQL expressions, the dialect of MATCH_RECOGNIZE's DEFINE clause
(parsed by ``flowcep.sql``): ``price > 10 AND name IN ('a', 'b')``, ``UPPER(city) LIKE 'PAR%'``,
``amount > 2 * LAST(probe.amount)``, ``SUM(small.amount) < 100``. A step's own fields are plain
names; ``step.field`` reads the last event of an earlier step (or, in a looping step, of itself).

``"AVIATOR"`` conditions (Ververica's) are read in the subset that has one meaning in both
languages: comparisons with ``== != < <= > >=``, ``&& || !``, arithmetic, numbers, strings in
single or double quotes and ``nil``. They are rewritten token by token into the SQL dialect
(``a == 1 && b != 'x'`` is ``a = 1 AND b <> 'x'``); anything else (regular expressions, function
calls, nested fields) is refused with the reason, rather than read with another meaning.
"""

from __future__ import annotations

from collections.abc import Sequence

from flowcep.expr import ExpressionCondition, ExpressionError

_AVIATOR_OPERATORS = {"&&": " AND ", "||": " OR ", "==": " = ", "!=": " <> "}
_AVIATOR_REFUSED = {
    "=~": "regular expression matching (=~) is not supported",
    "(": "function calls are not supported",  # after a name; plain parentheses pass
}


class ExpressionSyntaxError(ValueError):
    """An expression that cannot be read; the message says why."""


def expression_condition(
    text: str, step: str, steps: Sequence[str], dialect: str = "SQL", access: str = "any"
) -> ExpressionCondition:
    """The condition ``text`` of step ``step`` in a pattern whose steps are ``steps`` (in order).

    Build conditions for ``Pattern.to_json`` with this: the condition keeps its text.
    """
    if dialect not in ("SQL", "AVIATOR"):
        raise ValueError(f"dialect must be 'SQL' or 'AVIATOR', got {dialect!r}")
    sql = aviator_to_sql(text) if dialect == "AVIATOR" else text
    try:
        from flowcep.sql.errors import SqlError
        from flowcep.sql.query import parse_expression
    except ImportError as exc:  # depends on the environment
        raise ImportError("expression conditions are parsed by sqlglot: pip install 'flowcep[sql]'") from exc
    try:
        tree = parse_expression(sql, step, steps)
        return ExpressionCondition(tree, step, steps, access, text, dialect)
    except (SqlError, ExpressionError) as exc:
        message = str(exc)
        prefix = f"{step}: "
        raise ExpressionSyntaxError(
            message[len(prefix) :] if message.startswith(prefix) else message
        ) from exc


def aviator_to_sql(text: str) -> str:
    """``text``, an expression of Aviator's common subset, in the SQL dialect (module docstring)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            j = i + 1
            chars: list[str] = []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                chars.append(text[j])
                j += 1
            if j >= n:
                raise ExpressionSyntaxError(f"unterminated string at position {i}")
            out.append("'" + "".join(chars).replace("'", "''") + "'")
            i = j + 1
            continue
        pair = text[i : i + 2]
        if pair in _AVIATOR_OPERATORS:
            out.append(_AVIATOR_OPERATORS[pair])
            i += 2
            continue
        if pair in ("<=", ">="):
            out.append(pair)
            i += 2
            continue
        if pair == "=~":
            raise ExpressionSyntaxError(_AVIATOR_REFUSED["=~"])
        if c == "!":
            out.append(" NOT ")
            i += 1
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k] == " ":
                k += 1
            if k < n and text[k] == "(":
                raise ExpressionSyntaxError(f"{word}(...): {_AVIATOR_REFUSED['(']}")
            if k < n and text[k] == ".":
                raise ExpressionSyntaxError(f"{word}.: nested fields are not supported")
            if word.upper() in ("AND", "OR", "NOT", "IN", "LIKE", "IS", "BETWEEN", "NULL", "CASE"):
                raise ExpressionSyntaxError(
                    f"{word!r} is SQL, not Aviator: use the type SQL for this expression"
                )
            out.append("NULL" if word == "nil" else word)
            i = j
            continue
        if c == "=":
            raise ExpressionSyntaxError("'=' assigns in Aviator: compare with '=='")
        out.append(c)
        i += 1
    return "".join(out)
