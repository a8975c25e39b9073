"""``flowcep explain``: the compiled NFA of a pattern as text and as a Graphviz picture.

The text lists every state (in the order a run meets them, start first) with its kind and
outgoing transitions: the action (TAKE consumes the event into the step, IGNORE skips it and
keeps the run where it is, PROCEED moves on without consuming it), the target state and the
condition under which the edge is taken, shown as the source text of the user's lambdas.
"""

from __future__ import annotations

import ast
import linecache
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from flowcep.cli_support.errors import EXIT_DEPENDENCY, EXIT_RUNTIME, CliError
from flowcep.cli_support.timeparse import format_duration

# ----------------------------------------------------------------------------- conditions


def describe_function(fn: Any) -> str:
    """A short human name for a condition function: its name, or the source of a lambda."""
    name = getattr(fn, "__name__", None)
    if name == "<lambda>":
        src = _lambda_source(fn)
        if src:
            return src
    if name is not None:
        return getattr(fn, "__qualname__", name)
    func = getattr(fn, "func", None)  # functools.partial
    if func is not None:
        return f"partial({describe_function(func)})"
    return type(fn).__name__ if not isinstance(fn, type) else fn.__name__


def _lambda_source(fn: Any) -> str | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        return None
    source = "".join(lines)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    if not candidates:
        return None
    if len(candidates) > 1:
        # Several lambdas start on this line: pick the one whose body holds the code's positions
        # (Python 3.11+; before, the lambda is not told apart and goes by its name)
        if not hasattr(code, "co_positions"):
            return None
        positions = [(ln, col) for ln, _, col, _ in code.co_positions() if ln is not None and col is not None]
        for node in candidates:
            body = node.body
            start = (body.lineno, body.col_offset)
            end = (body.end_lineno or body.lineno, body.end_col_offset or 0)
            if any(start <= pos < end for pos in positions):
                candidates = [node]
                break
    segment = ast.get_source_segment(source, candidates[0])
    if segment is None:
        return None
    return " ".join(segment.split())


def describe_condition(cond: Any) -> str:
    """Readable text for a condition object of the pattern layer (or a compiler wrapper of one)."""
    if cond is None:
        return "true"
    cls = type(cond).__name__
    # The compiler's own condition tree (flowcep.nfa.conditions): TrueCond, Atom, Not, And.
    if cls == "TrueCond":
        return "true"
    if cls == "Atom" and hasattr(cond, "condition"):
        return describe_condition(cond.condition)
    if cls == "Not" and hasattr(cond, "inner"):
        return f"not {_paren(cond.inner)}"
    if cls == "And" and hasattr(cond, "left"):
        left, right = describe_condition(cond.left), describe_condition(cond.right)
        if left == "true":
            return right
        if right == "true":
            return left
        return f"{_paren(cond.left)} and {_paren(cond.right)}"
    if cls == "Or" and hasattr(cond, "left"):
        return f"{_paren(cond.left)} or {_paren(cond.right)}"
    # The pattern layer's conditions (flowcep.pattern.conditions).
    if cls == "_ConstantCondition" or (
        hasattr(cond, "value") and isinstance(getattr(cond, "value", None), bool)
    ):
        return "true" if cond.value else "false"
    if cls == "RichAndCondition" or (hasattr(cond, "left") and hasattr(cond, "right") and "And" in cls):
        return f"{_paren(cond.left)} and {_paren(cond.right)}"
    if cls == "RichOrCondition" or (hasattr(cond, "left") and hasattr(cond, "right") and "Or" in cls):
        return f"{_paren(cond.left)} or {_paren(cond.right)}"
    if cls == "RichNotCondition" or ("Not" in cls and hasattr(cond, "condition")):
        return f"not {_paren(cond.condition)}"
    if isinstance(getattr(cond, "subtype", None), (type, tuple)):
        sub = cond.subtype
        names = ", ".join(t.__name__ for t in sub) if isinstance(sub, tuple) else sub.__name__
        return f"isinstance(event, {names})"
    fn = getattr(cond, "fn", None)
    if fn is not None and callable(fn):
        return describe_function(fn)
    if hasattr(cond, "filter") and type(cond).__module__ not in ("flowcep.pattern.conditions",):
        return f"{cls}.filter"
    if callable(cond) and not hasattr(cond, "compile"):
        return describe_function(cond)
    return repr(cond)


