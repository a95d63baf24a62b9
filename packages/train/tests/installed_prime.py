"""Test set-up of the train tests that touch `prime`: import `no_installed_prime` into the module.

(A fixture module, not a conftest.py: the env tests have a conftest.py, and two top-level `conftest`
modules are one duplicate module too many for mypy under Pants.)"""

from __future__ import annotations

import pytest

from router_train.hosted import prime_tool


@pytest.fixture(autouse=True)
def no_installed_prime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see only the `prime` they put on PATH (a fake), never the real CLI installed beside the
    interpreter (`prime_tool.own_prime`), which would run for real and differs between machines.
    `test_train_prime_lookup.py` tests `own_prime` itself."""
    monkeypatch.setattr(prime_tool, "own_prime", lambda: None)
