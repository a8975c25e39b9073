"""``RuleError``: a JSON rule that cannot be read or written; the message starts with where."""

from __future__ import annotations


class RuleError(ValueError):
    """``path`` is the JSON path of the bad part (``$.nodes[2].quantifier.times.from``), or the
    step of a pattern that cannot be written; ``problem`` says what is wrong with it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
