"""A PyFlink job whose CEP function meets a match, a timeout, a late record, a bad record and a
dropped partial match; prints the function's counters as Flink's metric registry saw them.

Run by ``test_flink_limit_and_metrics.py`` in a process of its own, with the test reporter's jar
on the gateway's classpath (``HADOOP_CLASSPATH``, which PyFlink's local gateway adds), so that the
reporter is there when the local cluster starts.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cep_scenarios as sc  # noqa: E402
from flink_support import collect, event_source, make_env  # noqa: E402
from pyflink.common import Types, WatermarkStrategy  # noqa: E402
from pyflink.java_gateway import get_gateway  # noqa: E402

from flowcep import Pattern  # noqa: E402
from flowcep.connectors.flink import CEP, METRICS  # noqa: E402

PAUSE = 1.0
# the source pauses before ("k", "b", 3000): meanwhile the watermark reaches 4999 (see
# test_flink_jobs.py, job 2), so that record and ("j", "x", 4999) are late
EVENTS = [
    ("z", "!", 500),  # bad: the start condition raises on it
    ("m", "a", 600),
    ("m", "a", 700),  # m's second partial match: the limit of one drops a@600; a@700 times out
    ("k", "a", 1000),
    ("k", "b", 2000),  # match a@1000 b@2000
    ("k", "a", 5000),
    ("k", "b", 3000, 0, PAUSE),  # late
    ("j", "x", 4999),  # late
    ("k", "b", 6000),  # match a@5000 b@6000
]


def kind(letter: str) -> Any:
    def condition(event: Any) -> bool:
        if event[1] == "!":
            raise ValueError("a record this pattern cannot read")
        return bool(event[1] == letter)

    return condition


def main() -> None:
    env = make_env(
        {
            "metrics.reporter.keep.factory.class": "flowcep_test.KeepingReporter",
            "python.fn-execution.bundle.size": "1",
        },
        watermark_interval_ms=20,
    )
    source = event_source(env, EVENTS, WatermarkStrategy.for_monotonous_timestamps(), with_pauses=True)
    keyed = source.key_by(lambda e: e[0], key_type=Types.STRING())
    pattern = Pattern.begin("a").where(kind("a")).followed_by("b").where(kind("b")).within(2_000)
    result = CEP.pattern(keyed, pattern, on_error="side_output", max_partial_matches_per_key=1).process(
        sc.Describe(), output_type=Types.PICKLED_BYTE_ARRAY()
    )
    got = collect(result)
    counters: dict[str, int] = dict.fromkeys(METRICS, 0)
    registered = get_gateway().jvm.flowcep_test.KeepingReporter.counters()
    for identifier in registered.keySet():
        name = identifier.rsplit(".", 1)[-1]
        if name in counters and ".CepOperator." in identifier:
            counters[name] += registered[identifier]
    matches = sorted([m[1], m[3]["a"], m[3]["b"]] for m in got["main"])
    print(json.dumps({"counters": counters, "matches": matches}))


if __name__ == "__main__":
    main()
