"""Calibration of a predicted resolve probability: the Brier score and the expected calibration error
(ECE), per pool model, of a router that predicts each model's chance of resolving a task (the IRT router).

The observed outcome of a (task, model) is the model's measured resolve rate on the task (0 or 1 for a
single run, a share for a model with several runs). ECE uses `ECE_BINS` equal-width bins of the
predicted probability on [0, 1] (a probability of exactly 1 falls in the last bin): the bin-size weighted
mean of |mean predicted - mean observed| over the non-empty bins.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import TaskRecord
from router_train.scoring.dial import RouterScores, outcome_matrices

ECE_BINS = 10
"""Equal-width probability bins of the expected calibration error."""


def brier_score(p: np.ndarray, y: np.ndarray) -> float:
    """Mean squared difference of predicted probabilities `p` and observed outcomes `y` (same shape)."""
    return float(np.mean((np.asarray(p, dtype=float) - np.asarray(y, dtype=float)) ** 2))


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = ECE_BINS) -> float:
    """Bin-weighted |mean predicted - mean observed| over `bins` equal-width bins of `p` on [0, 1]."""
    p = np.asarray(p, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in np.unique(which):
        inside = which == b
        total += abs(float(p[inside].mean() - y[inside].mean())) * float(inside.mean())
    return total


class ModelCalibration(FrozenModel):
    """How well a router's predicted resolve probability of one pool model matched its outcomes."""

    model: str
    """Pool model id."""
    n: int
    """Predictions scored (held-out tasks; under cross-validation, once per fold seed)."""
    mean_predicted: float
    """Mean predicted resolve probability."""
    observed: float
    """Mean observed resolve rate on the same tasks."""
    brier: float
    """Brier score (lower is better; 0.25 is always predicting 1/2 on 0/1 outcomes)."""
    ece: float
    """Expected calibration error, `ECE_BINS` equal-width bins."""


class RouterCalibration(FrozenModel):
    """A router's calibration per pool model, on the tasks it routed."""

    router: str
    """Router row name."""
    models: list[ModelCalibration]
    """One per pool model, in pool order."""


def router_calibration(
    name: str, model_ids: Sequence[str], p: np.ndarray, y: np.ndarray
) -> RouterCalibration:
    """The calibration of predictions `p` against outcomes `y`, both (tasks, models) in `model_ids` order."""
    if p.shape != y.shape or p.shape[1:] != (len(model_ids),):
        raise ValueError(f"predictions {p.shape} and outcomes {y.shape} must be (tasks, {len(model_ids)})")
    return RouterCalibration(
        router=name,
        models=[
            ModelCalibration(
                model=m,
                n=int(p.shape[0]),
                mean_predicted=rounded(float(p[:, j].mean())),
                observed=rounded(float(y[:, j].mean())),
                brier=rounded(brier_score(p[:, j], y[:, j])),
                ece=rounded(expected_calibration_error(p[:, j], y[:, j])),
            )
            for j, m in enumerate(model_ids)
        ],
    )


def held_out_calibration(
    tests: Sequence[Sequence[TaskRecord]], scores: Sequence[Sequence[RouterScores]]
) -> list[RouterCalibration]:
    """Per router that predicts probabilities (`RouterScores.probabilities`), its calibration pooled over
    every partition: `tests[i]` are partition i's routed tasks, `scores[i]` its routers' scores there."""
    pooled: dict[str, tuple[list[str], list[np.ndarray], list[np.ndarray]]] = {}
    for tasks, part in zip(tests, scores, strict=True):
        for s in part:
            if s.probabilities is None:
                continue
            ids, ps, ys = pooled.setdefault(s.name, (list(s.model_ids), [], []))
            if ids != s.model_ids:
                raise ValueError(f"{s.name}: scores over {s.model_ids} in one partition, {ids} in another")
            ps.append(s.probabilities)
            ys.append(outcome_matrices(tasks, ids)[0])
    return [router_calibration(n, ids, np.vstack(ps), np.vstack(ys)) for n, (ids, ps, ys) in pooled.items()]
