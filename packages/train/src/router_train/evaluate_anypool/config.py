"""`AnyPoolEvalConfig`: one `router-train evaluate-anypool` protocol's design and trainers, carried whole
from the command's options into `evaluate_any_pool` and `fit_all` (one object, not a keyword per flag)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.evaluate_anypool.design import HeldOutDesign, NamedPool
from router_train.irt.router import IrtConfig
from router_train.local.config import LocalTrainConfig


class AnyPoolEvalConfig(FrozenModel):
    """The held-out design, the evaluation pools, the folds and every trainer's settings."""

    held_out_by: HeldOutDesign = "explicit"
    """How the held-out groups were formed (`explicit`: given by id); the report says it."""
    drawn_pools: int = 3
    """Seeded evaluation pools drawn per group, each holding one of its models."""
    pool_size: int = 3
    """Models per drawn pool."""
    pool_seed: int = 0
    """Seed of the pool draws."""
    named_pools: Sequence[NamedPool] = ()
    """Pools also evaluated in every group holding one of their models."""
    folds: int = 5
    """Task folds per fold seed."""
    fold_seeds: Sequence[int] = (0,)
    """One complete K-fold pass per seed."""
    anypool_config: AnyPoolTrainConfig = Field(default_factory=AnyPoolTrainConfig)
    """The any-pool router's training."""
    fixed_config: LocalTrainConfig = Field(default_factory=LocalTrainConfig)
    """The fixed-pool GRPO reference's training (`local-grpo`)."""
    seed: int = 0
    """Seed of the classifier and the bootstrap."""
    irt: bool = False
    """The IRT router too (row `irt`: one fit per task partition on its train tasks' rows of every run,
    shared by the pools)."""
    irt_config: IrtConfig = Field(default_factory=IrtConfig)
    """With `irt`: the IRT settings' grids, searched by inner cross-validation on the train tasks."""
    jobs: int = 1
    """Processes running fits (and pool scorings) in parallel."""
