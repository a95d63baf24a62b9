"""Reading table files: every failure is a TableError that names the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from router_oracle.build import build_default_table
from router_oracle.table import TableError, TaskRecord, dumps_table, write_table
from router_oracle.table_check import load_table
from router_oracle.task_input import TaskInput


def test_round_trip_through_a_file(tmp_path: Path) -> None:
    table = build_default_table()
    path = tmp_path / "t.json"
    write_table(table, path)
    assert load_table(path) == table
    assert path.read_text(encoding="utf-8") == dumps_table(table)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe not utf-8", "not a UTF-8 oracle table"),
        (b"{}", "not a valid oracle table"),
        (b"[1, 2", "not a valid oracle table"),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TableError, match=message) as exc:
        load_table(path)
    assert str(path) in str(exc.value)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="cannot read oracle table") as exc:
        load_table(tmp_path / "absent.json")
    assert "absent.json" in str(exc.value)


def test_a_table_row_is_what_a_router_reads_then_its_outcomes() -> None:
    # `TaskRecord` extends `TaskInput`: the row's first keys are the router's inputs, in the file's order,
    # and a table row still needs its repo and difficulty key (a new issue's `TaskInput` does not).
    row = build_default_table().tasks[0]
    assert isinstance(row, TaskInput)
    assert (
        list(row.model_dump())[:4]
        == list(TaskInput.model_fields)
        == [
            "instance_id",
            "repo",
            "difficulty",
            "problem_statement",
        ]
    )
    assert TaskInput(instance_id="new-1", problem_statement="crash").repo == ""
    with pytest.raises(ValidationError, match="repo"):
        TaskRecord.model_validate({**row.model_dump(), "repo": None})
    with pytest.raises(ValidationError, match="instance_id"):
        TaskInput(instance_id="", problem_statement="crash")
