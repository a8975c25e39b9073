"""One local[2] SparkSession for the whole test run, and helpers shared by the Spark tests.

The tests are skipped, with the reason, when pyspark (or what its Python APIs need: pyarrow,
pandas, protobuf) or a Java runtime is missing: ``pip install 'flowcep[spark]'``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

_MISSING = [
    m
    for m in ("pyspark", "pyarrow", "pandas", "google.protobuf")
    if importlib.util.find_spec(m.split(".")[0]) is None
]
if _MISSING:
    pytest.skip(
        f"the Spark connector tests need {', '.join(_MISSING)}: pip install 'flowcep[spark]'",
        allow_module_level=True,
    )
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip(
        "the Spark connector tests need a Java runtime (java on PATH or JAVA_HOME)", allow_module_level=True
    )

from pyspark.sql import Row, SparkSession  # noqa: E402

from flowcep.connectors.spark import ROCKSDB_PROVIDER  # noqa: E402


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The one Spark session of the run: local[2], 2 shuffle partitions, RocksDB state store, UTC."""
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers run this interpreter (and its flowcep)
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("flowcep-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()


# ----------------------------------------------------------------------------- comparing results


def _steps(match: dict[str, list[Any]], field: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    return tuple((step, tuple(_get(e, field) for e in events)) for step, events in match.items())


def _get(event: Any, field: str) -> Any:
    return event[field]


def reference(
    rows: Iterable[Row],
    pattern: Any,
    *,
    key: str | None,
    timestamp: str = "ms",
    out_of_orderness: int = 0,
    ident: str = "id",
    partial_match_limit: Any = None,
) -> Counter[tuple[Any, ...]]:
    """The pure-Python runtime's results over ``rows`` as a multiset of (kind, key, steps)."""
    from flowcep.runtime import CepOperator

    op = CepOperator(
        pattern,
        key_by=(lambda r: r[key]) if key else None,
        timestamp=lambda r: r[timestamp],
        out_of_orderness=out_of_orderness,
        partial_match_limit=partial_match_limit,
    )
    outputs = [o for r in rows for o in op.process_element(r)]
    outputs += op.flush()
    result: Counter[tuple[Any, ...]] = Counter()
    for o in outputs:
        if o.kind in ("match", "timeout"):
            k = None if o.key is None else str(o.key)
            result[(o.kind, k, _steps(o.value, ident))] += 1
        elif o.kind == "late":
            result[("late", str(o.key), (("late", (o.value[ident],)),))] += 1
        elif o.kind == "dropped":
            result[("dropped", str(o.key), _steps(o.value.match, ident))] += 1
    return result


def spark_results(rows: Iterable[Row], ident: str = "id") -> Counter[tuple[Any, ...]]:
    """The default-schema output of ``detect`` as the same multiset (invalid rows left out)."""
    import json

    result: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        if r.kind == "invalid":
            continue
        events = json.loads(r.events)
        result[(r.kind, r.key, _steps(events, ident))] += 1
    return result


def _pickle_tests_by_value() -> None:
    # Patterns and helpers defined in these test modules are shipped to the Python workers by
    # value (the workers cannot import the tests package).
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__package__ or __name__.rpartition(".")[0]])


_pickle_tests_by_value()
