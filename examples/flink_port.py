"""A Flink CEP job ported to PyFlink: password guessing that ends in a successful login.

The Java job (Flink 2.3) this file ports, the same as in examples/flink_port_local.py, here as a
complete DataStream program with a late-data side output:

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();

    DataStream<LoginEvent> logins = env
        .fromSource(loginSource, WatermarkStrategy
            .<LoginEvent>forBoundedOutOfOrderness(Duration.ofSeconds(5))
            .withTimestampAssigner((e, ts) -> e.getTime()), "logins");

    Pattern<LoginEvent, ?> guessed = Pattern
        .<LoginEvent>begin("fails", AfterMatchSkipStrategy.skipPastLastEvent())
            .where(SimpleCondition.of(e -> e.getResult().equals("fail")))
            .timesOrMore(3).consecutive()
        .next("success")
            .where(SimpleCondition.of(e -> e.getResult().equals("success")))
        .within(Duration.ofMinutes(2));

    OutputTag<LoginEvent> late = new OutputTag<LoginEvent>("late-logins") {};

    SingleOutputStreamOperator<String> alerts = CEP
        .pattern(logins.keyBy(LoginEvent::getUser), guessed)
        .sideOutputLateData(late)
        .select(m -> m.get("success").get(0).getUser() + " logged in after "
                     + m.get("fails").size() + " failed attempts");

    alerts.print();
    alerts.getSideOutput(late).print();
    env.execute("password guessing");

Below is its PyFlink twin. PyFlink 2.3 has no CEP API; ``flowcep.connectors.flink.CEP``
provides Flink's. The pattern is the one of examples/flink_port_local.py, name for name (flowcep
accepts Flink's camelCase names as aliases); ``keyBy`` and the watermark strategy are PyFlink's
own; ``sideOutputLateData`` / ``getSideOutput`` keep their Java names, ``select`` takes the
result type (PyFlink needs it to leave Python; without it results stay pickled Python objects).
The source reads the example's CSV into Rows; a Flink ``FileSource`` would do in production.

Run it (needs ``pip install 'flowcep[flink]'`` and a JDK 17):  python examples/flink_port.py
"""

from __future__ import annotations

import csv
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyflink.common import Duration, Row, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment

from flowcep import AfterMatchSkipStrategy, Pattern
from flowcep.connectors.flink import CEP, OutputTag

DATA = Path(__file__).resolve().parent / "data" / "logins.csv"

# LoginEvent: a named Row, so conditions read e.user, e.result, e.time as in Java's getters.
LOGIN = Types.ROW_NAMED(
    ["time", "user", "ip", "result"], [Types.LONG(), Types.STRING(), Types.STRING(), Types.STRING()]
)


class LoginTime(TimestampAssigner):
    """``.withTimestampAssigner((e, ts) -> e.getTime())``"""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.time)


# The Java pattern above, name for name.
guessed = (
    Pattern.begin("fails", AfterMatchSkipStrategy.skipPastLastEvent())
    .where(lambda e: e.result == "fail")
    .timesOrMore(3)
    .consecutive()
    .next("success")
    .where(lambda e: e.result == "success")
    .within(timedelta(minutes=2))
)


def select(m: dict[str, list[Any]]) -> str:
    return f"{m['success'][0].user} logged in after {len(m['fails'])} failed attempts"


def read_logins(path: Path = DATA) -> list[Row]:
    with path.open(newline="") as f:
        return [
            Row(time=int(r["time"]), user=r["user"], ip=r["ip"], result=r["result"])
            for r in csv.DictReader(f)
        ]


def main(path: Path = DATA) -> tuple[list[str], list[Row]]:
    """Run the job; return the alerts and the late logins."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_python_executable(sys.executable)  # the Python workers run this interpreter
    env.set_parallelism(2)

    logins = env.from_collection(read_logins(path), type_info=LOGIN).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5)).with_timestamp_assigner(
            LoginTime()
        )
    )

    late = OutputTag("late-logins", LOGIN)

    alerts = (
        CEP.pattern(logins.key_by(lambda e: e.user, key_type=Types.STRING()), guessed)
        .sideOutputLateData(late)
        .select(select, output_type=Types.STRING())
    )

    late_logins = alerts.getSideOutput(late)
    everything = alerts.map(lambda a: ("alert", a)).union(late_logins.map(lambda e: ("late", e)))
    found: dict[str, list[Any]] = {"alert": [], "late": []}
    with everything.execute_and_collect("password guessing") as results:  # print() + execute()
        for kind, value in results:
            found[kind].append(value)
    return sorted(found["alert"]), found["late"]


if __name__ == "__main__":
    alerts, late_logins = main()
    for alert in alerts:
        print(f"ALERT {alert}")
    for login in late_logins:
        print(f"LATE {login}")
    print(f"{len(alerts)} alerts, {len(late_logins)} late logins")
