"""The one exception type the command line turns into a message and an exit status."""

from __future__ import annotations

# Exit statuses of the ``flowcep`` command (documented in docs/cli.md).
EXIT_OK = 0
EXIT_RUNTIME = 1  # matching failed: a condition or select function raised, a broken pipe...
EXIT_USAGE = 2  # bad command line (argparse uses 2 as well)
EXIT_PATTERN = 3  # the pattern file cannot be loaded or defines no valid pattern
EXIT_INPUT = 4  # the input cannot be read: missing file or column, bad timestamp, bad JSON
EXIT_DEPENDENCY = 5  # an optional dependency (pyarrow, pyspark) is not installed

# how an error about one bad record ends, when it stops the run
KEEP_GOING_HINT = " (pass --keep-going to write such records as kind bad_record and carry on)"


class CliError(Exception):
    """An error with a message meant for the user and the exit status to leave with."""

    def __init__(self, message: str, status: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message
