"""Documented deviations from Flink CEP 2.3 (docs/semantics.md section 10), as predicates on a
differential case and both results: what the differential test accepts and what
``differential.py`` labels as known."""

from __future__ import annotations

from typing import Any


def _runs_on(case: dict[str, Any], mine: dict[str, Any]) -> bool:
    """flowcep ran the pattern that Flink failed on: no error, or the error of a skip strategy
    with throw_exception_on_miss on a match without its step (which Flink raises too, when it
    gets that far; semantics.md 10.1 and 10.6)."""
    err = mine.get("error")
    if err is None:
        return True
    skip = case.get("skip") or []
    return (
        err.get("type") == "FlinkRuntimeException"
        and (err.get("message") or "").startswith("Could not skip to")
        and len(skip) == 3
        and skip[2] is True
    )


def _flink_null_pointer(case: dict[str, Any], flink: dict[str, Any], mine: dict[str, Any]) -> bool:
    err = flink.get("error") or {}
    return err.get("type") == "NullPointerException" and not err.get("message") and _runs_on(case, mine)


def _other_key_failed_first(case: dict[str, Any], flink: dict[str, Any], mine: dict[str, Any]) -> bool:
    a, b = flink.get("error") or {}, mine.get("error") or {}
    if not a or not b or a.get("type") != b.get("type") or a.get("message") == b.get("message"):
        return False
    head_a = (a.get("message") or "").split("{", 1)[0]
    head_b = (b.get("message") or "").split("{", 1)[0]
    return bool(head_a) and head_a == head_b and len({e.get("key", "k") for e in case["events"]}) > 1


def _compiler_cycle(case: dict[str, Any], flink: dict[str, Any], mine: dict[str, Any]) -> bool:
    a, b = flink.get("error") or {}, mine.get("error") or {}
    return (
        a.get("type") == "StackOverflowError"
        and a.get("stage") == "compile"
        and b.get("type") == "MalformedPatternException"
        and "which Flink's compiler copies without end" in (b.get("message") or "")
    )


def _flink_state_is_null(case: dict[str, Any], flink: dict[str, Any], mine: dict[str, Any]) -> bool:
    err = flink.get("error") or {}
    message = err.get("message") or ""
    return (
        err.get("type") == "NullPointerException"
        and err.get("stage") == "runtime"
        and "org.apache.flink.cep.nfa.State" in message
        and "is null" in message
        and _runs_on(case, mine)
    )


# Intentional deviations from Flink, each documented in docs/semantics.md. Each entry: a
# reference and a predicate on (case, flink_result, flowcep_result).
KNOWN_DEVIATIONS: list[tuple[str, Any]] = [
    ("docs/semantics.md 10.1: Flink's NullPointerException, flowcep matches", _flink_null_pointer),
    ("docs/semantics.md 10.3: at one watermark another key's error came first", _other_key_failed_first),
    ("docs/semantics.md 10.5: Flink's compiler copies a PROCEED cycle without end", _compiler_cycle),
    ("docs/semantics.md 10.6: Flink follows a transition without a target state", _flink_state_is_null),
]


def known_deviation(case: dict[str, Any], flink: dict[str, Any], mine: dict[str, Any]) -> str | None:
    """The reference of the documented deviation that explains the difference, or None."""
    for ref, predicate in KNOWN_DEVIATIONS:
        if predicate(case, flink, mine):
            return ref
    return None
