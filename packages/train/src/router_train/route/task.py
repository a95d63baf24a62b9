"""Where the tasks a router is asked about come from, each a `router_oracle.task_input.TaskInput`.

Tasks come from the bundled SWE-bench Verified file (`--instance`), a JSON Lines file with SWE-bench
field names (`--tasks`), one new issue (`--issue`), or a request to `serve` (`served_task`: the one
place a served task's identity is built). Every router reads the repository and the issue only; the
difficulty annotation travels along for bundled tasks because a local checkpoint trained with
`FeatureConfig.difficulty` featurises it (off by default).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

from router_oracle.data_files import tasks_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.task_input import TaskInput
from router_oracle.tasks_file import read_tasks
from router_train.route.spec import RouteError

REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
"""A GitHub `owner/name`."""


def _from_rows(path: str | os.PathLike[str]) -> list[TaskInput]:
    try:
        rows, _ = read_tasks(path)
    except OracleInputError as exc:
        raise RouteError(str(exc)) from exc
    return [
        TaskInput(
            instance_id=r.instance_id,
            repo=r.repo,
            problem_statement=r.problem_statement,
            difficulty=r.difficulty,
        )
        for r in rows
    ]


def bundled_tasks() -> dict[str, TaskInput]:
    """The 500 SWE-bench Verified tasks bundled with router-oracle, by instance id."""
    return {t.instance_id: t for t in _from_rows(tasks_path())}


def bundled_instances(instance_ids: Sequence[str]) -> list[TaskInput]:
    """The bundled tasks `instance_ids`, in that order; an unknown id is one error naming it."""
    known = bundled_tasks()
    unknown = [i for i in instance_ids if i not in known]
    if unknown:
        raise RouteError(
            f"--instance {unknown[0]}: not a bundled SWE-bench Verified task"
            + (f" (and {len(unknown) - 1} more unknown ids)" if len(unknown) > 1 else "")
        )
    return [known[i] for i in instance_ids]


def read_task_file(path: str | os.PathLike[str]) -> list[TaskInput]:
    """Tasks of a JSON Lines file (optionally gzipped) with SWE-bench field names, sorted by id:
    router-oracle's task-file reader (`instance_id`, `repo`, `problem_statement`; other keys ignored;
    a bad line is one error naming the file and line)."""
    return _from_rows(path)


def issue_id(repo: str, text: str) -> str:
    """A new issue's derived id: `owner__name-issue-` and the first 12 hex digits of the text's sha256
    (SWE-bench's `owner__name-N` shape, stable for the same text)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{repo.replace('/', '__')}-issue-{digest}"


def issue_task(text: str, repo: str, *, source: str = "--issue") -> TaskInput:
    """One new issue of `repo` as a task (id: `issue_id`)."""
    if not re.match(REPO_PATTERN, repo):
        raise RouteError(f"--repo {repo!r}: not a GitHub OWNER/NAME")
    if not text.strip():
        raise RouteError(f"{source}: the issue text is empty")
    return TaskInput(instance_id=issue_id(repo, text), repo=repo, problem_statement=text)


def served_task(issue: str, repo: str | None, task_id: str | None, key: str) -> TaskInput:
    """A task `serve` routes, from its request: the issue (the first user message's text), the repository
    header, the task-id header and the task key (`serve.identity.task_key`). Its id is the task-id
    header; else the id `router-train route --issue FILE --repo R` gives the same issue when the repo is
    known; else one derived from the task key."""
    instance_id = task_id or (issue_id(repo, issue) if repo else f"serve-{key[:16]}")
    return TaskInput(instance_id=instance_id, repo=repo or "", problem_statement=issue)
