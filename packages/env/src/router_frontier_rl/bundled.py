"""The table the environment ships with."""

from __future__ import annotations

from pathlib import Path

BUNDLED_TABLE = "oracle_table.json"
"""File name of the bundled table inside the package's `data/` directory."""


def bundled_table_path() -> Path:
    """The bundled oracle table: the default pool over all 500 SWE-bench Verified tasks.

    Regenerate it with `python -m router_frontier_rl.regenerate` (see the package README)."""
    return Path(__file__).resolve().parent / "data" / BUNDLED_TABLE
