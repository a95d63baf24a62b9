"""Every command's output directory follows the one output-path rule, checked before any work (issue 41,
items 6 and 8): a user's directory or FIFO where a command's file goes is refused and left alone (exit 2,
one line naming it), and an output directory that is a file is refused before the evaluation or the
training runs (the slow part is replaced by one that fails the test if it is reached)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import router_train.commands.evaluate as evaluate_command
import router_train.commands.evaluate_anypool as evaluate_anypool_command
import router_train.commands.local_anypool as local_anypool_command
import router_train.local.trainer as local_trainer
from router_train.cli import main


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("the work ran before the output path was checked")


@pytest.fixture(autouse=True)
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluate_command, "evaluate", _never)
    monkeypatch.setattr(evaluate_anypool_command, "evaluate_any_pool", _never)
    monkeypatch.setattr(local_anypool_command, "run_any_pool", _never)
    monkeypatch.setattr(local_trainer, "_load", _never)
    monkeypatch.setattr("router_train.commands.fit.load_table", _never)


COMMANDS: dict[str, tuple[list[str], str]] = {
    "fit irt": (["fit", "irt", "--output-dir"], "checkpoint.json"),
    "fit logreg": (["fit", "tfidf-logreg", "--output-dir"], "checkpoint.json"),
    "evaluate": (["evaluate", "-o"], "report.json"),
    "evaluate-anypool": (["evaluate-anypool", "--quick", "-o"], "report.json"),
    "local --irt": (["local", "--irt", "--quiet", "--output-dir"], "checkpoint.json"),
    "local-anypool": (["local-anypool", "--quiet", "--output-dir"], "checkpoint.json"),
}


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_users_directory_or_fifo_where_a_file_goes_is_left_alone(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, name = COMMANDS[command]
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    (out / name / "mine.txt").write_text("keep me")
    err = _refused(capsys, [*argv, str(out)])
    assert f"{out / name}: is a directory" in err
    assert (out / name / "mine.txt").read_text() == "keep me"
    (out / name / "mine.txt").unlink()
    (out / name).rmdir()
    os.mkfifo(out / name)
    err = _refused(capsys, [*argv, str(out)])
    assert f"{out / name}: is a FIFO" in err and (out / name).is_fifo()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_directory_that_is_a_file_is_refused_before_the_work(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, _ = COMMANDS[command]
    out = tmp_path / "a-file"
    out.write_text("mine")
    err = _refused(capsys, [*argv, str(out)])
    assert f"{out}: exists and is not a directory" in err
    assert out.read_text() == "mine"
