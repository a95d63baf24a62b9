"""Checkpoints several test files route with, trained once per test process (session fixtures): each is
only read by the tests (they write their outputs elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from router_train.anypool import AnyPoolRunConfig, AnyPoolTrainConfig, run_any_pool
from router_train.local import LocalTrainConfig, train_local


@pytest.fixture(scope="session")
def grpo_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step local GRPO checkpoint on the bundled table's train split."""
    out = tmp_path_factory.mktemp("grpo")
    train_local(LocalTrainConfig(output_dir=out, steps=4, tasks_per_step=16), progress=False)
    return out / "checkpoint.json"


@pytest.fixture(scope="session")
def anypool_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-step any-pool checkpoint on the bundled candidates, `kimi-k2.5-high` held out."""
    out = tmp_path_factory.mktemp("anypool")
    cfg = AnyPoolRunConfig(
        output_dir=out,
        held_out_models=["kimi-k2.5-high"],
        train=AnyPoolTrainConfig(steps=4, pool_bank=8, tasks_per_step=16),
    )
    run_any_pool(cfg, progress=False)
    return out / "checkpoint.json"
