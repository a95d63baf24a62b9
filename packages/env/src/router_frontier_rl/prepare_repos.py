"""Prepare a `repos_dir` for agentic routing on the subprocess runtime: one clone per repository.

    python -m router_frontier_rl.prepare_repos -o repos            # every bundled SWE-bench Verified task
    python -m router_frontier_rl.prepare_repos -o repos --instances django__django-11099 sympy__sympy-20590

For each repository of the selected tasks it makes `<out>/<owner>__<name>/` (`git clone --no-checkout`
from GitHub, into a temporary folder renamed when complete) and makes sure every selected task's
`base_commit` is in it (`git fetch origin <sha>` when it is not). Run it again to resume or to add tasks:
existing clones are reused. Needs `git` and network access to the remote (GitHub by default); it is not
run in CI. Then: `vf-eval router-frontier-rl --env.taskset.repo-access true --env.taskset.repos-dir
<out> --env.taskset.allow-unsandboxed true --env.agent.runtime.type subprocess ...` (see the README).

Exit status: 0 every selected task's commit is ready; 1 some are not (listed on stderr); 2 bad input
(unreadable tasks file, unknown instance id); 130 interrupted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from router_frontier_rl.repo_checkout import clone_dir_name
from router_oracle.data_files import tasks_path as bundled_tasks_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.tasks_file import TaskRow, read_tasks

DEFAULT_REMOTE = "https://github.com/{repo}.git"
"""Where a repository `owner/name` is cloned from (`{repo}` is replaced)."""


@dataclass
class Report:
    """What a run prepared."""

    ready: dict[str, str] = field(default_factory=dict)
    """instance_id -> the clone that has its base_commit."""
    failed: dict[str, str] = field(default_factory=dict)
    """instance_id -> why its commit is not ready."""


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def _has_commit(clone: Path, sha: str) -> bool:
    return _git("-C", str(clone), "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def _clone(url: str, dest: Path) -> str | None:
    """Clone `url` to `dest` (complete or not at all); the error text on failure."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        done = _git("clone", "--quiet", "--no-checkout", "--", url, str(tmp / "repo"))
        if done.returncode != 0:
            return done.stderr.strip() or f"git clone exited {done.returncode}"
        (tmp / "repo").rename(dest)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fetch(clone: Path, sha: str) -> None:
    # GitHub serves a commit by its sha; a remote that does not gets a plain fetch of its refs.
    if _git("-C", str(clone), "fetch", "--quiet", "origin", sha).returncode != 0:
        _git("-C", str(clone), "fetch", "--quiet", "--tags", "origin")


def prepare(
    tasks: Sequence[TaskRow], out: Path, remote: str = DEFAULT_REMOTE, *, progress: bool = True
) -> Report:
    """Make `out/<owner>__<name>` for every repository of `tasks`, holding each task's base_commit."""
    report = Report()
    by_repo: dict[str, list[TaskRow]] = defaultdict(list)
    for t in tasks:
        if t.base_commit:
            by_repo[t.repo].append(t)
        else:
            report.failed[t.instance_id] = "the tasks file gives no base_commit"
    for repo in tqdm(sorted(by_repo), desc="repositories", unit="repo", disable=not progress):
        clone = out / clone_dir_name(repo)
        if not clone.is_dir():
            error = _clone(remote.format(repo=repo), clone)
            if error is not None:
                for t in by_repo[repo]:
                    report.failed[t.instance_id] = f"cannot clone {remote.format(repo=repo)}: {error}"
                continue
        for t in by_repo[repo]:
            sha = str(t.base_commit)
            if not _has_commit(clone, sha):
                _fetch(clone, sha)
            if _has_commit(clone, sha):
                report.ready[t.instance_id] = str(clone)
            else:
                report.failed[t.instance_id] = (
                    f"{clone} has no commit {sha}, and fetching it from origin failed"
                )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m router_frontier_rl.prepare_repos",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-o", "--out", type=Path, required=True, help="the repos_dir to fill (created if missing)"
    )
    parser.add_argument(
        "--tasks",
        type=Path,
        help="SWE-bench task file (JSONL, optionally gzipped: instance_id, repo, base_commit); "
        "default: the bundled SWE-bench Verified file",
    )
    parser.add_argument("--instances", nargs="+", metavar="ID", help="only these instance ids (default: all)")
    parser.add_argument(
        "--remote",
        default=DEFAULT_REMOTE,
        help=f"clone URL, {{repo}} = owner/name (default: {DEFAULT_REMOTE})",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        rows, _ = read_tasks(args.tasks if args.tasks is not None else bundled_tasks_path())
        if args.instances:
            known = {r.instance_id: r for r in rows}
            unknown = [i for i in args.instances if i not in known]
            if unknown:
                raise OracleInputError(f"{args.tasks or 'bundled tasks file'}: no task {', '.join(unknown)}")
            rows = [known[i] for i in dict.fromkeys(args.instances)]
        report = prepare(rows, args.out, args.remote, progress=not args.quiet)
    except OracleInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    repos = len(set(report.ready.values()))
    print(f"{len(report.ready)} of {len(rows)} tasks ready in {repos} repositories under {args.out}")
    for instance_id, why in sorted(report.failed.items()):
        print(f"not ready: {instance_id}: {why}", file=sys.stderr)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
