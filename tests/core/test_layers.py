"""Each layer imports on its own, in a fresh interpreter, without the layers after it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

# layer -> modules it must not load (the layers after it)
LAYERS = {
    "flowcep.pattern": [
        "flowcep.nfa",
        "flowcep.sharedbuffer",
        "flowcep.bounded",
        "flowcep.runtime",
        "flowcep.hierarchy",
        "flowcep.connectors",
    ],
    "flowcep.nfa": ["flowcep.bounded", "flowcep.runtime", "flowcep.hierarchy", "flowcep.connectors"],
    "flowcep.sharedbuffer": [
        "flowcep.nfa",
        "flowcep.bounded",
        "flowcep.runtime",
        "flowcep.hierarchy",
        "flowcep.connectors",
    ],
    # the bounded-data evaluators sit beside the NFA, before the runtime that uses them
    "flowcep.bounded": ["flowcep.runtime", "flowcep.hierarchy", "flowcep.connectors", "pyspark", "pyflink"],
    # the expression language (MATCH_RECOGNIZE's and JSON patterns' conditions) sits on pattern/
    "flowcep.expr": [
        "flowcep.nfa",
        "flowcep.sharedbuffer",
        "flowcep.bounded",
        "flowcep.runtime",
        "flowcep.hierarchy",
        "flowcep.connectors",
        "flowcep.sql",
    ],
    # JSON rules sit on the expression language; they parse expressions with flowcep.sql (sqlglot)
    # only when a rule is read
    "flowcep.rules": [
        "flowcep.nfa",
        "flowcep.sharedbuffer",
        "flowcep.bounded",
        "flowcep.runtime",
        "flowcep.hierarchy",
        "flowcep.connectors",
        "flowcep.sql",
        "sqlglot",
        "pyspark",
        "pyflink",
    ],
    "flowcep.runtime": ["flowcep.hierarchy", "flowcep.connectors", "flowcep.sql", "pyspark", "pyflink"],
    # MATCH_RECOGNIZE compiles onto the NFA; it loads the runtime only to run a query
    "flowcep.sql": ["flowcep.runtime", "flowcep.hierarchy", "flowcep.connectors", "pyspark", "pyflink"],
    # event hierarchies sit beside the runtime, on its public API (DESIGN.md §2)
    "flowcep.hierarchy": ["flowcep.connectors", "pyspark", "pyflink"],
    # the JSON rule format (and the expression language under it) loads on first use
    "flowcep": [
        "flowcep.rules",
        "flowcep.expr",
        "flowcep.sql",
        "sqlglot",
        "flowcep.bounded",
        "flowcep.runtime",
        "flowcep.hierarchy",
        "flowcep.connectors",
        "pyspark",
        "pyflink",
    ],
}


@pytest.mark.parametrize("module", sorted(LAYERS))
def test_a_layer_imports_first_and_alone(module: str) -> None:
    code = f"import sys, {module}\nprint(' '.join(m for m in {LAYERS[module]!r} if m in sys.modules))\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"importing {module} loaded {result.stdout.strip()}"


# --- the module import graph has no cycle ---------------------------------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src"


def module_names(src: Path) -> dict[str, Path]:
    """``flowcep.nfa.nfa`` -> its file; a package is its ``__init__.py``."""
    names = {}
    for path in sorted((src / "flowcep").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(src: Path) -> dict[str, set[str]]:
    """Which flowcep modules each flowcep module names in an import, at any depth of its code.

    Module level, inside functions and under ``TYPE_CHECKING`` alike.  ``from flowcep.nfa import
    nfa`` names the module ``flowcep.nfa.nfa``; ``from flowcep.nfa import NFA`` names the package
    ``flowcep.nfa`` (its ``__init__``), so a module that takes a name through its own package's
    ``__init__`` while that ``__init__`` imports the module is a cycle here too.  The parent packages
    Python loads on the way to a module are not counted: they are how Python finds the module,
    not a name the module takes.
    """
    names = module_names(src)

    def known(dotted: str) -> str | None:
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in names else base
                    for alias in node.names
                ]
            for target in targets:
                if target.split(".")[0] == "flowcep":
                    resolved = known(target)
                    if resolved is not None and resolved != name:
                        graph[name].add(resolved)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_imports() -> None:
    graph = import_graph(SRC)
    assert "flowcep.nfa.names" in graph["flowcep.nfa.compiler"]
    assert "flowcep.nfa.nfa" in graph["flowcep.nfa.compiler"]
    assert "flowcep.sharedbuffer.dewey" in graph["flowcep.sharedbuffer.sharedbuffer"]
    assert "flowcep.connectors.spark.matcher" in graph["flowcep.connectors.spark.batch"]  # relative


def test_cycles_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(import_graph(SRC)) == []


def layer_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto the layers: ``flowcep.nfa.nfa`` -> ``flowcep.nfa``."""

    def layer(name: str) -> str:
        return ".".join(name.split(".")[:2])

    layers: dict[str, set[str]] = {layer(name): set() for name in graph}
    for name, targets in graph.items():
        layers[layer(name)].update(layer(t) for t in targets if layer(t) != layer(name))
    return layers


def test_no_layer_imports_itself_through_others() -> None:
    """The shared buffer sits below the NFA: it owns the Dewey versions it stores."""
    layers = layer_graph(import_graph(SRC))
    assert cycles(layers) == []
    assert layers["flowcep.sharedbuffer"] == set()
    assert "flowcep.sharedbuffer" in layers["flowcep.nfa"]
    assert "flowcep.nfa" in layers["flowcep.bounded"]  # the bounded evaluators sit beside the NFA
    assert "flowcep.bounded" in layers["flowcep.runtime"]  # and the runtime can use them
    assert "flowcep.hierarchy" not in layers["flowcep.runtime"]
    assert "flowcep.runtime" in layers["flowcep.hierarchy"]


def test_the_old_import_paths_still_work() -> None:
    from flowcep.nfa import compiler, dewey, names
    from flowcep.sharedbuffer import dewey as buffer_dewey

    assert compiler.original_name is names.original_name
    assert compiler.ENDING_STATE_NAME == names.ENDING_STATE_NAME
    assert dewey.increase is buffer_dewey.increase
    assert dewey.DeweyNumber is buffer_dewey.DeweyNumber
