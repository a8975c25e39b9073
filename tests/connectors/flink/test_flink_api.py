"""The connector's API surface: Flink's names, argument checks, the returned streams (no job runs)."""

from __future__ import annotations

import cep_scenarios as sc
import pytest
from flink_support import event_source, make_env  # noqa: I001 - skips without PyFlink
from pyflink.common import Types
from pyflink.datastream import DataStream

from flowcep.connectors.flink import CEP, OutputTag, PatternStream, ResultStream
from flowcep.runtime import OutputTag as FlowcepOutputTag


@pytest.fixture(scope="module")
def keyed() -> object:
    source = event_source(make_env(), [("k", "a", 1)], None)
    return source.key_by(lambda e: e[0], key_type=Types.STRING())


def test_flink_camel_case_names_are_aliases() -> None:
    assert PatternStream.sideOutputLateData is PatternStream.side_output_late_data
    assert PatternStream.inProcessingTime is PatternStream.in_processing_time
    assert PatternStream.inEventTime is PatternStream.in_event_time
    assert PatternStream.flatSelect is PatternStream.flat_select
    assert ResultStream.getSideOutput is ResultStream.get_side_output


def test_configuration_returns_new_pattern_streams(keyed: object) -> None:
    stream = CEP.pattern(keyed, sc.abc_pattern())
    late = OutputTag("late")
    assert stream.in_processing_time().processing_time and not stream.processing_time
    assert not stream.in_processing_time().in_event_time().processing_time
    assert stream.side_output_late_data(late).late_data_tag is late
    assert stream.late_data_tag is CEP.LATE_DATA
    assert stream.side_output_late_data(FlowcepOutputTag("mine")).late_data_tag.tag_id == "mine"


def test_results_are_pyflink_streams_whose_side_outputs_take_both_tag_kinds(keyed: object) -> None:
    result = CEP.pattern(keyed, sc.abc_pattern()).select(sc.select_ts, output_type=Types.PICKLED_BYTE_ARRAY())
    assert isinstance(result, DataStream)
    assert isinstance(result.get_side_output(CEP.LATE_DATA), DataStream)
    assert isinstance(result.getSideOutput(FlowcepOutputTag("late-data")), DataStream)


def test_bad_arguments_are_refused(keyed: object) -> None:
    with pytest.raises(TypeError, match="DataStream"):
        CEP.pattern([1, 2, 3], sc.abc_pattern())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Pattern"):
        CEP.pattern(keyed, "a b c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_error"):
        CEP.pattern(keyed, sc.abc_pattern(), on_error="ignore")
    stream = CEP.pattern(keyed, sc.abc_pattern())
    with pytest.raises(TypeError, match="takes"):
        stream.select(sc.select_ts, sc.timeout_ts)
    with pytest.raises(TypeError, match="OutputTag"):
        stream.side_output_late_data("late")
    with pytest.raises(TypeError, match="process needs"):
        stream.process(42)
