"""The one rule for tests that need a real service (PostgreSQL, a browser): where it is missing they skip,
the reason naming its install line, so a newcomer's `./pants test ::` passes; where $ROUTER_REQUIRE_SERVICES
is set (`.ci/run` sets it, pants.toml passes it into the sandboxes) they fail instead."""

from __future__ import annotations

import os

import pytest

REQUIRE_SERVICES_VAR = "ROUTER_REQUIRE_SERVICES"
"""Set (to anything non-empty) by `.ci/run`: a test needing a real service that would skip fails instead."""


def skip_or_fail(what: str, problem: str | None) -> None:
    """Nothing when `problem` is None; else skip the calling test with it, or fail where the variable is
    set. `what`: the tests it concerns, as the failure names them (e.g. "the PostgreSQL tests")."""
    if problem is None:
        return
    if os.environ.get(REQUIRE_SERVICES_VAR):
        pytest.fail(
            f"{REQUIRE_SERVICES_VAR} is set (as .ci/run sets it): {what} may not skip, and {problem}",
            pytrace=False,
        )
    pytest.skip(problem)
