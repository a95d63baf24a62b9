"""IRT inputs of the local router (`FeatureConfig.irt`): each pool model's predicted resolve probability
from the item-response-theory router (`router_train.irt`), fitted on the train tasks only.

The policy is a linear softmax over pool models, so each model's prediction enters as one feature column
(the policy's weight matrix can map column m to model m's logit, or weigh models against each other). The
column is the standardised logit of the prediction: probabilities near 1/2 differ by a few hundredths,
which weight decay would keep from moving a logit. The predicted cost is each model's train-task mean:
the same for every task, so it is a constant the bias already holds, and is not a column.

Train tasks get their out-of-fold prediction (the IRT router's inner folds: the text regressor never saw
the task); every other task gets the fitted regressor's prediction from its text. The in-sample
prediction of a train task would be far better than any unseen task's (the ridge fits its own targets),
and a policy trained on it would trust the column more than it deserves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import model_validator
from scipy.special import expit, logit

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Finite
from router_oracle.results_matrix import bundled_results_for
from router_oracle.table import Pool, PoolModel, TaskRecord
from router_oracle.task_input import TaskInput
from router_train.irt.router import (
    FittedIrtRouter,
    IrtConfig,
    IrtFit,
    Positive,
    check_covered,
    check_enough_tasks,
    check_fit_pool,
    fit_irt_router,
    pool_probabilities,
)

IRT_FEATURE_CONFIG = IrtConfig(dims=(1,), alphas=(3.0,), temperatures=(1.0,), tolerances=(0.0,))
"""The IRT fit behind the features: k = 1 and ridge alpha 3 (the settings the IRT router's inner CV
picks most on the default pool) without its grid search, since the local trainer fits it once per
training (the prior shift's inner trainings included). The temperature and tie tolerance do not matter
here: a temperature is undone by the standardisation, the tolerance only routes."""

CLIP = 1e-6
"""Predicted probabilities are clipped to [CLIP, 1 - CLIP] before the logit."""


class IrtFeatureState(FrozenModel):
    """What the IRT features learned from the train split (plain data: a checkpoint carries it)."""

    fit: IrtFit
    """The IRT fit on the train tasks (every run's ability, the text regressor)."""
    pool: Pool
    """The pool models and their runs (a model's prediction is the mean over its runs)."""
    train_logits: dict[str, list[Finite]]
    """Train task -> each pool model's out-of-fold predicted logit (before standardising)."""
    mean: list[Finite]
    """Per pool model: the mean of `train_logits` over the train tasks."""
    scale: list[Positive]
    """Per pool model: their standard deviation (1 where it is 0)."""

    @model_validator(mode="after")
    def _fits_the_pool(self) -> IrtFeatureState:
        check_fit_pool(self.fit, self.pool)
        k = len(self.pool.models)
        rows = [self.mean, self.scale, *self.train_logits.values()]
        if any(len(v) != k for v in rows):
            raise ValueError(f"mean, scale and each train_logits entry need one number per pool model ({k})")
        return self


def pool_of(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> Pool:
    """The pool `pool_ids` with each model's runs as the table's records name them (the IRT fit reads those
    runs' columns of the results matrix)."""
    first = tasks[0]
    unknown = [m for m in pool_ids if m not in first.per_model]
    if unknown:
        raise ValueError(
            f"pool model {unknown[0]!r} is not a model of the table ({', '.join(first.per_model)})"
        )
    return Pool(
        name="irt-inputs",
        models=[PoolModel(id=m, name=m, runs=[r.run for r in first.per_model[m].runs]) for m in pool_ids],
    )


def predicted_logits(p: np.ndarray) -> np.ndarray:
    """The logit of predicted probabilities, clipped to [CLIP, 1 - CLIP] first."""
    out: np.ndarray = logit(np.clip(p, CLIP, 1 - CLIP))
    return out


def check_irt_inputs(pool: Pool, tasks: Sequence[TaskRecord], n_train: int, where: str) -> None:
    """Before training with IRT inputs: the bundled results matrix covers the table's pool runs and
    `tasks` (as `fit irt` requires), and `n_train` train tasks are enough for the fit (`where` names the
    file and flags that gave them)."""
    check_covered(bundled_results_for(pool)[1], pool, tasks)
    check_enough_tasks(n_train, IRT_FEATURE_CONFIG, where)


def fit_irt_features(tasks: Sequence[TaskRecord], pool_ids: Sequence[str], seed: int = 0) -> IrtFeatureState:
    """Fit the IRT router on `tasks` (distinct train tasks) for the pool `pool_ids` (candidate models)."""
    pool = pool_of(tasks, pool_ids)
    _, matrix = bundled_results_for(pool)
    router = fit_irt_router(tasks, matrix, pool, config=IRT_FEATURE_CONFIG, seed=seed)
    order = sorted(tasks, key=lambda t: t.instance_id)  # `train_p` rows are in instance-id order
    z = predicted_logits(pool_probabilities(router.train_p, router.fit.run_ids, pool))
    mean = z.mean(axis=0)
    sd = z.std(axis=0)
    return IrtFeatureState(
        fit=router.fit,
        pool=pool,
        train_logits={t.instance_id: [float(v) for v in row] for t, row in zip(order, z, strict=True)},
        mean=[float(v) for v in mean],
        scale=[float(v) if v > 0 and math.isfinite(v) else 1.0 for v in sd],
    )


def irt_columns(state: IrtFeatureState, tasks: Sequence[TaskInput]) -> np.ndarray:
    """(tasks, pool models) standardised predicted logits: out-of-fold for train tasks, from text else."""
    result: np.ndarray = (_logits(state, tasks) - np.asarray(state.mean)) / np.asarray(state.scale)
    return result


def irt_probabilities(
    state: IrtFeatureState, tasks: Sequence[TaskRecord], pool_ids: Sequence[str]
) -> np.ndarray:
    """(tasks, `pool_ids`) the predicted resolve probabilities behind the columns (clipped to
    [CLIP, 1 - CLIP]), columns in `pool_ids` order: what `router-train evaluate` reports the calibration of
    for a router on IRT inputs."""
    column = {m: j for j, m in enumerate(state.pool.ids)}
    p: np.ndarray = expit(_logits(state, tasks)[:, [column[m] for m in pool_ids]])
    return p


def _logits(state: IrtFeatureState, tasks: Sequence[TaskInput]) -> np.ndarray:
    """(tasks, pool models) predicted logits, before standardising: `irt_columns`' source."""
    k = len(state.pool.models)
    out = np.zeros((len(tasks), k))
    new = [i for i, t in enumerate(tasks) if t.instance_id not in state.train_logits]
    for i, t in enumerate(tasks):
        if t.instance_id in state.train_logits:
            out[i] = state.train_logits[t.instance_id]
    if new:
        router = FittedIrtRouter.from_fit(state.fit)
        p = router.run_probabilities([tasks[i] for i in new])
        out[new] = predicted_logits(pool_probabilities(p, state.fit.run_ids, state.pool))
    return out
