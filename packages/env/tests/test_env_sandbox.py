"""The local sandbox without a model: its arguments, and what one command run through its `bash` sees."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import verifiers.v1 as vf
from fixture_repos import BASE_SUBJECT, LATER_SUBJECT, git, make_repo
from pydantic import ValidationError
from system_tools import REQUIRE_SANDBOX_VAR, needs_bwrap, require_bwrap
from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.client import EvalClientConfig
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.runtimes import SubprocessConfig, make_runtime

import router_frontier_rl.sandbox as sandbox
from router_frontier_rl import RouteData, RouterConfig, RouterHarness, RouterTaskset, RouteTask
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.offline import reply_trace
from router_frontier_rl.repo_access import RepoAccess, RepoAccessError


def test_a_bare_subprocess_is_a_separate_loud_opt_in(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="unsafe_bare_subprocess: only with repo_access"):
        RouterConfig(unsafe_bare_subprocess=True)
    with pytest.raises(ValidationError, match="only apply with repos_dir"):
        RouterConfig(repo_access=True, unsafe_bare_subprocess=True)
    with pytest.raises(ValidationError, match="allow_unsandboxed = true"):
        RouterConfig(repo_access=True, repos_dir=tmp_path, unsafe_bare_subprocess=True)
    with pytest.warns(UserWarning, match="no sandbox"):
        RouterConfig(
            repo_access=True, repos_dir=tmp_path, allow_unsandboxed=True, unsafe_bare_subprocess=True
        )


def test_without_bwrap_local_mode_is_one_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.check_bwrap_works.cache_clear()
    try:
        with pytest.raises(ValidationError, match="apt-get install -y bubblewrap"):
            RouterConfig(repo_access=True, repos_dir=tmp_path, allow_unsandboxed=True)
    finally:
        sandbox.check_bwrap_works.cache_clear()


def test_without_bwrap_sandbox_tests_skip_naming_the_install_line_or_fail_where_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newcomer's machine skips the sandbox's tests, saying what to install; CI's fails them."""
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv(REQUIRE_SANDBOX_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed: sudo apt-get install -y bubblewrap"):
        require_bwrap()
    monkeypatch.setenv(REQUIRE_SANDBOX_VAR, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_SANDBOX_VAR} is set .* apt-get install"):
        require_bwrap()


def _run(workdir: Path, command: str) -> subprocess.CompletedProcess[str]:
    """One command through the sandbox's `bash`, as verifiers' chat program runs it (found on PATH)."""
    with sandbox.sandboxed_path(workdir) as path:
        env = {"PATH": path, "ROUTER_TEST_SECRET": "hunter2"}
        return subprocess.run(
            ["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True, timeout=60
        )


@needs_bwrap
def test_one_command_sees_its_repository_and_nothing_else(tmp_path: Path) -> None:
    source = tmp_path / "src"
    make_repo(source, {"a.txt": "base\n"}, {"b.txt": "later\n"})
    work = tmp_path / "work"
    work.mkdir()
    git(work, "clone", "-q", "--shared", str(source), ".")
    git(work, "checkout", "-q", "--detach", "v0.1")
    git(work, "tag", "-d", "v9.9")
    git(work, "branch", "-q", "-D", "main")
    git(work, "remote", "remove", "origin")
    git(work, "reflog", "expire", "--expire=now", "--all")
    table = bundled_table_path()

    done = _run(work, "cat a.txt; git log --all --format=%s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["base", BASE_SUBJECT]  # the borrowed objects are readable
    assert LATER_SUBJECT not in done.stdout

    for command in (
        f"cat {table}",
        f"cat {tmp_path / 'src' / 'b.txt'}",  # the source clone: only its object directory is bound
        "ls /work /root /home",
        "echo x > planted.txt",
        "exec 3<>/dev/tcp/127.0.0.1/9",
    ):
        refused = _run(work, command)
        assert refused.returncode != 0, (command, refused.stdout)
    # Under /tmp (as here) the path exists only in the sandbox's private /tmp: nothing reaches the host.
    _run(work, f"echo x > {tmp_path / 'escaped.txt'}")
    assert not (work / "planted.txt").exists() and not (tmp_path / "escaped.txt").exists()

    seen = _run(work, "env; cat /proc/[0-9]*/environ | tr '\\0' '\\n'; ls -A /")
    assert "hunter2" not in seen.stdout and str(tmp_path / "src") not in seen.stdout
    top = set(seen.stdout.split())
    assert {"usr", "tmp", "proc"} <= top and not top & {"work", "root", "home", "opt", "var", "srv"}


def _local_task(tmp_path: Path) -> RouteTask:
    """An eval task in local mode (as `test_env_repo_access.local_task`; tests do not import tests)."""
    (task,) = list(RouterTaskset(RouterConfig(split="eval", max_tasks=1)))
    access = RepoAccess(turn_budget=5, repos_dir=str(tmp_path / "repos"), unsandboxed=True)
    return RouteTask(RouteData.model_validate(task.data.model_dump() | {"repo_access": access}), task.config)


def _agent_trace(task: RouteTask, harness: dict[str, Any]) -> vf.Trace:
    trace = reply_trace(task, "")
    trace.nodes = trace.nodes[:-1]
    trace.agent = vf.AgentInfo(config=vf.AgentConfig(harness=harness))
    return trace


def _on_a_subprocess_runtime(step: Callable[[Any], Awaitable[object]]) -> None:
    runtime = make_runtime(SubprocessConfig())

    async def go() -> None:
        await runtime.start()
        try:
            await step(runtime)
        finally:
            await runtime.stop()

    asyncio.run(go())


def test_only_the_packages_harness_runs_local_episodes(tmp_path: Path) -> None:
    """verifiers' plain bash harness would run the agent's commands unconfined: refused locally."""
    task = _local_task(tmp_path)
    trace = _agent_trace(task, {"id": "bash", "edit": False})
    with pytest.raises(RepoAccessError, match=r"leave --env\.agent\.harness\.id unset"):
        _on_a_subprocess_runtime(lambda runtime: task.setup(trace, runtime))


@needs_bwrap
def test_a_harness_env_setting_path_is_refused(tmp_path: Path) -> None:
    """The sandbox hangs on PATH: a harness env that sets it would bypass it."""
    task = _local_task(tmp_path)
    trace = _agent_trace(task, {"id": "router-frontier-rl"})
    harness = RouterHarness(NullHarnessConfig(id="router-frontier-rl", env={"PATH": "/usr/bin"}))
    ctx = ModelContext(model="m", client=EvalClientConfig())
    with pytest.raises(RepoAccessError, match="unset PATH in the harness env"):
        _on_a_subprocess_runtime(
            lambda runtime: harness.launch(ctx, trace, runtime, "http://127.0.0.1:9/v1", "s", {}, task.data)
        )
