"""`router-train` on bad input: one line and exit 2 (130 on Ctrl-C), and outputs published all or nothing."""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

import router_train.evaluate.run as evaluate_run
import router_train.local.trainer as trainer
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.rewards import check_weights
from router_oracle.infra.atomic_file import write_bytes_atomic
from router_oracle.table import TableError
from router_oracle.table_check import load_table
from router_train.cli import main
from router_train.local.checkpoint import read_checkpoint
from router_train.local.config import LocalTrainError, RewardWeights

QUICK = ["--steps", "2", "--tasks-per-step", "8", "--quiet"]
"""A `router-train local` run of a second."""
QUICK_EVALUATE = ["--no-baselines", "--local", "quick=--steps 2 --tasks-per-step 8 --shift-folds 0"]
"""`evaluate` of one few-step local router only: these tests are about the output files, and the default
`local-grpo` (hundreds of steps, cross-fitted) would add only time."""


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("a file, not a directory")
    (tmp_path / "adir").mkdir()
    return tmp_path


def _small_table(path: Path, n: int = 80) -> Path:
    """The bundled table's first `n` tasks (still a valid table): evaluations of a second."""
    doc = json.loads(bundled_table_path().read_text())
    doc["tasks"] = doc["tasks"][:n]
    path.write_text(json.dumps(doc))
    return path


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and ".tmp" not in err and "pydantic.dev" not in err
    return lines[0]


def _hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


