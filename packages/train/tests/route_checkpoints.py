"""Checkpoints that test_train_route and test_train_route_dial both route with, trained once per test
process (the two files run in one batch: packages/train/tests/BUILD). Only read by the tests, which
write their outputs elsewhere. A helper module, not a conftest.py: mypy checks all test directories as
one program, and the env's tests already have the one module named `conftest`."""

from __future__ import annotations

from pathlib import Path

import pytest
from bash_only import bash_only_table_path

from router_train.anypool import AnyPoolRunConfig, AnyPoolTrainConfig, run_any_pool
from router_train.cli import main
from router_train.local import LocalTrainConfig, train_local

_trained: dict[str, Path] = {}


def grpo_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step local GRPO checkpoint on the bash-only table's train split."""
    if "grpo" not in _trained:
        out = tmp_path_factory.mktemp("grpo")
        cfg = LocalTrainConfig(output_dir=out, steps=4, tasks_per_step=16, table_path=bash_only_table_path())
        train_local(cfg, progress=False)
        _trained["grpo"] = out / "checkpoint.json"
    return _trained["grpo"]


def anypool_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step any-pool checkpoint on the bundled candidates, `kimi-k2.5-high` held out."""
    if "anypool" not in _trained:
        out = tmp_path_factory.mktemp("anypool")
        cfg = AnyPoolRunConfig(
            output_dir=out,
            held_out_models=["kimi-k2.5-high"],
            table_path=bash_only_table_path(),
            train=AnyPoolTrainConfig(steps=4, pool_bank=8, tasks_per_step=16),
        )
        run_any_pool(cfg, progress=False)
        _trained["anypool"] = out / "checkpoint.json"
    return _trained["anypool"]


def logreg_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved `tfidf-logreg(balanced)` baseline (`router-train fit`) on the bash-only table's train split
    (balanced: it routes the eval split to all three models, where the plain one picks one)."""
    if "logreg" not in _trained:
        out = tmp_path_factory.mktemp("logreg")
        argv = ["--split", "train", "--table", str(bash_only_table_path()), "--output-dir", str(out)]
        assert main(["fit", "tfidf-logreg(balanced)", *argv]) == 0
        _trained["logreg"] = out / "checkpoint.json"
    return _trained["logreg"]


def irt_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved IRT router (`router-train fit irt`) on the bash-only table's train split."""
    if "irt" not in _trained:
        out = tmp_path_factory.mktemp("irt")
        argv = ["--split", "train", "--table", str(bash_only_table_path()), "--output-dir", str(out)]
        assert main(["fit", "irt", *argv]) == 0
        _trained["irt"] = out / "checkpoint.json"
    return _trained["irt"]
