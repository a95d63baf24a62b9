"""Checkpoint of a fitted IRT router (`router-train fit irt`): one JSON document, written atomically, and
what routing reads of it. The fit (`irt.fit_command.fit_irt_checkpoint`, not imported here: routing loads
no fitter) is `irt.router.fit_irt_router` on the train tasks' rows of every run of the bundled candidates'
results matrix (never a held-out task's row), as evaluate's `irt` row fits it per fold. Its route is the
oracle's rule on predicted resolve probabilities (near-ties to the cheapest); its dial is the lambda of
`P - lambda x predicted cost` (`irt.router.near_tie_scores`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Seed, Share
from router_oracle.table import Pool
from router_oracle.task_input import TaskInput
from router_train.checkpoint_io import read_checkpoint_file
from router_train.irt.router import (
    FittedIrtRouter,
    IrtFit,
    check_fit_pool,
    pool_probabilities,
)
from router_train.scoring.dial import DialCalibration
from router_train.scoring.safe_point import SafePoint

IRT_NAME = "irt"
"""The router's name (`router-train fit irt`, evaluate's row)."""


class IrtCheckpointError(ValueError):
    """An unreadable IRT checkpoint."""


class IrtCheckpoint(FrozenModel):
    """A fitted IRT router: its fit (run abilities, text regressor and feature space), the pool it
    routes and what it was fitted on (`split`, `eval_fraction`, `split_seed`, `seed`: `fit` flags)."""

    kind: Literal["router-train-irt"] = "router-train-irt"
    """Marks the file as a saved IRT router."""
    version: Literal[1] = 1
    """Checkpoint format version."""
    pool: Pool
    """The table's pool (each model's runs: a model's resolve probability is the mean of its runs')."""
    table: str
    """The oracle table fitted on: its path as given, or `router_frontier_rl/data/oracle_table.json`."""
    table_sha256: str
    """Hex sha256 of that table file's bytes."""
    results: str
    """The results matrix the abilities were fitted on (a candidates file; `bundled`)."""
    split: Literal["all", "train"]
    """The tasks it is fitted on: every task of the table, or the env's train split."""
    eval_fraction: Share
    """With `split` train: the env split's held-out share, in (0, 1)."""
    split_seed: Seed
    """With `split` train: the env split's seed (0 to 2**32 - 1)."""
    seed: Seed
    """Seed of the fit (inner-CV folds, MIRT start)."""
    train_task_ids: list[str]
    """Every task it learned from (sorted instance ids); only their rows of the results matrix were read."""
    fit: IrtFit
    """The fitted router (everything `FittedIrtRouter.from_fit` needs to route a new task from its text)."""
    calibration: DialCalibration
    """The cost dial's table on the train tasks (`scoring.dial.calibrate` of the out-of-fold near-tie
    scores, priced with the predicted model costs), columns in `route_order`."""
    safe_point: SafePoint | None = None
    """Its default operating point, chosen on the train tasks by inner cross-validation
    (`scoring.safe_point`): what `route` routes at without `--budget`, `--dial` or `--no-safe-point`.
    None in files written before it existed (the native route)."""

    @model_validator(mode="after")
    def _fits_the_pool(self) -> IrtCheckpoint:
        # The fit's own numbers and shapes are `IrtFit`'s check; here, what it routes.
        check_fit_pool(self.fit, self.pool)
        if sorted(self.calibration.model_ids) != sorted(self.pool.ids):
            raise ValueError(
                f"calibration.model_ids must be the pool's models {self.pool.ids}, "
                f"got {self.calibration.model_ids}"
            )
        return self


def route_order(fit: IrtFit, pool: Pool) -> list[str]:
    """The pool's ids by ascending predicted cost (ties: id): the score columns, so that argmax's first of
    tied near-tie scores is the cheapest model, as the oracle's rule."""
    costs = FittedIrtRouter.from_fit(fit).pool_costs(pool)
    return [m for _, m in sorted(zip(costs.tolist(), pool.ids, strict=True))]


def ordered_pool(pool: Pool, ids: Sequence[str]) -> Pool:
    """`pool` with its models in the order of `ids`."""
    by_id = {m.id: m for m in pool.models}
    return pool.model_copy(update={"models": [by_id[i] for i in ids]})


def predicted_probabilities(router: FittedIrtRouter, tasks: Sequence[TaskInput], pool: Pool) -> np.ndarray:
    """(tasks, pool models in `pool` order) predicted resolve probabilities from each task's text."""
    return pool_probabilities(router.run_probabilities(tasks), router.fit.run_ids, pool)


def read_irt(path: str | os.PathLike[str]) -> IrtCheckpoint:
    """Read and validate a saved IRT router; errors name the file."""
    return read_checkpoint_file(path, IrtCheckpoint, "IRT checkpoint", IrtCheckpointError)
