"""flowcep: Flink CEP for Python."""

__version__ = "0.1.0"
