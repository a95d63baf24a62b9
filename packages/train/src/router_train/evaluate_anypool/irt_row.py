"""The `irt` row of `router-train evaluate-anypool` (`--irt`): the IRT router, fitted once per task partition
and shared by every evaluation pool of it.

The fit (`irt.router.fit_irt_router`, its settings by inner cross-validation) reads the partition's
train tasks' rows of every run of the candidates table, a held-out group's runs included: on train tasks
only, the cold-start case, what the any-pool router itself sees of them through a pool's capability
summary on the train tasks. No test task's row enters it. Each pool is routed on the partition's test
tasks by that fit with the pool's own near-tie tolerance (`irt.shared_fit.for_pool`, `fit_irt_router`'s
rule; the fit's inner folds are stratified by the first pool's oracle labels on the train tasks), and its
dial is lambda (`irt.fitter.scored_decisions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import ResultsMatrix
from router_train.evaluate.design import Partition
from router_train.irt.fitter import IRT_ROUTER_NAME, scored_decisions
from router_train.irt.router import IrtConfig, fit_irt_router
from router_train.irt.shared_fit import for_pool
from router_train.scoring.decisions import EvaluateError
from router_train.scoring.dial import RouterScores

IRT_NAME = IRT_ROUTER_NAME
"""Row name of the IRT router."""

IrtPoolFit = tuple[list[str], RouterScores]
"""The IRT router on one pool in one partition: its route of each test task (partition order) and its
per-model scores (its cost dial)."""


def fit_irt_partition(
    index: CandidateIndex,
    matrix: ResultsMatrix,
    partition: Partition,
    pools: Sequence[Sequence[str]],
    *,
    config: IrtConfig,
    seed: int,
) -> list[IrtPoolFit]:
    """One IRT fit on `partition`'s train tasks (every run's rows), routing each of `pools` on its test
    tasks."""
    if not pools:
        return []
    train_ids = [t.instance_id for t in partition.train]
    test_ids = [t.instance_id for t in partition.test]
    # The fit does not depend on the pool but for its tolerance, which `for_pool` chooses for each pool.
    first = index.pool(pools[0])
    shared = fit_irt_router(index.records(first, train_ids), matrix, first, config=config, seed=seed)
    out: list[IrtPoolFit] = []
    for ids in pools:
        pool = index.pool(ids)
        train, test = index.records(pool, train_ids), index.records(pool, test_ids)
        router = for_pool(shared, train, pool, config)
        (decisions,), (scores,) = scored_decisions(router, pool, train, test, IRT_NAME)
        if set(decisions.choices) != set(test_ids):
            raise EvaluateError(f"{IRT_NAME} did not route exactly the test tasks of {partition.label}")
        # One single-choice decision per task: its one label.
        out.append(([next(iter(decisions.choices[tid])) for tid in test_ids], scores))
    return out
