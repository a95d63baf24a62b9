"""Fourth bad-input round (issue 33) for `fit`, `evaluate`'s curve and fold flags, `config --nodes` and
`launch --prime-rl DIR`: one stderr line naming the flag or file, exit 2, nothing written."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from router_frontier_rl.bundled import bundled_table_path
from router_train.cli import main


def _exit(argv: list[str]) -> int | str | None:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own flag errors
        return exc.code


def _one_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert _exit(argv) == 2
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if not x.startswith(("usage:", " "))]
    assert len(lines) == 1 and "Traceback" not in err
    return lines[0]


def test_fit_refuses_an_output_dir_whose_checkpoint_is_its_table(tmp_path, capsys, monkeypatch):
    # Found in this round: `fit --table D/checkpoint.json --output-dir D` replaced the table by the fit.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    table = tmp_path / "d" / "checkpoint.json"
    shutil.copyfile(bundled_table_path(), table)
    before = table.read_bytes()
    err = _one_error(capsys, ["fit", "tfidf-logreg", "--table", "d/checkpoint.json", "--output-dir", "d"])
    assert "is also an input (--table d/checkpoint.json)" in err
    assert table.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["tfidf-knn(k=0)"], "argument NAME: invalid choice"),
        (["tfidf-logreg", "--split", "train", "--eval-fraction", "nan"], "argument --eval-fraction"),
        (["tfidf-logreg", "--seed", "-1"], "argument --seed"),
        (["tfidf-logreg", "--table", "empty.json"], "empty.json: not a valid oracle table"),
        (["tfidf-logreg", "--table", "ckpt.json"], "ckpt.json: not a valid oracle table"),
    ],
)
def test_fit_bad_flags_and_tables(argv, why, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "ckpt.json").write_text(json.dumps({"kind": "router-train-local", "version": 3}))
    assert why in _one_error(capsys, ["fit", *argv, "--output-dir", "out"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--folds", "0"], "argument --folds: Input should be greater than or equal to 1"),
        (["--folds", "nan"], "argument --folds: Input should be a valid integer"),
        (["--folds", "1"], "cross-validation needs 2 <= folds <= tasks (500), got 1 folds"),
        (["--folds", "1000000"], "got 1000000 folds"),
        (["--checkpoint", "inf.json"], "calibration.model_costs[0]: Input should be a finite number"),
    ],
)
def test_evaluate_fold_and_curve_inputs(flags, why, tmp_path, capsys, monkeypatch):
    # The curves are drawn from each router's dial calibration (docs/evaluate-curves.md): an infinite
    # price in a checkpoint's calibration is refused at load, not drawn.
    monkeypatch.chdir(tmp_path)
    doc = {"kind": "router-train-local", "version": 3, "calibration": {"model_costs": [math.inf]}}
    (tmp_path / "inf.json").write_text(json.dumps(doc))
    if "inf.json" in flags:  # a real checkpoint with only the price poisoned
        assert main(["local", "--steps", "2", "--tasks-per-step", "8", "--output-dir", "run"]) == 0
        real = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
        real["calibration"]["model_costs"][0] = math.inf
        (tmp_path / "inf.json").write_text(json.dumps(real))
    assert why in _one_error(capsys, ["evaluate", *flags, "--no-plot", "-o", "rep"])
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize(
    ("nodes", "why"),
    [
        ("0", "argument --nodes: Input should be greater than or equal to 1"),
        ("-1", "argument --nodes: Input should be greater than or equal to 1"),
        ("1000001", "argument --nodes: Input should be less than or equal to 1000000"),
        ("99999999999999999999", "argument --nodes: Input should be less than or equal to 1000000"),
        ("nan", "argument --nodes: Input should be a valid integer"),
    ],
)
def test_config_nodes_out_of_bounds(nodes, why, tmp_path, capsys):
    out = tmp_path / "full.toml"
    assert why in _one_error(capsys, ["config", "full", f"--nodes={nodes}", "-o", str(out)])
    assert not out.exists()


def test_config_nodes_at_the_bound_renders(tmp_path, capsys):
    # The bound is the project's one count bound (1e6): a million-node file is rendered as asked (half
    # trainer, half inference nodes); whether SLURM has them is prime-rl's to say.
    out = tmp_path / "full.toml"
    assert main(["config", "full", "--nodes", "1000000", "-o", str(out)]) == 0
    text = out.read_text()
    assert "num_train_nodes = 500000" in text and "num_infer_nodes = 500000" in text


def test_launch_prime_rl_on_a_bad_directory(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("not a checkout")
    bad_toml = tmp_path / "bad-toml"
    bad_toml.mkdir()
    (bad_toml / "pyproject.toml").write_text("[project\nname=")
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "pyproject.toml").write_bytes(b"\xc3\x28\xff\x00")
    common = ["--from-source", "--version", "0.1.0", "--stage-dir", str(tmp_path / "stage")]
    common += ["--runs-dir", str(tmp_path / "runs")]
    for directory, why in (
        (afile, "not a directory"),
        (tmp_path / "missing", "not a directory"),
        (empty, "not a prime-rl checkout"),
        (bad_toml, "not a prime-rl checkout"),
        (binary, "not a prime-rl checkout"),
    ):
        for dry in ([], ["--dry-run"]):
            err = _one_error(capsys, ["launch", "full", "--prime-rl", str(directory), *common, *dry])
            assert f"--prime-rl {directory}: {why}" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "stage").exists()
