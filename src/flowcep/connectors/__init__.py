"""Engine connectors: run flowcep patterns inside other engines' keyed state.

``flowcep.connectors.spark`` (extra ``flowcep[spark]``) runs patterns on PySpark DataFrames,
batch and Structured Streaming; ``flowcep.connectors.flink`` on PyFlink DataStreams. This package
itself imports neither engine: import the submodule you need.
"""

__all__: list[str] = []
