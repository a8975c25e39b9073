"""The PATTERN clause: a sequence of pattern variables with quantifiers.

sqlglot keeps PATTERN as raw text (it has no tree for row pattern syntax), so it is read here.
Flink SQL 2.3 runs concatenation of variables, each with an optional quantifier ``* + ? {n}
{n,} {n,m} {,m}`` and an optional reluctant ``?``; what it rejects is rejected here with its
reason: groups, alternation ``|``, PERMUTE, exclusion ``{- -}``, anchors ``^ $``.
"""

from __future__ import annotations

import re

import attrs

from flowcep.sql.errors import SqlError

INFINITE = -1

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<name>[A-Za-z_][A-Za-z0-9_$]*|`(?:[^`]|``)+`|"(?:[^"]|"")+")
    | (?P<braces>\{-|-\}|\{\s*(?P<low>\d*)\s*(?P<comma>,)?\s*(?P<high>\d*)\s*\})
    | (?P<op>[*+?()|^$,])
    )""",
    re.VERBOSE,
)


@attrs.frozen(slots=True)
class Term:
    """One pattern variable with its quantifier: ``low`` to ``high`` rows (``INFINITE``)."""

    var: str
    low: int = 1
    high: int = 1
    greedy: bool = True

    def text(self) -> str:
        if (self.low, self.high) == (1, 1):
            return self.var
        quantifier = {(0, INFINITE): "*", (1, INFINITE): "+", (0, 1): "?"}.get((self.low, self.high))
        if quantifier is None:
            high = "" if self.high == INFINITE else str(self.high)
            quantifier = f"{{{self.low}}}" if self.low == self.high else f"{{{self.low},{high}}}"
        return self.var + quantifier + ("" if self.greedy else "?")


def _unquote(name: str) -> str:
    if name[0] in '`"':
        return name[1:-1].replace(name[0] * 2, name[0])
    return name


def parse_pattern(text: str) -> tuple[Term, ...]:
    """The terms of a PATTERN clause's text (without its outer parentheses)."""
    terms: list[Term] = []
    quantified = False  # whether the last term has its quantifier already
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SqlError(f"PATTERN: cannot read {text[pos:].strip()!r} in ({text})")
        pos = m.end()
        if m.group("name"):
            name = m.group("name")
            if name.upper() == "PERMUTE" and text[pos:].lstrip().startswith("("):
                raise SqlError(
                    f"PATTERN ({text}): PERMUTE is not supported (Flink SQL: CEP doesn't support PERMUTE patterns)"
                )
            terms.append(Term(_unquote(name)))
            quantified = False
            continue
        op = m.group("op") or ""
        braces = m.group("braces") or ""
        if op == "(" or op == ")":
            raise SqlError(
                f"PATTERN ({text}): groups are not supported (Flink SQL: Group patterns are not supported yet)"
            )
        if op == "|":
            raise SqlError(
                f"PATTERN ({text}): alternation '|' is not supported (Flink SQL: CEP doesn't support branching patterns)"
            )
        if op in ("^", "$"):
            raise SqlError(
                f"PATTERN ({text}): anchor {op!r} is not supported (anchors have no meaning on a stream)"
            )
        if braces in ("{-", "-}"):
            raise SqlError(
                f"PATTERN ({text}): exclusion {{- -}} is not supported (Flink SQL: CEP doesn't support '{{-' '-}}' patterns)"
            )
        if op == ",":
            raise SqlError(f"PATTERN ({text}): unexpected ','")
        if not terms:
            raise SqlError(f"PATTERN ({text}): a quantifier must follow a pattern variable")
        last = terms[-1]
        if op == "?" and quantified and last.greedy:
            terms[-1] = attrs.evolve(last, greedy=False)  # reluctant: the '?' after a quantifier
            continue
        if quantified:
            raise SqlError(f"PATTERN ({text}): {last.text()} has a second quantifier")
        quantified = True
        if op == "*":
            terms[-1] = attrs.evolve(last, low=0, high=INFINITE)
        elif op == "+":
            terms[-1] = attrs.evolve(last, low=1, high=INFINITE)
        elif op == "?":
            terms[-1] = attrs.evolve(last, low=0, high=1)
        else:
            low_text, high_text = m.group("low"), m.group("high")
            if not m.group("comma"):
                if not low_text:
                    raise SqlError(f"PATTERN ({text}): empty quantifier {{}}")
                low = high = int(low_text)
            else:
                if not low_text:  # Flink SQL 2.3 fails {,m} this way (measured)
                    raise SqlError(
                        f"PATTERN ({text}): {{,{high_text}}}: The from should be a positive number greater than 0."
                    )
                low = int(low_text)
                high = int(high_text) if high_text else INFINITE
            if high != INFINITE and high < low:
                raise SqlError(
                    f"PATTERN ({text}): quantifier {{{low},{high}}} has its maximum below its minimum"
                )
            terms[-1] = attrs.evolve(last, low=low, high=high)
    if not terms:
        raise SqlError("PATTERN: the pattern is empty")
    seen: set[str] = set()
    for term in terms:
        if term.var in seen:
            raise SqlError(
                f"PATTERN ({text}): variable {term.var} appears twice (Flink SQL: Pattern variables must be unique)"
            )
        seen.add(term.var)
    return tuple(terms)
