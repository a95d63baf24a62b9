"""The one exception type for bad oracle inputs."""

from __future__ import annotations


class OracleInputError(ValueError):
    """An input file (pool, tasks, results) that cannot be used.

    The message always names the file and, where there is one, the row or key; the CLI prints it and
    exits with status 2 without writing any output.
    """
