"""Loading a pattern file: a Python file that defines ``pattern`` (and may define ``select``).

A pattern file is an ordinary Python script. The command line runs it with ``__name__`` set to
``"__flowcep__"`` (so an ``if __name__ == "__main__":`` block does not run) and reads:

``pattern``  (required) a :class:`flowcep.Pattern`, or a function of no arguments returning one;
             or, instead, ``hierarchy``: a :class:`flowcep.hierarchy.Hierarchy` (event
             hierarchies, docs/semantics.md section 11);
``select``   (optional) ``select(match) -> value``, applied to every match, whose result is
             written as the match's ``value``; ``match`` maps step names to lists of events;
``timeout``  (optional) ``timeout(partial_match) -> value``, the same for timed-out partial
             matches.

The examples in ``examples/`` are pattern files too.

A ``.json`` file is a JSON rule instead (docs/rules.md): one rule document, or an array holding
one. Its conditions must be expressions (SQL or AVIATOR): the command line has no registry for
CLASS conditions.
"""

from __future__ import annotations

import runpy
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_PATTERN, CliError

RUN_NAME = "__flowcep__"


@dataclass
class PatternFile:
    """What a pattern file defines."""

    path: Path
    pattern: Any
    select: Callable[[Any], Any] | None
    timeout: Callable[[Any], Any] | None
    namespace: dict[str, Any]
    hierarchy: Any = None  # a checked HierarchyPlan, when the file defines ``hierarchy`` (then no pattern)


def load_pattern_file(path: str | Path) -> PatternFile:
    """Run ``path`` and return what it defines; :class:`CliError` (exit status 3) if it cannot."""
    from flowcep.pattern import Pattern

    p = Path(path)
    if not p.exists():
        raise CliError(f"pattern file not found: {path}", EXIT_PATTERN)
    if p.is_dir():
        raise CliError(f"pattern file is a directory: {path}", EXIT_PATTERN)
    if p.suffix.lower() == ".json":
        return _rule_file(p)
    try:
        namespace = runpy.run_path(str(p), run_name=RUN_NAME)
    except SyntaxError as e:
        where = f"{e.filename or path}:{e.lineno}" if e.lineno else str(path)
        raise CliError(f"bad pattern file {where}: syntax error: {e.msg}", EXIT_PATTERN) from None
    except SystemExit as e:
        raise CliError(f"bad pattern file {path}: it called exit({e.code})", EXIT_PATTERN) from None
    except Exception as e:
        raise CliError(f"bad pattern file {path}: {_describe_exception(e, p)}", EXIT_PATTERN) from None

    if "pattern" not in namespace and "hierarchy" in namespace:
        return _hierarchy_file(p, namespace)
    if "pattern" not in namespace:
        defined = sorted(k for k in namespace if not k.startswith("_"))
        raise CliError(
            f"bad pattern file {path}: it defines no `pattern` "
            f"(expected e.g. pattern = Pattern.begin('a').where(...); it defines: {', '.join(defined) or 'nothing'})",
            EXIT_PATTERN,
        )
    pattern = namespace["pattern"]
    if callable(pattern) and not isinstance(pattern, Pattern):
        try:
            pattern = pattern()
        except Exception as e:
            raise CliError(
                f"bad pattern file {path}: pattern() raised {_describe_exception(e, p)}", EXIT_PATTERN
            ) from None
    if not isinstance(pattern, Pattern):
        raise CliError(
            f"bad pattern file {path}: `pattern` is a {type(pattern).__name__}, not a flowcep Pattern",
            EXIT_PATTERN,
        )
    select = namespace.get("select")
    timeout = namespace.get("timeout")
    for name, fn in (("select", select), ("timeout", timeout)):
        if fn is not None and not callable(fn):
            raise CliError(f"bad pattern file {path}: `{name}` is not a function", EXIT_PATTERN)
    return PatternFile(path=p, pattern=pattern, select=select, timeout=timeout, namespace=namespace)


def _rule_file(path: Path) -> PatternFile:
    """A JSON rule file: one document, or an array of exactly one."""
    import json

    from flowcep.rules import RuleError, read_document

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CliError(f"bad rule file {path}: not JSON: {e}", EXIT_PATTERN) from None
    root = "$"
    if isinstance(data, list):
        if len(data) != 1:
            raise CliError(
                f"bad rule file {path}: it holds {len(data)} rules; this command runs one rule", EXIT_PATTERN
            )
        data, root = data[0], "$[0]"
    try:
        pattern = read_document(data)
    except RuleError as e:
        raise CliError(f"bad rule file {path}: {root}{e.path[1:]}: {e.problem}", EXIT_PATTERN) from None
    except ImportError as e:  # sqlglot, which parses the expressions, is missing
        raise CliError(f"cannot read rule file {path}: {e}", EXIT_DEPENDENCY) from None
    return PatternFile(path=path, pattern=pattern, select=None, timeout=None, namespace={})


def _hierarchy_file(path: Path, namespace: dict[str, Any]) -> PatternFile:
    from flowcep.hierarchy import Hierarchy, HierarchyError, HierarchyPlan

    hierarchy = namespace["hierarchy"]
    if not isinstance(hierarchy, (Hierarchy, HierarchyPlan)):
        raise CliError(
            f"bad pattern file {path}: `hierarchy` is a {type(hierarchy).__name__}, not a flowcep.hierarchy.Hierarchy",
            EXIT_PATTERN,
        )
    try:
        plan = hierarchy.build()
    except HierarchyError as e:
        raise CliError(f"bad hierarchy in {path}: {e}", EXIT_PATTERN) from None
    for name in ("select", "timeout"):
        if name in namespace:
            raise CliError(
                f"bad pattern file {path}: `{name}` is not supported with a hierarchy "
                "(its matches are written as complex events)",
                EXIT_PATTERN,
            )
    return PatternFile(
        path=path, pattern=None, select=None, timeout=None, namespace=namespace, hierarchy=plan
    )


def _describe_exception(e: BaseException, path: Path) -> str:
    """The exception and the innermost line of the pattern file it came from."""
    text = f"{type(e).__name__}: {e}"
    frames = [
        f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename).resolve() == path.resolve()
    ]
    if frames:
        f = frames[-1]
        text += f" (at {path}:{f.lineno}: {(f.line or '').strip()})"
    return text


def compile_pattern(pattern: Any, path: str | Path) -> Any:
    """``NFACompiler.compile(pattern)``, with an illegal pattern reported as a pattern-file error."""
    from flowcep.nfa import NFACompiler
    from flowcep.pattern import MalformedPatternException

    try:
        return NFACompiler.compile(pattern)
    except (MalformedPatternException, ValueError, NotImplementedError, TypeError) as e:
        raise CliError(f"bad pattern in {path}: {type(e).__name__}: {e}", EXIT_PATTERN) from None
