"""Per-model scores of the learned baselines, for their cost dial (`scoring.dial`): evaluate's curves and a
saved baseline routing at serving time (`route --budget`) read the same ones.

- TF-IDF logistic regressions: log-probabilities, the log-softmax of the fit's decision values (what
  scikit-learn's `predict_log_proba` gives); a model never the oracle label on the train tasks has none
  (-inf, floored by the dial so a large enough dial still reaches it).
- TF-IDF kNN: log of the add-one smoothed vote shares, log((votes + 1) / (voters + models)); on the train
  tasks each task's neighbours exclude itself (otherwise it votes for its own label and the dial's
  calibration there would see a perfect router).
The decisions are those of `baselines.fitted_baselines`, from the same fits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp

from router_oracle.table import TaskRecord
from router_train.scoring.baselines import (
    BALANCED_LOGREG_NAME,
    LOGREG_NAME,
    KnnFit,
    LogregFit,
    TextFits,
    fitted_baselines,
)
from router_train.scoring.decisions import Decisions
from router_train.scoring.dial import RouterScores


def in_pool(values: np.ndarray, classes: Sequence[str], pool: Sequence[str], fill: float) -> np.ndarray:
    """`values` (rows, classes) as (rows, pool models); a pool model that is no class gets `fill`."""
    out = np.full((values.shape[0], len(pool)), fill)
    out[:, [list(pool).index(c) for c in classes]] = values
    return out


def log_proba(fit: LogregFit, x: object, pool: Sequence[str]) -> np.ndarray:
    """A logistic regression's log-probabilities as (rows, pool models): its dial scores."""
    d = fit.scores(x)  # decision values; two classes as [0, s], so the log-softmax is exact there too
    return in_pool(d - logsumexp(d, axis=1, keepdims=True), fit.classes, pool, -np.inf)


def smoothed_votes(fit: KnnFit, x: object, pool: Sequence[str], *, leave_out: bool = False) -> np.ndarray:
    """kNN's log smoothed vote shares as (rows, pool models): its dial scores (`leave_out`: `x` are the
    train rows, none votes for itself)."""
    votes = in_pool(fit.scores(x, leave_out=leave_out), fit.classes, pool, 0.0)
    out: np.ndarray = np.log((votes + 1.0) / (fit.voters(leave_out) + len(pool)))
    return out


def fitted_baselines_scored(
    train: Sequence[TaskRecord],
    tasks: Sequence[TaskRecord],
    pool: Sequence[str],
    seed: int,
    task_features: str | None = None,
) -> tuple[list[Decisions], list[RouterScores]]:
    """`baselines.fitted_baselines` and the scores of the three text classifiers on train and `tasks`
    (`task_features`: the logistic regressions' extra inputs, `baselines.TfidfFeatures`)."""
    fits = TextFits.fit(train, seed, task_features)
    decisions = fitted_baselines(train, tasks, pool, seed, fits=fits)
    x_train, x_test = fits.features.x_train, fits.features.transform(tasks)
    scores = [
        RouterScores(name, list(pool), log_proba(fit, x_train, pool), log_proba(fit, x_test, pool))
        for name, fit in ((LOGREG_NAME, fits.logreg), (BALANCED_LOGREG_NAME, fits.logreg_balanced))
    ]
    knn = next(d.name for d in decisions if d.name.startswith("tfidf-knn"))
    scores.append(
        RouterScores(
            knn,
            list(pool),
            smoothed_votes(fits.knn, fits.features.x_text_train, pool, leave_out=True),
            smoothed_votes(fits.knn, fits.features.transform_text(tasks), pool),
        )
    )
    return decisions, scores
