"""Helpers behind the ``flowcep`` command line: reading input, loading pattern files,
formatting output, explaining compiled patterns and running the demo.

They are importable on their own (the examples use :func:`read_events` to load their data),
and depend on nothing beyond the standard library and flowcep itself; pyarrow (parquet
input) and pyspark (``--engine spark``) are imported only when asked for.
"""

from flowcep.cli_support.errors import CliError
from flowcep.cli_support.inputs import read_events, read_rows
from flowcep.cli_support.records import Record
from flowcep.cli_support.timeparse import format_duration, parse_duration, parse_timestamp

__all__ = [
    "CliError",
    "Record",
    "format_duration",
    "parse_duration",
    "parse_timestamp",
    "read_events",
    "read_rows",
]