# --- output paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["local", *QUICK, "--output-dir", "afile"],
            "router-train local: afile: exists and is not a directory",
        ),
        (
            ["local", *QUICK, "--output-dir", "afile/run"],
            "router-train local: afile/run: cannot write here: afile is not a directory",
        ),
        (
            ["evaluate", "--no-plot", "-o", "afile"],
            "router-train evaluate: error: afile: exists and is not a directory",
        ),
        (["config", "smoke", "-o", "adir"], "router-train config: adir: is a directory; give a file name"),
        (
            ["config", "smoke", "-o", "afile/smoke.toml"],
            "router-train config: afile/smoke.toml: cannot write here: afile is not a directory",
        ),
    ],
)
def test_output_path_problems_are_one_line_naming_the_users_path(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    assert main(argv) == 2
    assert _one_line(capsys) == line
    assert _hidden(in_tmp) == [] and os.listdir(in_tmp / "adir") == []


@pytest.mark.parametrize(
    "argv", [["local", "--output-dir", ""], ["evaluate", "-o", ""], ["config", "smoke", "-o", ""]]
)
def test_an_empty_output_path_is_a_usage_error(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert ": empty path" in capsys.readouterr().err
    assert sorted(os.listdir(in_tmp)) == ["adir", "afile"]


def _unwritable(tmp_path: Path) -> Path:
    """A directory this process cannot create entries in (read-only; as root, /sys)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if not os.access(ro, os.W_OK):
        return ro
    try:
        (Path("/sys") / ".router-probe").touch()
    except OSError:
        return Path("/sys")
    pytest.skip("no unwritable directory available")


@pytest.mark.parametrize("command", ["local", "evaluate", "config"])
def test_an_unwritable_directory_is_named(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = _unwritable(in_tmp) / "out"
    argv = {
        "local": ["local", *QUICK, "--output-dir", str(target)],
        # The 80-task table: the check is about the output path; the bundled 500 tasks add only time.
        "evaluate": [
            "evaluate",
            "--table",
            str(_small_table(in_tmp / "small.json")),
            *QUICK_EVALUATE,
            "--no-plot",
            "-o",
            str(target),
        ],
        "config": ["config", "smoke", "-o", str(target)],
    }[command]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert f": {target}: cannot write in {target.parent}: " in line


# --- Ctrl-C ---------------------------------------------------------------------------------------


def test_ctrl_c_is_one_line_and_exit_130(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "train_local", interrupted)
    assert main(["local", *QUICK, "--output-dir", "run"]) == 130
    assert _one_line(capsys) == "router-train local: interrupted; no output written"


# --- NaN and infinity ---------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["nan,0,0,0,0", "1,0,0,0,-inf"])
def test_non_finite_reward_weights_are_refused(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], weights: str
) -> None:
    assert main(["local", *QUICK, "--reward-weights", weights, "--output-dir", "run"]) == 2
    values = [float(w) for w in weights.split(",")]
    with pytest.raises(ValueError) as env_check:
        check_weights(values)  # the env's own check, the one the local trainer applies
    assert _one_line(capsys) == f"router-train local: --reward-weights: {env_check.value}"
    assert not (in_tmp / "run").exists()
    with pytest.raises(ValueError, match="finite"):
        RewardWeights(routed_reward=math.nan)


def test_a_checkpoint_with_non_finite_numbers_is_refused_at_load(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["local", *QUICK, "--output-dir", "run"]) == 0
    capsys.readouterr()
    doc = json.loads((in_tmp / "run/checkpoint.json").read_text())
    for field, poison in (("weights", lambda d: d["weights"][3].__setitem__(1, math.nan)),
                          ("bias", lambda d: d["bias"].__setitem__(0, math.inf))):  # fmt: skip
        bad = copy.deepcopy(doc)
        poison(bad)
        (in_tmp / "bad.json").write_text(json.dumps(bad))  # json writes NaN / Infinity
        with pytest.raises(
            LocalTrainError, match=f"^bad.json: not a valid local router checkpoint .*{field} holds"
        ):
            read_checkpoint("bad.json")
        assert main(["evaluate", "--checkpoint", "bad.json", "--no-baselines", "--no-plot", "-o", "rep"]) == 2
        assert f"{field} holds non-finite numbers" in _one_line(capsys)
    assert not (in_tmp / "rep").exists()


# --- one table check for every consumer ----------------------------------------------------------


def _missing_model(d: dict[str, Any]) -> None:
    del d["tasks"][0]["per_model"]["gpt-5.5"]


def _wrong_oracle(d: dict[str, Any]) -> None:
    t = d["tasks"][0]
    t["oracle"] = next(m for m in t["per_model"] if m != t["oracle"])


def _duplicate(d: dict[str, Any]) -> None:
    d["tasks"].append(d["tasks"][3])


def _extra_model(d: dict[str, Any]) -> None:
    d["tasks"][1]["per_model"]["extra-model"] = d["tasks"][1]["per_model"]["gpt-5.5"]


@pytest.mark.parametrize("breaks", [_missing_model, _wrong_oracle, _duplicate, _extra_model])
def test_local_and_evaluate_refuse_a_table_the_check_refuses(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], breaks: Callable[[dict[str, Any]], None]
) -> None:
    doc = json.loads(bundled_table_path().read_text())
    doc["tasks"] = doc["tasks"][:80]
    breaks(doc)
    Path("bad.json").write_text(json.dumps(doc))
    with pytest.raises(TableError) as check:
        load_table("bad.json")
    assert main(["local", *QUICK, "--table", "bad.json", "--output-dir", "run"]) == 2
    assert _one_line(capsys) == f"router-train local: {check.value}"
    assert main(["evaluate", "--table", "bad.json", "--no-plot", "-o", "rep"]) == 2
    assert _one_line(capsys) == f"router-train evaluate: error: {check.value}"
    assert not (in_tmp / "run").exists() and not (in_tmp / "rep").exists()


# --- pydantic errors: one line --------------------------------------------------------------------


def test_invalid_options_and_configs_are_one_line(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:  # a number out of bounds is argparse's error, naming the flag
        main(["local", "--steps", "0", "--output-dir", "run"])
    assert usage.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "router-train local: error: argument --steps: Input should be greater than or equal to 1 (got '0')"
    )
    Path("bad.toml").write_text('max_steps = "many"\n')
    assert main(["launch", "smoke", "--dry-run", "--config", "bad.toml"]) == 2
    line = _one_line(capsys)
    assert line.startswith("router-train launch: bad.toml: not a config this tool can launch: max_steps: ")


# --- all-or-nothing outputs ------------------------------------------------------------------------


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_an_interrupted_local_run_leaves_the_previous_files(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["local", *QUICK, "--output-dir", "run"]) == 0
    before = _snapshot(in_tmp / "run")
    assert sorted(before) == ["checkpoint.json", "metrics.jsonl", "summary.json"]

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C as the checkpoint is written, after every metrics line

    monkeypatch.setattr(trainer, "save_checkpoint", interrupted)
    assert main(["local", *QUICK, "--seed", "7", "--output-dir", "run"]) == 130
    assert _snapshot(in_tmp / "run") == before
    assert _hidden(in_tmp) == [] and _hidden(in_tmp / "run") == []


def test_an_interrupted_evaluate_leaves_the_previous_report(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = str(_small_table(in_tmp / "small.json"))
    assert main(["evaluate", "--table", table, *QUICK_EVALUATE, "-o", "rep"]) == 0
    before = _snapshot(in_tmp / "rep")
    assert sorted(before) == ["cost_vs_resolved.png", "report.json", "report.md"]

    def interrupt_at_the_plot(write: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(target: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(target).name == "cost_vs_resolved.png":
                raise KeyboardInterrupt  # Ctrl-C as the plot is written, after report.json and .md
            return write(target, *args, **kwargs)

        return wrapped

    monkeypatch.setattr(Path, "write_bytes", interrupt_at_the_plot(Path.write_bytes))
    # (before the fix each file was written on its own by write_bytes_atomic)
    monkeypatch.setattr(
        evaluate_run, "write_bytes_atomic", interrupt_at_the_plot(write_bytes_atomic), raising=False
    )
    assert main(["evaluate", "--table", table, *QUICK_EVALUATE, "--seed", "5", "-o", "rep"]) == 130
    assert _snapshot(in_tmp / "rep") == before
    assert _hidden(in_tmp) == [] and _hidden(in_tmp / "rep") == []


def test_local_refuses_an_output_dir_whose_files_would_replace_its_table(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "run").mkdir()
    table = in_tmp / "run" / "checkpoint.json"  # the table, where the checkpoint would go
    table.write_bytes(bundled_table_path().read_bytes())
    assert main(["local", *QUICK, "--table", "run/checkpoint.json", "--output-dir", "run"]) == 2
    assert _one_line(capsys) == (
        "router-train local: run/checkpoint.json: is also an input (--table run/checkpoint.json); "
        "write the output somewhere else"
    )
    assert table.read_bytes() == bundled_table_path().read_bytes()
