"""The error of a query flowcep cannot run: unsupported or malformed MATCH_RECOGNIZE."""

from __future__ import annotations


class SqlError(ValueError):
    """A query that cannot be compiled; the message names the clause and the construct."""