def _paren(cond: Any) -> str:
    text = describe_condition(cond)
    if " and " in text or " or " in text or text.startswith("lambda") or text.startswith("not "):
        return f"({text})"
    return text


# ----------------------------------------------------------------------------- the NFA


def _states(nfa: Any) -> list[Any]:
    states = nfa.states
    if isinstance(states, dict):
        states = list(states.values())
    else:
        states = list(states)
    # The NFA keeps hot-path copies (CompiledState) that point back at the compiler's State.
    return [s.state if hasattr(s, "state") and hasattr(s.state, "transitions") else s for s in states]


def _kind(state: Any) -> str:
    t = getattr(state, "state_type", None) or getattr(state, "kind", None) or getattr(state, "type", None)
    return getattr(t, "value", None) or getattr(t, "name", None) or str(t)


def _action(tr: Any) -> str:
    a = tr.action
    return getattr(a, "value", None) or getattr(a, "name", None) or str(a)


def ordered_states(nfa: Any) -> list[Any]:
    """States in the order a run meets them: breadth first from the start state(s)."""
    states = _states(nfa)
    starts = [s for s in states if _kind(s) == "Start"]
    seen: dict[int, Any] = {}
    queue = list(starts)
    while queue:
        s = queue.pop(0)
        if id(s) in seen:
            continue
        seen[id(s)] = s
        for tr in s.transitions:
            if id(tr.target) not in seen:
                queue.append(tr.target)
    rest = [s for s in states if id(s) not in seen]
    ordered = list(seen.values()) + rest
    # Final and Stop states last: they are where runs end.
    ends = [s for s in ordered if _kind(s) in ("Final", "Stop")]
    return [s for s in ordered if _kind(s) not in ("Final", "Stop")] + ends


def _window_time(nfa: Any) -> int:
    w = getattr(nfa, "window_time", None)
    return int(w or 0)


def _state_windows(nfa: Any) -> dict[str, int]:
    w = getattr(nfa, "window_times", None) or {}
    return {str(k): int(v) for k, v in dict(w).items() if v}


def _skip_name(strategy: Any) -> str:
    if strategy is None:
        return "no_skip"
    cls = type(strategy).__name__
    names = {
        "NoSkipStrategy": "no_skip()",
        "SkipToNextStrategy": "skip_to_next()",
        "SkipPastLastStrategy": "skip_past_last_event()",
        "SkipToFirstStrategy": "skip_to_first({!r})",
        "SkipToLastStrategy": "skip_to_last({!r})",
    }
    text = names.get(cls, repr(strategy))
    if "{" in text:
        text = text.format(getattr(strategy, "pattern_name", None))
    if getattr(strategy, "throw_on_miss", False) is True:
        text += ".throw_exception_on_miss()"
    return text


def pattern_steps(pattern: Any) -> list[Any]:
    """The pattern's nodes, first to last."""
    nodes = []
    node = pattern
    while node is not None:
        nodes.append(node)
        node = getattr(node, "previous", None)
    return nodes[::-1]


_CONTIGUITY = {
    "STRICT": "next",
    "SKIP_TILL_NEXT": "followed_by",
    "SKIP_TILL_ANY": "followed_by_any",
    "NOT_NEXT": "not_next",
    "NOT_FOLLOW": "not_followed_by",
}


def _prop(node: Any, name: str) -> bool:
    quantifier = getattr(node, "quantifier", None)
    props = getattr(quantifier, "properties", ()) or ()
    return any(getattr(p, "name", str(p)) == name for p in props)


