"""The task file: what the router sees about each SWE-bench task (JSONL, optionally gzipped)."""

from __future__ import annotations

import json
import os

from pydantic import BaseModel, ConfigDict, ValidationError

from router_oracle.data_files import display_path, is_bundled
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.validation_message import one_line
from router_oracle.sources.rows import read_source
from router_oracle.table import SourceFile


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


TASKS_LICENSE = "BSD-3-Clause"
"""Licence of the bundled task file's texts (SWE-bench Verified as redistributed; see data/README.md)."""


def _table_tasks(
    text: str, path: str | os.PathLike[str], digest: str
) -> tuple[list[TaskRow], SourceFile] | None:
    """The tasks of an oracle table given as `--tasks` (its rows' texts, its task file's licence), or None
    when the text is not an oracle table."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return None  # JSONL (or malformed: the line reader says where)
    if not (isinstance(doc, dict) and isinstance(doc.get("tasks"), list) and "pool" in doc):
        return None
    rows = []
    for i, t in enumerate(doc["tasks"]):
        try:
            rows.append(
                TaskRow.model_validate(
                    {k: t.get(k) for k in ("instance_id", "repo", "problem_statement", "difficulty")}
                )
            )
        except (ValidationError, AttributeError) as exc:
            raise OracleInputError(f"{path}: tasks[{i}]: not a task row: {exc}") from exc
    if not rows:
        raise OracleInputError(f"{path}: no tasks")
    licenses = [
        s.get("license") for s in doc.get("sources", []) if isinstance(s, dict) and s.get("kind") == "tasks"
    ]
    license = licenses[0] if licenses and isinstance(licenses[0], str) else None
    return rows, SourceFile(path=display_path(path), kind="tasks", sha256=digest, license=license)


def is_table_tasks(path: str | os.PathLike[str]) -> bool:
    """Whether `--tasks` names an oracle table (a deliberate subset of the tasks: a source's rows of
    other tasks are then not an error)."""
    text, digest = read_source(path)
    return _table_tasks(text, path, digest) is not None


def read_tasks(path: str | os.PathLike[str]) -> tuple[list[TaskRow], SourceFile]:
    """All tasks of a task file, sorted by `instance_id`, and the file's provenance entry.

    The file is a task JSONL (the bundled file's format), or an oracle table, whose tasks are then used
    (so a table can be built over exactly the tasks of another, e.g. for `evaluate --test-table`)."""
    text, digest = read_source(path)
    if (from_table := _table_tasks(text, path, digest)) is not None:
        return from_table
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
    source = SourceFile(
        path=display_path(path),
        kind="tasks",
        sha256=digest,
        license=TASKS_LICENSE if is_bundled(path) else None,
    )
    return [tasks[k] for k in sorted(tasks)], source
