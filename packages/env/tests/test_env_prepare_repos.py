"""`python -m router_frontier_rl.prepare_repos`, offline: "remotes" are local git repositories made here."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_repos import BASE_SUBJECT, git, make_repo
from verifiers.v1.runtimes import SubprocessConfig, make_runtime

from router_frontier_rl.prepare_repos import main
from router_frontier_rl.repo_checkout import check_out, find_checkout


@pytest.fixture
def remotes(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Remote acme/widgets with two commits; acme/gadgets does not exist. A tasks file naming both."""
    root = tmp_path / "remotes"
    base, later = make_repo(root / "acme" / "widgets", {"w.py": "x = 1\n"}, {"w.py": "x = 2\n"})
    return root, {"acme__widgets-1": base, "acme__widgets-2": later}


def tasks_file(path: Path, rows: list[tuple[str, str, str | None]]) -> Path:
    text = "".join(
        json.dumps({"instance_id": i, "repo": repo, "problem_statement": "-", "base_commit": sha}) + "\n"
        for i, repo, sha in rows
    )
    path.write_text(text)
    return path


def test_clones_each_repository_once_with_every_base_commit(tmp_path: Path, remotes, capsys) -> None:
    root, commits = remotes
    tasks = tasks_file(
        tmp_path / "tasks.jsonl",
        [
            ("acme__widgets-1", "acme/widgets", commits["acme__widgets-1"]),
            ("acme__widgets-2", "acme/widgets", commits["acme__widgets-2"]),
            ("acme__gadgets-1", "acme/gadgets", "f" * 40),
            ("acme__widgets-3", "acme/widgets", None),
        ],
    )
    out = tmp_path / "repos"
    args = ["-o", str(out), "--tasks", str(tasks), "--remote", f"{root}/{{repo}}", "--quiet"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "2 of 4 tasks ready in 1 repositories" in captured.out
    assert f"not ready: acme__gadgets-1: cannot clone {root}/acme/gadgets" in captured.err
    assert "not ready: acme__widgets-3: the tasks file gives no base_commit" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["acme__widgets"]  # no half-made gadgets clone
    clone = out / "acme__widgets"
    assert git(clone, "cat-file", "-t", commits["acme__widgets-1"]) == "commit"

    # The env makes a rollout's copy from that clone, at the task's commit.
    runtime = make_runtime(SubprocessConfig())

    async def checkout() -> str:
        await runtime.start()
        await check_out(
            runtime,
            "acme__widgets-1",
            find_checkout(out, "acme__widgets-1", "acme/widgets", commits["acme__widgets-1"]),
        )
        workdir = Path(runtime.workdir)  # type: ignore[attr-defined]
        text = (workdir / "w.py").read_text() + git(workdir, "log", "--all", "--format=%s")
        await runtime.stop()
        return text

    assert asyncio.run(checkout()) == f"x = 1\n{BASE_SUBJECT}"


def test_rerun_reuses_the_clone_and_fetches_new_commits(tmp_path: Path, remotes) -> None:
    root, commits = remotes
    out = tmp_path / "repos"
    first = tasks_file(
        tmp_path / "a.jsonl", [("acme__widgets-1", "acme/widgets", commits["acme__widgets-1"])]
    )
    assert main(["-o", str(out), "--tasks", str(first), "--remote", f"{root}/{{repo}}", "--quiet"]) == 0
    remote = root / "acme" / "widgets"
    (remote / "w.py").write_text("x = 3\n")
    git(remote, "commit", "-q", "-am", "newer")
    newer = git(remote, "rev-parse", "HEAD")
    clone = out / "acme__widgets"
    assert subprocess.run(["git", "-C", str(clone), "cat-file", "-e", newer], check=False).returncode != 0
    both = tasks_file(
        tmp_path / "b.jsonl",
        [
            ("acme__widgets-1", "acme/widgets", commits["acme__widgets-1"]),
            ("acme__widgets-9", "acme/widgets", newer),
        ],
    )
    args = ["-o", str(out), "--tasks", str(both), "--remote", f"{root}/{{repo}}", "--quiet"]
    assert main([*args, "--instances", "acme__widgets-9"]) == 0
    assert git(clone, "cat-file", "-t", newer) == "commit"


def test_bad_input_exits_2(tmp_path: Path, capsys) -> None:
    out = tmp_path / "repos"
    assert main(["-o", str(out), "--instances", "nope__nope-1", "--quiet"]) == 2
    assert "no task nope__nope-1" in capsys.readouterr().err
    assert main(["-o", str(out), "--tasks", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: cannot read" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.e2e
def test_help_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "router_frontier_rl.prepare_repos", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "repos_dir" in done.stdout and "--instances" in done.stdout
