"""Agentic routing (`repo_access`): what a task carries, what an episode used, which harness may run it."""

from __future__ import annotations

import verifiers.v1 as vf
from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel

DEFAULT_TURN_BUDGET = 10
"""Model turns per agentic episode, the final answer included: room for about eight read-only
commands (a turn may issue several) before answering."""

AGENT_TIMEOUT_S = 900.0
"""Wall-clock limit of one agentic episode's agent phase, in seconds (a hung command ends there);
`--env.agent.timeout.rollout` overrides it."""

UNSANDBOXED_REFUSAL = (
    "repo_access with repos_dir runs the agent on this machine (the subprocess runtime), each of its "
    "shell commands under bubblewrap (read-only repository, no network, no environment, no host files: "
    "not the oracle table it is scored on; see docs/security.md). Set allow_unsandboxed = true to "
    "accept that, or unset repos_dir and use a container runtime (docker, prime), where each task runs "
    "in its SWE-bench image."
)

BARE_SUBPROCESS_WARNING = (
    "unsafe_bare_subprocess = true: the agent's shell runs as a bare host process, no sandbox: it can "
    "read every file here (the oracle table it is scored on included), the environment's variables and "
    "the network. For debugging the harness only; never train this way."
)


class RepoAccessError(RuntimeError):
    """An agentic episode that cannot run as configured: the message says why and what to change."""


class RepoAccess(FrozenModel):
    """A task's agentic-episode settings (`RouteData.repo_access`); absent on a single-turn task."""

    turn_budget: int = Field(ge=1)
    """Model turns the agent may take, its final answer included; the episode stops there."""
    repos_dir: str | None = None
    """Local mode (subprocess runtime): the directory the rollout's copy of the repository comes from;
    None: the task's SWE-bench image holds the repository (container runtimes)."""
    base_commit: str | None = None
    """Local mode: the commit the task starts from, from the tasks file (None when it has none)."""
    unsandboxed: bool = False
    """Local mode: the user accepted that the agent runs on this machine (its commands under bubblewrap)."""
    bare_subprocess: bool = False
    """Local mode: the user's separate, loud opt-in to run the agent's commands with no sandbox at all."""


def tool_calls(trace: vf.Trace) -> int:
    """Tool calls the model made in the episode (every sampled assistant message, all branches)."""
    return sum(len(m.tool_calls or []) for m in trace.assistant_messages)


def check_harness(config: vf.HarnessConfig | None, default_harness: type) -> None:
    """Refuse a harness that cannot explore read-only: `null` has no tools, and an edit tool writes files.

    Accepted: the package's default harness (`default_harness` or a subclass: verifiers' bash harness
    with its edit tool off on these tasks) and `bash` with `edit = false`."""
    if config is None:
        return
    if config.id == "null":
        raise RepoAccessError(
            "repo_access needs a harness with a shell, and `null` has no tools: leave --env.agent.harness.id "
            "unset (the package's default), or use bash with --env.agent.harness.edit false"
        )
    if config.id == "bash":
        if getattr(config, "edit", True):
            raise RepoAccessError(
                "repo_access is read-only: turn the bash harness's edit tool off "
                "(--env.agent.harness.edit false)"
            )
        return
    from verifiers.v1.utils.loaders import harness_class

    try:
        ours = issubclass(harness_class(config.id), default_harness)
    except (ImportError, TypeError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise RepoAccessError(
            f"repo_access runs with the package's default harness or `bash` with edit off, not {config.id!r}"
        )
