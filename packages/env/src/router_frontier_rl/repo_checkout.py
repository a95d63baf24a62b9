"""Local repositories for agentic episodes on the subprocess runtime: their layout, a fresh copy per rollout.

A directory of repositories (the `repos_dir` env argument) holds, for each task, either

- `<repos_dir>/<instance_id>/`: a checkout of that task (copied as it is; when it is a git checkout
  and the task's `base_commit` is known, its HEAD must be that commit), or
- `<repos_dir>/<owner>__<name>/`: a clone of the task's repository (`owner/name`) that has the task's
  `base_commit`; the rollout gets a shared clone of it checked out there, with every branch, remote,
  reflog entry and tag that is not an ancestor of `base_commit` removed, so the agent's `git log --all`
  shows no commit from after the issue (as SWE-bench's own images do).

An instance directory wins over a repository clone. `python -m router_frontier_rl.prepare_repos`
makes the clones where GitHub is reachable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import verifiers.v1 as vf

from router_oracle.data_files import tasks_path as bundled_tasks_path
from router_oracle.tasks_file import read_tasks

PREPARE_HINT = "python -m router_frontier_rl.prepare_repos -o {repos_dir}"
"""How to make a missing clone (printed in errors)."""


class RepoCheckoutError(RuntimeError):
    """A task's repository or commit cannot be provided: the message names it and the path tried."""


def clone_dir_name(repo: str) -> str:
    """The directory name of a clone of `owner/name`: `owner__name` (the prefix of its instance ids)."""
    owner, sep, name = repo.partition("/")
    if not sep or not owner or not name or "/" in name or owner.startswith("."):
        raise ValueError(f"not a GitHub owner/name: {repo!r}")
    return f"{owner}__{name}"


def base_commits(tasks_file: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """instance_id -> base_commit from a SWE-bench task file (default: the bundled Verified file)."""
    rows, _ = read_tasks(tasks_file if tasks_file is not None else bundled_tasks_path())
    return {r.instance_id: r.base_commit for r in rows if r.base_commit}


@dataclass(frozen=True)
class Checkout:
    """Where one task's repository comes from, and at which commit."""

    source: Path
    """The instance checkout or repository clone on this machine."""
    kind: Literal["instance", "clone"]
    """`instance`: copied as it is; `clone`: cloned and checked out at `commit`."""
    commit: str | None
    """The task's base_commit (required for a clone; checked against an instance checkout's HEAD)."""


def find_checkout(repos_dir: Path, instance_id: str, repo: str, base_commit: str | None) -> Checkout:
    """The source of task `instance_id` under `repos_dir` (see the module docstring for the layout)."""
    instance = repos_dir / instance_id
    if instance.is_dir():
        return Checkout(instance, "instance", base_commit)
    clone = repos_dir / clone_dir_name(repo)
    if clone.is_dir():
        if base_commit is None:
            raise RepoCheckoutError(
                f"{instance_id}: {clone} is a clone of {repo}, but the tasks file gives no base_commit "
                "for this task (set tasks_path to a SWE-bench task file that has it)"
            )
        return Checkout(clone, "clone", base_commit)
    raise RepoCheckoutError(
        f"no repository for {instance_id}: neither {instance} (a checkout of the task) nor {clone} "
        f"(a clone of {repo}) exists; make the clone with `{PREPARE_HINT.format(repos_dir=repos_dir)}`"
    )


# Runs in the rollout's empty working directory: "$1" the clone, "$2" the commit (already checked).
_CLONE_SCRIPT = r"""set -eu
git clone --quiet --shared --no-checkout -- "$1" .
git -c advice.detachedHead=false checkout --quiet --detach "$2"
git remote remove origin
git tag --merged HEAD | sed 's|^|refs/tags/|' > .git/vf-keep-refs
git for-each-ref --format='%(refname)' | { grep -vxF -f .git/vf-keep-refs || true; } \
  | sed 's/^/delete /' | git update-ref --stdin
rm -f .git/vf-keep-refs
git reflog expire --expire=now --all
"""


async def _run(runtime: vf.Runtime, argv: list[str], what: str) -> str:
    result = await runtime.run(argv, {})
    if result.exit_code != 0:
        detail = (result.stderr or result.stdout).strip()[-1000:]
        raise RepoCheckoutError(f"{what} failed (exit {result.exit_code}): {detail}")
    return result.stdout


async def check_out(runtime: vf.Runtime, instance_id: str, checkout: Checkout) -> None:
    """Give the rollout a fresh copy of `checkout` in `runtime`'s working directory (which is empty)."""
    src = str(checkout.source)
    if checkout.kind == "instance":
        await _run(runtime, ["cp", "-a", f"{src}/.", "."], f"{instance_id}: copying {src}")
        if checkout.commit is not None and (checkout.source / ".git").exists():
            head = await _run(runtime, ["git", "rev-parse", "HEAD"], f"{instance_id}: git rev-parse")
            head = head.strip()
            if head != checkout.commit:
                raise RepoCheckoutError(
                    f"{instance_id}: the checkout {src} is at commit {head}, the task's base_commit is "
                    f"{checkout.commit}"
                )
        return
    assert checkout.commit is not None  # find_checkout requires it for a clone
    has = await runtime.run(["git", "-C", src, "cat-file", "-e", f"{checkout.commit}^{{commit}}"], {})
    if has.exit_code != 0:
        raise RepoCheckoutError(
            f"{instance_id}: the clone {src} has no commit {checkout.commit} (the task's base_commit); "
            f"fetch it: git -C {src} fetch origin {checkout.commit}"
        )
    await _run(
        runtime,
        ["sh", "-c", _CLONE_SCRIPT, "vf-checkout", src, checkout.commit],
        f"{instance_id}: checking out {checkout.commit} from {src}",
    )
