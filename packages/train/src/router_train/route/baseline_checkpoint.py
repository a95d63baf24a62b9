"""Checkpoint of a fitted supervised baseline (`router-train fit`): one JSON document, written atomically,
and what routing reads of it. Its fit (`fitting.baseline_fit.fit_baseline`, above the fitters it runs) is
not imported here: routing loads no fitter.

The fits are evaluate's own objects (`scoring.baselines.CheapestFit / LogregFit / KnnFit`), fitted on
the same train tasks in the same order as `router-train evaluate` fits them, so a saved baseline routes
a task exactly as evaluate's row of the same name does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Seed, Share
from router_oracle.table import TaskRecord
from router_train.checkpoint_io import read_checkpoint_file
from router_train.route.spec import RouteError
from router_train.scoring.baseline_scores import log_proba, smoothed_votes
from router_train.scoring.baselines import (
    BALANCED_LOGREG_NAME,
    CHEAPEST_NAME,
    LOGREG_NAME,
    CheapestFit,
    KnnFit,
    LogregFit,
)
from router_train.scoring.dial import CHECKPOINT_POINTS, DialCalibration, calibrate
from router_train.scoring.safe_point import SafePoint
from router_train.task_features import FeatureScaling

BASELINE_NAMES: tuple[str, ...] = (CHEAPEST_NAME, LOGREG_NAME, BALANCED_LOGREG_NAME, "tfidf-knn")
"""The baselines `router-train fit` saves: evaluate's learned baselines, under their row names."""

BaselineFit = Annotated[CheapestFit | LogregFit | KnnFit, Field(discriminator="method")]


class BaselineCheckpoint(FrozenModel):
    """A fitted baseline router: its fit, the TF-IDF it reads, and what it was fitted on (the `split`,
    `eval_fraction`, `split_seed` and `seed` fields are `router-train fit` flags too)."""

    kind: Literal["router-train-baseline"] = "router-train-baseline"
    """Marks the file as a saved baseline."""
    version: Literal[1, 2] = 2
    """Checkpoint format version (2 added `calibration`; version 1 files are still read, without one)."""
    name: str
    """Evaluate's row name (`cheapest-on-train`, `tfidf-logreg`, `tfidf-logreg(balanced)`,
    `tfidf-knn(k=10)`)."""
    pool_ids: list[str]
    """The table's pool model ids, in pool order."""
    table: str
    """The oracle table fitted on: its path as given, or `router_frontier_rl/data/oracle_table.json` (the
    env's bundled table, when none is given)."""
    table_sha256: str
    """Hex sha256 of that table file's bytes."""
    split: Literal["all", "train"]
    """The tasks it is fitted on: every task of the table, or the env's train split."""
    eval_fraction: Share
    """With `split` train: the env split's held-out share, in (0, 1)."""
    split_seed: Seed
    """With `split` train: the env split's seed (0 to 2**32 - 1)."""
    seed: Seed
    """Seed of the classifier (logistic regression's `random_state`), as evaluate's."""
    train_task_ids: list[str]
    """Every task it learned from (sorted instance ids)."""
    vocabulary: list[str]
    """TF-IDF words, in column order (empty for `cheapest-on-train`)."""
    idf: list[float]
    """Each word's idf."""
    fit: BaselineFit
    """The fitted router."""
    task_features: FeatureScaling | None = None
    """`--task-features`: the columns the logistic regression read beside the TF-IDF and their
    standardisation on the train tasks (routing needs the same columns for every task); None: text only
    (always for `cheapest-on-train` and `tfidf-knn`)."""
    calibration: DialCalibration | None = None
    """The cost dial's table on the train tasks (`scoring.dial.calibrate` of `dial_scores`: dial ->
    expected cost per task and resolved rate), columns the pool's ids sorted: what `router-train route
    --budget` reads. None for `cheapest-on-train` (no scores to dial) and in version 1 files."""
    safe_point: SafePoint | None = None
    """Its default operating point, chosen on the train tasks by inner cross-validation
    (`scoring.safe_point`): what `route` routes at without `--budget`, `--dial` or `--no-safe-point`.
    None for `cheapest-on-train` (it is the fallback itself) and in files written before it existed."""


def dial_scores(
    fit: CheapestFit | LogregFit | KnnFit, x: object, pool: Sequence[str], *, on_train: bool
) -> np.ndarray | None:
    """The fit's scores for the cost dial, as evaluate's curves use them (`scoring.baseline_scores`):
    log-probabilities of a logistic regression, kNN's log smoothed vote shares (`on_train`: `x` are the
    train rows in order, none votes for itself); None for `cheapest-on-train`."""
    if isinstance(fit, LogregFit):
        return log_proba(fit, x, pool)
    if isinstance(fit, KnnFit):
        return smoothed_votes(fit, x, pool, leave_out=on_train)
    return None


def baseline_calibration(
    fit: CheapestFit | LogregFit | KnnFit,
    x_train: object,
    train: Sequence[TaskRecord],
    pool_ids: Sequence[str],
) -> DialCalibration | None:
    """The dial table of `fit` on its (instance-id ordered) train tasks, columns the sorted pool ids."""
    pool = sorted(pool_ids)
    scores = dial_scores(fit, x_train, pool, on_train=True)
    return None if scores is None else calibrate(scores, train, pool, max_points=CHECKPOINT_POINTS)


def read_baseline(path: str | os.PathLike[str]) -> BaselineCheckpoint:
    """Read and validate a saved baseline; errors name the file."""
    return read_checkpoint_file(path, BaselineCheckpoint, "baseline checkpoint", RouteError)
