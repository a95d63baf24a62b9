"""Per-model scores of the learned baselines, for their cost dial (`dial.py`).

- TF-IDF logistic regressions: log-probabilities (`predict_log_proba`); a model never the oracle label
  on the train tasks has none (-inf, floored by the dial so a large enough dial still reaches it).
- TF-IDF kNN: log of the add-one smoothed vote shares, log((votes + 1) / (k + models)); on the train
  tasks each task's neighbours exclude itself (otherwise it votes for its own label and the dial's
  calibration there would see a perfect router).
The decisions are those of `baselines.fitted_baselines`, from the same fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from router_oracle.table import TaskRecord
from router_train.evaluate.baselines import TfidfFeatures, fit_logreg, fitted_baselines, knn_votes
from router_train.evaluate.decisions import Decisions
from router_train.evaluate.dial import RouterScores


def _log_proba(clf: Any, f: TfidfFeatures, tasks: Sequence[TaskRecord], pool: Sequence[str]) -> np.ndarray:
    out = np.full((len(tasks), len(pool)), -np.inf)
    if clf is None:  # one class in train: certain of it
        out[:, list(pool).index(f.y_train[0])] = 0.0
        return out
    with np.errstate(divide="ignore"):
        lp = clf.predict_log_proba(f.transform(tasks))
    for j, label in enumerate(clf.classes_):
        out[:, list(pool).index(str(label))] = lp[:, j]
    return out


def fitted_baselines_scored(
    train: Sequence[TaskRecord], tasks: Sequence[TaskRecord], pool: Sequence[str], seed: int
) -> tuple[list[Decisions], list[RouterScores]]:
    """`baselines.fitted_baselines` and the scores of the three text classifiers on train and `tasks`."""
    f = TfidfFeatures(train)
    clfs = (fit_logreg(f, seed), fit_logreg(f, seed, balanced=True))
    decisions = fitted_baselines(train, tasks, pool, seed, features=f, classifiers=clfs)
    by_name = {d.name: d for d in decisions}
    scores = [
        RouterScores(name, list(pool), _log_proba(clf, f, train, pool), _log_proba(clf, f, tasks, pool))
        for name, clf in (("tfidf-logreg", clfs[0]), ("tfidf-logreg(balanced)", clfs[1]))
    ]
    knn = next(n for n in by_name if n.startswith("tfidf-knn"))
    test_votes, k = knn_votes(f, tasks, pool)
    train_votes, _ = knn_votes(f, train, pool, leave_out=True)

    def smoothed(votes: np.ndarray, k: int) -> np.ndarray:
        out: np.ndarray = np.log((votes + 1.0) / (k + len(pool)))
        return out

    scores.append(RouterScores(knn, list(pool), smoothed(train_votes, k - 1), smoothed(test_votes, k)))
    return decisions, scores
