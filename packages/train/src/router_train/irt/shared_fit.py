"""One IRT fit of a task partition, shared by many pools (`router-train evaluate-anypool`'s `irt` row).

Everything `fit_irt_router` learns but the near-tie tolerance is independent of the pool's models: the
run abilities and the text regressor are fitted on the train tasks' rows of every run; k, alpha and the
temperature are chosen by the held-out log-loss over every run. (Its inner folds are stratified by the
oracle labels of the pool it is called with: the shared fit's are one pool's, a pool's own fit's its own,
so the two can choose differently where settings are near-equal.) Only the tolerance is chosen per pool,
by the inner folds' vs-mix gap of that pool's routes on the train tasks. So a partition is fitted once,
and each pool gets that fit with the tolerance `fit_irt_router`'s rule chooses for it (`for_pool`;
`test_train_irt_shared_fit.py` holds the choice to the rule's), at the cost of one fit instead of one per
pool.

A pool's models may include models no router trained with (a held-out provider): their runs' rows on
the train tasks are in the fit like every other run's, the cold-start case (their abilities come from
their results on the train tasks only, as the any-pool router sees them through its capability summary).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import ResultsMatrix
from router_oracle.table import Pool, TaskRecord
from router_train.irt.fitter import IRT_ROUTER_NAME, scored_decisions
from router_train.irt.router import (
    FittedIrtRouter,
    IrtConfig,
    _gap,  # the tolerance's criterion, as `fit_irt_router` scores it (one definition)
    fit_irt_router,
    near_tie_routes,
    pool_probabilities,
)
from router_train.scoring.decisions import EvaluateError
from router_train.scoring.dial import RouterScores


def pool_tolerance(
    router: FittedIrtRouter, train: Sequence[TaskRecord], pool: Pool, config: IrtConfig | None = None
) -> float:
    """The near-tie tolerance `fit_irt_router` would choose for `pool` on the train tasks `router` was
    fitted on (`train`: those tasks' rows of `pool`): the best vs-mix gap of the out-of-fold routes, ties to
    the smaller tolerance."""
    cfg = config or IrtConfig()
    ordered = sorted(train, key=lambda t: t.instance_id)  # `train_p` rows are in instance-id order
    if len(ordered) != router.train_p.shape[0]:
        raise ValueError(
            f"the IRT fit has {router.train_p.shape[0]} train tasks' out-of-fold scores, "
            f"got {len(ordered)} tasks"
        )
    pool_p = pool_probabilities(router.train_p, router.fit.run_ids, pool)
    costs = router.pool_costs(pool)
    gaps = {tol: _gap(ordered, pool.ids, near_tie_routes(pool_p, costs, tol)) for tol in cfg.tolerances}
    return max(cfg.tolerances, key=lambda t: (gaps[t], -t))


def for_pool(
    router: FittedIrtRouter, train: Sequence[TaskRecord], pool: Pool, config: IrtConfig | None = None
) -> FittedIrtRouter:
    """The shared fit `router` with `pool`'s own near-tie tolerance (`pool_tolerance`)."""
    tol = pool_tolerance(router, train, pool, config)
    return dataclasses.replace(router, fit=router.fit.model_copy(update={"tolerance": tol}))


def fit_partition(
    index: CandidateIndex,
    matrix: ResultsMatrix,
    train_ids: Sequence[str],
    test_ids: Sequence[str],
    pools: Sequence[Sequence[str]],
    *,
    config: IrtConfig,
    seed: int,
    label: str,
) -> list[tuple[list[str], RouterScores]]:
    """One IRT fit on the train tasks (`train_ids`: every run's rows), routing each of `pools` on the test
    tasks with its own tolerance (`for_pool`): per pool, its route of each test task (`test_ids` order) and
    its per-model scores (its dial: lambda, `irt.fitter.scored_decisions`). `label` names the partition in
    messages."""
    if not pools:
        return []
    # The fit does not depend on the pool but for its tolerance, which `for_pool` chooses for each pool.
    first = index.pool(pools[0])
    shared = fit_irt_router(index.records(first, train_ids), matrix, first, config=config, seed=seed)
    out: list[tuple[list[str], RouterScores]] = []
    for ids in pools:
        pool = index.pool(ids)
        train, test = index.records(pool, train_ids), index.records(pool, test_ids)
        router = for_pool(shared, train, pool, config)
        (decisions,), (scores,) = scored_decisions(router, pool, train, test, IRT_ROUTER_NAME)
        if set(decisions.choices) != set(test_ids):
            raise EvaluateError(f"{IRT_ROUTER_NAME} did not route exactly the test tasks of {label}")
        # One single-choice decision per task: its one label.
        out.append(([next(iter(decisions.choices[tid])) for tid in test_ids], scores))
    return out
