"""Tests that need a system tool the README's set-up does not install: bubblewrap, for the agent sandbox.

The one definition of when such a test skips and when it fails. A newcomer's `./pants test ::` passes
without bubblewrap: each of these tests skips, its reason naming the install line. CI (`.ci/run`) sets
$ROUTER_REQUIRE_SANDBOX (pants.toml passes it into Pants' test sandboxes): there a sandbox that cannot
run fails these tests instead of skipping them, so the sandbox is tested wherever it can be. A train
test that comes to need the sandbox imports this module too (a top-level module, as every tests folder
is a source root; none does today).

Whether the sandbox can run is asked of the sandbox code itself (`check_bwrap_works`: `bwrap` found as
the sandbox finds it, and one `true` run in its namespaces), so the tests skip exactly where the sandbox
would refuse; the sandbox itself never falls back to running unconfined.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import pytest

from router_frontier_rl.sandbox import SandboxError, bwrap, check_bwrap_works

REQUIRE_SANDBOX_VAR = "ROUTER_REQUIRE_SANDBOX"
"""Set (to anything non-empty) by `.ci/run`: a sandbox test that would skip fails instead."""

BWRAP_INSTALL = "sudo apt-get install -y bubblewrap"
"""The install line a skipped sandbox test names (Debian/Ubuntu)."""

P = ParamSpec("P")
R = TypeVar("R")


def sandbox_problem() -> str | None:
    """Why the agent sandbox cannot run on this machine (naming the install line where `bwrap` is
    missing), or None where it can."""
    try:
        bwrap()
    except SandboxError:
        return f"bubblewrap is not installed: {BWRAP_INSTALL}"
    try:
        check_bwrap_works()
    except SandboxError as exc:
        return str(exc)
    return None


def require_bwrap() -> None:
    """Skip the calling test (or, called at module level, the module) where the agent sandbox cannot
    run on this machine, saying why; fail instead where $ROUTER_REQUIRE_SANDBOX is set."""
    problem = sandbox_problem()
    if problem is None:
        return
    if os.environ.get(REQUIRE_SANDBOX_VAR):
        pytest.fail(
            f"{REQUIRE_SANDBOX_VAR} is set (as .ci/run sets it): the sandbox's tests may not skip, and "
            f"the sandbox cannot run here: {problem}",
            pytrace=False,
        )
    pytest.skip(problem, allow_module_level=True)


def needs_bwrap(test: Callable[P, R]) -> Callable[P, R]:
    """Decorator for a test that runs the agent sandbox: `require_bwrap()` before the test body, and the
    `system` mark (pyproject.toml), by which `.ci/run` runs it again with the sandbox required."""

    @functools.wraps(test)  # keeps the signature pytest reads the test's fixtures from
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        require_bwrap()
        return test(*args, **kwargs)

    marked: Callable[P, R] = pytest.mark.system(run)
    return marked
