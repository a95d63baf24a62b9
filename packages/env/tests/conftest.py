"""Fixtures over the small test tables of `env_tables`."""

from __future__ import annotations

import pytest
from env_tables import labelled_table

from router_oracle.table import OracleTable


@pytest.fixture
def small_table() -> OracleTable:
    """30 tasks: 18 kimi, 8 gpt, 4 claude oracle labels."""
    return labelled_table({"kimi-k2.5-high": 18, "gpt-5.2-high": 8, "claude-opus-4.6": 4})