def _quantifier_text(node: Any) -> str:
    """``+``, ``{3}``, ``{2,4}``, ``{3,}``, then ``?`` (optional) and ``(greedy)``..."""
    get_times = getattr(node, "get_times", None)
    times = get_times() if callable(get_times) else None
    text = ""
    if _prop(node, "LOOPING"):
        start = getattr(times, "from_", 1) if times is not None else 1
        text = "+" if start == 1 else f"{{{start},}}"
    elif _prop(node, "TIMES") and times is not None:
        start, end = getattr(times, "from_", None), getattr(times, "to", None)
        text = f"{{{start}}}" if start == end else f"{{{start},{end}}}"
    if _prop(node, "OPTIONAL"):
        text += "?"
    quantifier = getattr(node, "quantifier", None)
    inner = getattr(getattr(quantifier, "inner_consuming_strategy", None), "name", None)
    extras = []
    if _prop(node, "GREEDY"):
        extras.append("greedy")
    if text and inner == "STRICT":
        extras.append("consecutive")
    elif text and inner == "SKIP_TILL_ANY":
        extras.append("combinations")
    if getattr(node, "until_condition", None) is not None:
        extras.append("until")
    return text + (f" ({', '.join(extras)})" if extras else "")


def describe_steps(pattern: Any) -> str:
    """The pattern in one line: steps, their contiguity and quantifiers, groups in parentheses."""
    parts = []
    for i, node in enumerate(pattern_steps(pattern)):
        raw = getattr(node, "raw_pattern", None)
        name = f"({describe_steps(raw)})" if raw is not None else getattr(node, "name", "?")
        strategy = getattr(getattr(getattr(node, "quantifier", None), "consuming_strategy", None), "name", "")
        step = name + _quantifier_text(node)
        parts.append(step if i == 0 else f"{_CONTIGUITY.get(strategy, strategy.lower())} {step}")
    return ", ".join(parts)


def explain_text(nfa: Any, pattern: Any = None, title: str | None = None) -> str:
    """The compiled NFA as indented text."""
    out: list[str] = []
    if title:
        out.append(f"pattern {title}")
    if pattern is not None:
        out.append(f"  steps:          {describe_steps(pattern)}")
        out.append(f"  skip strategy:  {_skip_name(getattr(pattern, 'skip_strategy', None))}")
    window = _window_time(nfa)
    out.append(
        "  window:         "
        + (
            f"{format_duration(window)} from the first to the last event (FIRST_AND_LAST)"
            if window
            else "none"
        )
    )
    state_windows = _state_windows(nfa)
    states = ordered_states(nfa)
    out.append("")
    out.append(f"NFA: {len(states)} states, {sum(len(s.transitions) for s in states)} transitions")
    width = max((len(s.name) for s in states), default=8)
    for s in states:
        kind = _kind(s)
        line = f"  {s.name}  [{kind}]"
        if s.name in state_windows:
            line += f"  window {format_duration(state_windows[s.name])} from the previous event (PREVIOUS_AND_CURRENT)"
        out.append(line)
        if not s.transitions:
            note = {
                "Final": "a run here is a match",
                "Stop": "a run here is discarded (a NOT step saw its event)",
            }.get(kind, "no transitions")
            out.append(f"      ({note})")
        for tr in s.transitions:
            cond = describe_condition(tr.condition)
            target = tr.target.name if tr.target is not s else f"{s.name} (self)"
            out.append(f"      {_action(tr):<7} -> {target:<{width + 7}} if {cond}")
    out.append("")
    out.append(
        "TAKE consumes the event into the state's step; IGNORE skips the event and the run stays; "
        "PROCEED moves on without consuming the event."
    )
    return "\n".join(out) + "\n"


