"""The IRT router as one of evaluate's fitters (`(train, test, seed) -> [Decisions]`, with `fit_scored` for
the cost-dial curves), so `router_train.evaluate.evaluate(table, info, config, fitters=[IrtFitter(...)])`
scores it in the same folds, against the same baselines, as every other router."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from router_oracle.results_matrix import ResultsMatrix
from router_oracle.table import Pool, TaskRecord
from router_train.irt.router import (
    FittedIrtRouter,
    IrtConfig,
    fit_irt_router,
    near_tie_scores,
    pool_probabilities,
)
from router_train.scoring.decisions import Decisions, from_labels
from router_train.scoring.dial import RouterScores

IRT_ROUTER_NAME = "irt"
"""Row name of the IRT router."""


@dataclass
class IrtFitter:
    """Fits the IRT router per partition on its train tasks' rows of the whole results matrix."""

    matrix: ResultsMatrix
    """Every run's outcomes (only the partition's train rows are read)."""
    pool: Pool
    """The table's pool (each model's runs)."""
    config: IrtConfig = field(default_factory=IrtConfig)
    """Grids searched by inner CV."""
    name: str = IRT_ROUTER_NAME
    """Row name."""
    embeddings: Mapping[str, np.ndarray] | None = None
    """Optional text-embedding block (instance id -> vector)."""
    task_features: str | None = None
    """`--task-features`: a pre-pass's per-task features the task regressor reads beside the text."""
    fits: list[FittedIrtRouter] = field(default_factory=list)
    """Every fit made, in order (for the benchmark's calibration and chosen settings; not forked jobs)."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return self.fit_scored(train, test, seed)[0]

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        """Decisions on `test`, and as the dial's scores the predicted pool resolve probabilities
        (out-of-fold on the train tasks) capped at the near-tie level (`near_tie_scores`), as the saved
        router's: `score - dial x cost` is the CARROT rule, dial 0 the oracle's rule; the uncapped test
        probabilities go with them (calibration)."""
        router = fit_irt_router(
            train,
            self.matrix,
            self.pool,
            config=self.config,
            seed=seed,
            embeddings=self.embeddings,
            task_features=self.task_features,
        )
        self.fits.append(router)
        return scored_decisions(router, self.pool, train, test, self.name)


def scored_decisions(
    router: FittedIrtRouter, pool: Pool, train: Sequence[TaskRecord], test: Sequence[TaskRecord], name: str
) -> tuple[list[Decisions], list[RouterScores]]:
    """A fitted router's decisions on `test` among `pool` (its tolerance) and its dial's scores (see
    `IrtFitter.fit_scored`); `train` are the tasks it was fitted on, in the partition's order."""
    routes = router.route(test, pool)
    picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(test, routes, strict=True)}
    train_sorted = sorted(train, key=lambda t: t.instance_id)
    order = {t.instance_id: i for i, t in enumerate(train_sorted)}
    train_p = pool_probabilities(router.train_p, router.fit.run_ids, pool)
    train_p = train_p[[order[t.instance_id] for t in train]]
    test_p = pool_probabilities(router.run_probabilities(test), router.fit.run_ids, pool)
    tol = router.fit.tolerance
    scores = RouterScores(
        name,
        list(pool.ids),
        near_tie_scores(train_p, tol),
        near_tie_scores(test_p, tol),
        probabilities=test_p,
        tolerance=tol,
    )
    return [from_labels(name, "local", picks)], [scores]
