"""Session fixtures of the train tests: a uv cache for the tests that install packages from PyPI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv's cache for the mini-SWE-agent tests' environment: $UV_CACHE_DIR if set, else one per session."""
    given = os.environ.get("UV_CACHE_DIR")
    return Path(given) if given else tmp_path_factory.mktemp("uv-cache")
