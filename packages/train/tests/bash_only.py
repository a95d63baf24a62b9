"""The `bash-only` pool's table (the bundled default until issue 38) for tests of every router kind: its
models are candidates of the bundled candidates table, so the any-pool kind routes it too."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from router_oracle.build import build_table
from router_oracle.table import dumps_table

BASH_ONLY = "bash-only"
"""The bundled pool's name."""


@functools.cache
def bash_only_table_path() -> Path:
    """The bash-only table, built once per test process into a temporary file (read-only use)."""
    path = Path(tempfile.mkdtemp(prefix="bash-only-")) / "bash-only.json"
    path.write_text(dumps_table(build_table(BASH_ONLY)), encoding="utf-8")
    return path
