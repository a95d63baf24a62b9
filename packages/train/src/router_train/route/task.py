"""What a router is asked about: one task (repository and issue text), and where tasks come from.

Tasks come from the bundled SWE-bench Verified file (`--instance`), a JSON Lines file with SWE-bench
field names (`--tasks`), or one new issue (`--issue`). Every router reads the repository and the issue
only; the difficulty annotation travels along for bundled tasks because a local checkpoint trained with
`FeatureConfig.difficulty` featurises it (off by default).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

from pydantic import Field

from router_oracle.data_files import tasks_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_oracle.tasks_file import read_tasks
from router_train.route.spec import RouteError

REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
"""A GitHub `owner/name`."""


class RouteTask(FrozenModel):
    """One task to route: what every router may read about it."""

    instance_id: str = Field(min_length=1)
    """The task's id (SWE-bench `instance_id`, or one derived from a new issue: `issue_id`)."""
    repo: str | None = None
    """GitHub `owner/name` of its repository, when known (routers read it: give it)."""
    problem_statement: str
    """The issue text, verbatim."""
    difficulty: str | None = None
    """SWE-bench Verified difficulty annotation (bundled tasks only; read only by local checkpoints
    trained with the difficulty feature)."""

    @classmethod
    def of_record(cls, record: TaskRecord) -> RouteTask:
        """A table row as a task to route (what routers read of it: id, repository, issue, difficulty)."""
        return cls(
            instance_id=record.instance_id,
            repo=record.repo or None,
            problem_statement=record.problem_statement,
            difficulty=record.difficulty,
        )

    def record(self) -> TaskRecord:
        """The task as the project's routers take it (a table row without outcomes: no router reads them)."""
        return TaskRecord(
            instance_id=self.instance_id,
            repo=self.repo or "",
            difficulty=self.difficulty,
            problem_statement=self.problem_statement,
            per_model={},
            oracle="",
            best=[],
            all_failed=False,
        )


def _from_rows(path: str | os.PathLike[str]) -> list[RouteTask]:
    try:
        rows, _ = read_tasks(path)
    except OracleInputError as exc:
        raise RouteError(str(exc)) from exc
    return [
        RouteTask(
            instance_id=r.instance_id,
            repo=r.repo,
            problem_statement=r.problem_statement,
            difficulty=r.difficulty,
        )
        for r in rows
    ]


def bundled_tasks() -> dict[str, RouteTask]:
    """The 500 SWE-bench Verified tasks bundled with router-oracle, by instance id."""
    return {t.instance_id: t for t in _from_rows(tasks_path())}


def bundled_instances(instance_ids: Sequence[str]) -> list[RouteTask]:
    """The bundled tasks `instance_ids`, in that order; an unknown id is one error naming it."""
    known = bundled_tasks()
    unknown = [i for i in instance_ids if i not in known]
    if unknown:
        raise RouteError(
            f"--instance {unknown[0]}: not a bundled SWE-bench Verified task"
            + (f" (and {len(unknown) - 1} more unknown ids)" if len(unknown) > 1 else "")
        )
    return [known[i] for i in instance_ids]


def read_task_file(path: str | os.PathLike[str]) -> list[RouteTask]:
    """Tasks of a JSON Lines file (optionally gzipped) with SWE-bench field names, sorted by id:
    router-oracle's task-file reader (`instance_id`, `repo`, `problem_statement`; other keys ignored;
    a bad line is one error naming the file and line)."""
    return _from_rows(path)


def issue_id(repo: str, text: str) -> str:
    """A new issue's derived id: `owner__name-issue-` and the first 12 hex digits of the text's sha256
    (SWE-bench's `owner__name-N` shape, stable for the same text)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{repo.replace('/', '__')}-issue-{digest}"


def issue_task(text: str, repo: str, *, source: str = "--issue") -> RouteTask:
    """One new issue of `repo` as a task (id: `issue_id`)."""
    if not re.match(REPO_PATTERN, repo):
        raise RouteError(f"--repo {repo!r}: not a GitHub OWNER/NAME")
    if not text.strip():
        raise RouteError(f"{source}: the issue text is empty")
    return RouteTask(instance_id=issue_id(repo, text), repo=repo, problem_statement=text)
