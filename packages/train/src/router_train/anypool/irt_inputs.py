"""IRT inputs of the any-pool router (`FeatureConfig.irt` in `AnyPoolTrainConfig.features`): per task and
pool model, the IRT router's predicted resolve probability, as model-feature columns beside the
capability-summary entries (`IRT_MODEL_FEATURES`).

The IRT fit (`irt.router.fit_irt_router` with the local trainer's `IRT_FEATURE_CONFIG`) reads the train
tasks' rows of every run of the candidates table and nothing else. A model the router never trains with
(a held-out model) is one of those runs: its ability comes from its results on the train tasks only, the
cold start, the same rows the router sees through the pool's capability summary. Train tasks get their
out-of-fold prediction (the text regressor never saw the task), every other task the fitted regressor's
prediction from its text: the reason is the fixed-pool inputs' (`local.irt_features`).

The columns, per (task, pool model):
- `irt_logit`: the logit of the predicted probability, standardised by one mean and scale over every
  train task and candidate model (not per model: which model is stronger is part of the signal);
- `irt_gap`: the predicted probability minus the pool's best for the task (0 for the predicted best):
  the oracle's rule on predicted rates, where the logit's differences stay equal on easy and hard tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from router_oracle.derive import CandidateIndex
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Finite
from router_oracle.results_matrix import matrix_of
from router_oracle.table import Pool
from router_oracle.task_input import TaskInput
from router_train.anypool.config import AnyPoolError
from router_train.irt.router import (
    FittedIrtRouter,
    IrtFit,
    Positive,
    check_fit_pool,
    fit_irt_router,
    pool_probabilities,
)
from router_train.local.config import FeatureConfig
from router_train.local.irt_features import IRT_FEATURE_CONFIG, predicted_logits

IRT_MODEL_FEATURES: tuple[str, ...] = ("irt_logit", "irt_gap")
"""The model-feature columns the IRT inputs add, after `model_features.MODEL_FEATURES` (module docstring)."""

Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A probability: 0 to 1."""


class AnyPoolIrtState(FrozenModel):
    """What the any-pool IRT inputs learned from the train tasks (plain data: a checkpoint carries it)."""

    fit: IrtFit
    """The IRT fit on the train tasks' rows of every run (abilities, text regressor)."""
    pool: Pool
    """Every candidate model and its runs (a model's prediction is the mean over its runs)."""
    train_probabilities: dict[str, list[Probability]]
    """Train task -> each candidate model's out-of-fold predicted resolve probability (`pool` order)."""
    logit_mean: Finite
    """Mean of the predicted logits over the train tasks and candidate models."""
    logit_scale: Positive
    """Their standard deviation (1 where it is 0)."""

    @model_validator(mode="after")
    def _fits_the_pool(self) -> AnyPoolIrtState:
        check_fit_pool(self.fit, self.pool)
        k = len(self.pool.models)
        if any(len(v) != k for v in self.train_probabilities.values()):
            raise ValueError(f"each train_probabilities entry must have one number per pool model ({k})")
        return self


def task_side(features: FeatureConfig) -> FeatureConfig:
    """The task features of an any-pool policy: its IRT inputs are model columns, not task columns."""
    return features.model_copy(update={"irt": False}) if features.irt else features


def fit_anypool_irt(index: CandidateIndex, train_task_ids: Sequence[str], seed: int = 0) -> AnyPoolIrtState:
    """Fit the IRT inputs on the train tasks' rows of every run of `index`'s candidates table."""
    ids = sorted(set(train_task_ids))
    if not ids:
        raise AnyPoolError("the IRT inputs need train tasks")
    matrix = matrix_of(index.candidates, origin=index.label)
    # The fit's tie tolerance is chosen on some pool's rows and routes nothing here: one model's are enough.
    first = index.pool(index.model_ids[:1])
    router = fit_irt_router(index.records(first, ids), matrix, first, config=IRT_FEATURE_CONFIG, seed=seed)
    everyone = index.pool(index.model_ids, name="candidates")
    p = pool_probabilities(router.train_p, router.fit.run_ids, everyone)  # rows in instance-id order
    z = predicted_logits(p)
    sd = float(z.std())
    return AnyPoolIrtState(
        fit=router.fit,
        pool=everyone,
        train_probabilities={t: [float(v) for v in row] for t, row in zip(ids, p, strict=True)},
        logit_mean=float(z.mean()),
        logit_scale=sd if sd > 0 and math.isfinite(sd) else 1.0,
    )


def check_train_tasks(state: AnyPoolIrtState, train_task_ids: Sequence[str]) -> None:
    """The IRT inputs were fitted on exactly these train tasks (one fit per partition is shared)."""
    if set(state.train_probabilities) != set(train_task_ids):
        raise AnyPoolError("the IRT inputs were fitted on other train tasks than the router's")


def model_probabilities(state: AnyPoolIrtState, tasks: Sequence[TaskInput]) -> np.ndarray:
    """(tasks, candidate models in `state.pool` order): out-of-fold for train tasks, from the text else."""
    out = np.zeros((len(tasks), len(state.pool.models)))
    new = [i for i, t in enumerate(tasks) if t.instance_id not in state.train_probabilities]
    for i, t in enumerate(tasks):
        if t.instance_id in state.train_probabilities:
            out[i] = state.train_probabilities[t.instance_id]
    if new:
        p = FittedIrtRouter.from_fit(state.fit).run_probabilities([tasks[i] for i in new])
        out[new] = pool_probabilities(p, state.fit.run_ids, state.pool)
    return out


def pool_columns(state: AnyPoolIrtState, pool_ids: Sequence[str]) -> np.ndarray:
    """Column of each pool model in `model_probabilities`; a model the fit lacks is an `AnyPoolError`."""
    col = {m: j for j, m in enumerate(state.pool.ids)}
    missing = [m for m in pool_ids if m not in col]
    if missing:
        raise AnyPoolError(f"the IRT inputs have no runs of model {missing[0]!r} (not a candidate fitted)")
    return np.asarray([col[m] for m in pool_ids], dtype=np.int64)


def irt_model_columns(state: AnyPoolIrtState, probabilities: np.ndarray) -> np.ndarray:
    """(pool models, IRT_MODEL_FEATURES) for one task, from its pool models' predicted probabilities."""
    z = (predicted_logits(probabilities) - state.logit_mean) / state.logit_scale
    out: np.ndarray = np.stack([z, probabilities - probabilities.max()], axis=1)
    return out
