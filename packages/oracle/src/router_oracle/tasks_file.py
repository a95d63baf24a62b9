"""The task file: what the router sees about each SWE-bench task (JSONL, optionally gzipped)."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, ValidationError

from router_oracle.data_files import display_path
from router_oracle.errors import OracleInputError
from router_oracle.sources.rows import read_source
from router_oracle.table import SourceFile
from router_oracle.validation_message import one_line


class TaskRow(BaseModel):
    """One line of the task file. Other keys are ignored (so a gold `patch` is never carried)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_id: str
    """SWE-bench instance id, unique in the file."""
    repo: str
    """GitHub `owner/name` of the task's repository."""
    problem_statement: str
    """The issue text, verbatim."""
    difficulty: str | None = None
    """SWE-bench Verified human difficulty annotation, if known."""
    base_commit: str | None = None
    """Commit the task starts from (not copied into tables)."""


def read_tasks(path: str | os.PathLike[str]) -> tuple[list[TaskRow], SourceFile]:
    """All tasks of a task file, sorted by `instance_id`, and the file's provenance entry."""
    text, digest = read_source(path)
    tasks: dict[str, TaskRow] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {n}"
        try:
            row = TaskRow.model_validate_json(line)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                raise OracleInputError(f"{where}: malformed JSON: {exc.errors()[0]['msg']}") from exc
            raise OracleInputError(f"{where}: not a task row: {one_line(exc)}") from exc
        if row.instance_id in tasks:
            raise OracleInputError(f"{where}: duplicate task {row.instance_id!r}")
        tasks[row.instance_id] = row
    if not tasks:
        raise OracleInputError(f"{path}: no tasks")
    source = SourceFile(path=display_path(path), kind="tasks", sha256=digest)
    return [tasks[k] for k in sorted(tasks)], source
