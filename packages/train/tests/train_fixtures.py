"""The train tests' shared fixtures, session-scoped: each router is trained once per test process (a Pants
batch, or one devtest run), not once per file, and only by a process whose tests ask for it. Only read by
the tests, which write their outputs elsewhere.

`conftest.py` makes them fixtures of every test file here; they live in this module because mypy checks
all test directories as one program and the env's tests already have the one module named `conftest`
(this package's conftest.py, which only imports these, is not type-checked: BUILD, pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bash_only import bash_only_table_path
from serve_stubs import native_router, trained_checkpoint

from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.run import AnyPoolRunConfig, run_any_pool
from router_train.cli import main
from router_train.local.config import LocalTrainConfig
from router_train.local.trainer import train_local
from router_train.route import Router


@pytest.fixture(scope="session")
def grpo_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step local GRPO checkpoint on the bash-only table's train split."""
    out = tmp_path_factory.mktemp("grpo")
    cfg = LocalTrainConfig(output_dir=out, steps=4, tasks_per_step=16, table_path=bash_only_table_path())
    train_local(cfg, progress=False)
    return out / "checkpoint.json"


@pytest.fixture(scope="session")
def anypool_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step any-pool checkpoint on the bundled candidates, `kimi-k2.5-high` held out."""
    out = tmp_path_factory.mktemp("anypool")
    cfg = AnyPoolRunConfig(
        output_dir=out,
        held_out_models=["kimi-k2.5-high"],
        table_path=bash_only_table_path(),
        train=AnyPoolTrainConfig(steps=4, pool_bank=8, tasks_per_step=16),
    )
    run_any_pool(cfg, progress=False)
    return out / "checkpoint.json"


@pytest.fixture(scope="session")
def balanced_logreg_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved `tfidf-logreg(balanced)` baseline (`router-train fit`) on the bash-only table's train split
    (balanced: it routes the eval split to all three models, where the plain one picks one)."""
    out = tmp_path_factory.mktemp("logreg")
    argv = ["--split", "train", "--table", str(bash_only_table_path()), "--output-dir", str(out)]
    assert main(["fit", "tfidf-logreg(balanced)", *argv]) == 0
    return out / "checkpoint.json"


@pytest.fixture(scope="session")
def irt_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved IRT router (`router-train fit irt`) on the bash-only table's train split."""
    out = tmp_path_factory.mktemp("irt")
    argv = ["--split", "train", "--table", str(bash_only_table_path()), "--output-dir", str(out)]
    assert main(["fit", "irt", *argv]) == 0
    return out / "checkpoint.json"


@pytest.fixture(scope="session")
def serve_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The serve tests' router: a 5-step `router-train local` checkpoint on the bundled table."""
    return trained_checkpoint(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def serve_router(serve_checkpoint: Path) -> Router:
    """`serve_checkpoint`'s router at its native point, as the serve tests' proxies route."""
    return native_router(serve_checkpoint)
