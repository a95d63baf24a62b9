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

from router_oracle.table import Pool, TaskRecord
from router_train.irt.router import (
    FittedIrtRouter,
    IrtConfig,
    _gap,  # the tolerance's criterion, as `fit_irt_router` scores it (one definition)
    near_tie_routes,
    pool_probabilities,
)


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
