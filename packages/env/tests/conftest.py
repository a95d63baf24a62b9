"""Fixtures over the small test tables of `env_tables`, and a shared uv cache for the vf-eval tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from env_tables import labelled_table

from router_oracle.table import OracleTable


@pytest.fixture
def small_table() -> OracleTable:
    """30 tasks: 18 kimi, 8 gpt, 4 claude oracle labels."""
    return labelled_table({"kimi-k2.5-high": 18, "gpt-5.2-high": 8, "claude-opus-4.6": 4})


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv's cache for the vf-eval tests' chat script: $UV_CACHE_DIR if set, else one per test session."""
    given = os.environ.get("UV_CACHE_DIR")
    return Path(given) if given else tmp_path_factory.mktemp("uv-cache")