def _dot_escape(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _wrap(text: str, width: int = 36) -> str:
    return "\\n".join(textwrap.wrap(text, width)) or text


def explain_dot(nfa: Any, title: str | None = None) -> str:
    """The compiled NFA in Graphviz DOT."""
    states = ordered_states(nfa)
    state_windows = _state_windows(nfa)
    lines = [
        "digraph flowcep {",
        "  rankdir=LR;",
        '  graph [fontname="Helvetica", fontsize=11'
        + (f', label="{_dot_escape(title, 200)}", labelloc=t' if title else "")
        + "];",
        '  node [fontname="Helvetica", fontsize=11, shape=circle];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    ids = {id(s): f"s{i}" for i, s in enumerate(states)}
    styles = {
        "Start": 'shape=circle, style="bold,filled", fillcolor="#e8f0fe"',
        "Normal": "shape=circle",
        "Final": 'shape=doublecircle, style=filled, fillcolor="#e6f4ea"',
        "Stop": 'shape=octagon, color="#c5221f", fontcolor="#c5221f"',
        "Pending": "shape=circle, style=dashed",
    }
    for s in states:
        kind = _kind(s)
        label = _dot_escape(s.name)
        if kind in ("Start", "Pending"):
            label += f"\\n({kind.lower()})"
        if s.name in state_windows:
            label += f"\\nwithin {format_duration(state_windows[s.name])}"
        lines.append(f'  {ids[id(s)]} [label="{label}", {styles.get(kind, "shape=circle")}];')
    edge_style = {
        "TAKE": 'color="#202124"',
        "IGNORE": 'color="#9aa0a6", style=dashed, fontcolor="#5f6368"',
        "PROCEED": 'color="#1a73e8", style=dotted, fontcolor="#1a73e8"',
    }
    for s in states:
        for tr in s.transitions:
            action = _action(tr)
            cond = describe_condition(tr.condition)
            label = action if cond == "true" else f"{action}\\n{_wrap(_dot_escape(cond))}"
            target = ids.get(id(tr.target))
            if target is None:
                continue
            lines.append(f'  {ids[id(s)]} -> {target} [label="{label}", {edge_style.get(action, "")}];')
    window = _window_time(nfa)
    if window:
        lines.append(
            f'  window [shape=note, label="within {format_duration(window)}\\n(first to last event)"];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(dot_text: str, out_path: str | Path, fmt: str) -> None:
    """Render DOT with Graphviz's ``dot`` into ``out_path``; :class:`CliError` if ``dot`` is missing."""
    exe = shutil.which("dot")
    out_path = Path(out_path)
    if exe is None:
        fallback = out_path.with_suffix(".dot")
        fallback.write_text(dot_text, encoding="utf-8")
        raise CliError(
            f"Graphviz is not installed (no `dot` on PATH), so {out_path} was not rendered; "
            f"the DOT source is in {fallback}. Install graphviz (e.g. apt-get install graphviz) "
            f"and run: dot -T{fmt} {fallback} -o {out_path}",
            EXIT_DEPENDENCY,
        )
    proc = subprocess.run(
        [exe, f"-T{fmt}", "-o", str(out_path)], input=dot_text.encode(), capture_output=True
    )
    if proc.returncode != 0:
        raise CliError(
            f"dot failed to render {out_path}: {proc.stderr.decode(errors='replace').strip()}", EXIT_RUNTIME
        )


def explain_hierarchy_text(plan: Any, title: str | None = None) -> str:
    """An event hierarchy: its levels bottom up (what each reads, which read it), then each
    level's pattern and NFA as ``explain_text`` shows them."""
    from flowcep.nfa import NFACompiler

    out = [f"hierarchy {title}" if title else "hierarchy"]
    for level in plan.levels:
        reads = [*(["raw events"] if level.reads_raw else []), *level.uses]
        readers = plan.consumers[level.name]
        out.append(
            f"  level {level.depth}  {level.name:<12} reads {', '.join(reads)}"
            + (f"; read by {', '.join(readers)}" if readers else "; top level")
        )
    out.append("")
    for level in plan.levels:
        out.append(explain_text(NFACompiler.compile(level.pattern), level.pattern, level.name))
    return "\n".join(out)


def explain_hierarchy_dot(plan: Any, title: str | None = None) -> str:
    """The hierarchy as a Graphviz graph: raw events and a box per level, an edge per input."""
    lines = ["digraph hierarchy {", "  rankdir=BT;", '  node [fontname="Helvetica"];']
    if title:
        lines.append(f'  label="{_dot_escape(title)}"; labelloc=t;')
    lines.append('  raw [label="raw events", shape=ellipse];')
    for level in plan.levels:
        steps = _dot_escape(describe_steps(level.pattern))
        lines.append(f'  "{level.name}" [shape=box, label="{level.name}\\n{steps}"];')
        if level.reads_raw:
            lines.append(f'  raw -> "{level.name}";')
        for used in level.uses:
            lines.append(f'  "{used}" -> "{level.name}";')
    lines.append("}")
    return "\n".join(lines) + "\n"
