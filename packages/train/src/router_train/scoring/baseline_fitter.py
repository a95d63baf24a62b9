"""Evaluate's learned baselines as one fitter (`scoring.fitter.Fitter`): the `baseline` kind's entry of
`fitting` makes it for `router-train evaluate`, and the balanced TF-IDF classifier alone for
`router-train evaluate-anypool`'s fixed-pool references."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from router_oracle.table import TaskRecord
from router_train.scoring import baselines
from router_train.scoring.baseline_scores import fitted_baselines_scored
from router_train.scoring.decisions import Decisions
from router_train.scoring.dial import RouterScores


@dataclass(frozen=True)
class BaselineFitter:
    """The learned baselines (cheapest on train, TF-IDF logistic regressions, TF-IDF kNN)."""

    pool: list[str]
    """Pool model ids."""
    task_features: str | None = None
    """`--task-features`: a file or bundled name whose columns the logistic regressions read beside the
    TF-IDF (standardised on each fit's train tasks); None: text only."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return baselines.fitted_baselines(train, test, self.pool, seed, task_features=self.task_features)

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        """The same decisions, and the text classifiers' per-model scores (their cost dial)."""
        return fitted_baselines_scored(train, test, self.pool, seed, self.task_features)


@dataclass(frozen=True)
class BalancedLogregFitter:
    """The balanced TF-IDF logistic regression alone (`baselines.BALANCED_LOGREG_NAME`), decisions only:
    `evaluate-anypool`'s fixed-pool baseline (it learns the pool's models as its train tasks' oracle
    labels)."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return [baselines.tfidf_logreg(train, test, seed, balanced=True)]
