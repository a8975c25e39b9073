"""Session checks made by detect() before any query starts."""

from __future__ import annotations

import pytest

from flowcep.connectors.spark import PROVIDER_CONF, ROCKSDB_PROVIDER, SparkConfigError, detect

from .data import abc_pattern

HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


@pytest.fixture
def stream(spark, tmp_path):
    return spark.readStream.schema("user string, type string, amount double, ms long").json(str(tmp_path))


def test_another_state_store_gets_an_error_naming_the_setting(spark, stream):
    spark.conf.set(PROVIDER_CONF, HDFS)
    try:
        with pytest.raises(SparkConfigError, match=f"{PROVIDER_CONF}={ROCKSDB_PROVIDER}"):
            detect(stream, abc_pattern(), key="user", timestamp="ms")
    finally:
        spark.conf.set(PROVIDER_CONF, ROCKSDB_PROVIDER)


def test_an_unset_state_store_is_set_to_rocksdb(spark, stream):
    spark.conf.unset(PROVIDER_CONF)
    try:
        detect(stream, abc_pattern(), key="user", timestamp="ms")
        assert spark.conf.get(PROVIDER_CONF) == ROCKSDB_PROVIDER
    finally:
        spark.conf.set(PROVIDER_CONF, ROCKSDB_PROVIDER)


def test_batch_needs_no_state_store(spark):
    spark.conf.set(PROVIDER_CONF, HDFS)
    try:
        df = spark.createDataFrame(
            [("u", "a", 1.0, 1), ("u", "b", 1.0, 2), ("u", "c", 5.0, 3)],
            "user string, type string, amount double, ms long",
        )
        assert "match" in {r.kind for r in detect(df, abc_pattern(), key="user", timestamp="ms").collect()}
    finally:
        spark.conf.set(PROVIDER_CONF, ROCKSDB_PROVIDER)


@pytest.mark.parametrize("streaming", [False, True])
def test_detect_builds_the_plan_without_running_a_spark_job(spark, stream, streaming):
    df = (
        stream
        if streaming
        else spark.createDataFrame([("u", "a", 1.0, 1)], "user string, type string, amount double, ms long")
    )
    sc = spark.sparkContext
    group = f"flowcep-detect-{streaming}"
    sc.setJobGroup(group, "detect() only")
    try:
        detect(df, abc_pattern(), key="user", timestamp="ms")
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert sc.statusTracker().getJobIdsForGroup(group) == []
