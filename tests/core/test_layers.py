"""Each layer imports on its own, in a fresh interpreter, without the layers after it."""

from __future__ import annotations

import subprocess
import sys

import pytest

# layer -> modules it must not load (the layers after it)
LAYERS = {
    "flowcep.pattern": ["flowcep.nfa", "flowcep.sharedbuffer", "flowcep.runtime", "flowcep.connectors"],
    "flowcep.nfa": ["flowcep.runtime", "flowcep.connectors"],
    "flowcep.sharedbuffer": ["flowcep.runtime", "flowcep.connectors"],
    "flowcep.runtime": ["flowcep.connectors", "pyspark", "pyflink"],
    "flowcep": ["flowcep.runtime", "flowcep.connectors", "pyspark", "pyflink"],
}


@pytest.mark.parametrize("module", sorted(LAYERS))
def test_a_layer_imports_first_and_alone(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"print(' '.join(m for m in {LAYERS[module]!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"importing {module} loaded {result.stdout.strip()}"
