"""The saved IRT router (`router-train fit irt`, route kind `irt`): it routes as the fitted router does
(the oracle's rule on predicted probabilities, near-ties to the cheapest), its dial is the lambda of
`P - lambda x predicted cost`, and it learns from the train tasks' rows only."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from bash_only import bash_only_table_path

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import select_tasks
from router_oracle.results_matrix import bundled_results_for
from router_oracle.table_check import load_table
from router_train.irt.checkpoint import read_irt
from router_train.irt.router import (
    FittedIrtRouter,
    IrtDataError,
    check_covered,
    near_tie_routes,
    near_tie_scores,
    pool_probabilities,
)
from router_train.route import CheckpointSpec, load_router


def test_near_tie_scores_argmax_is_the_near_tie_rule_with_columns_by_cost() -> None:
    rng = np.random.default_rng(0)
    costs = np.asarray([0.1, 0.3, 0.7, 1.2])  # ascending: the columns of the kind's scores
    for tol in (0.0, 0.05, 0.2):
        p = np.round(rng.uniform(size=(500, 4)), 2)  # rounded: exact ties occur
        picks = np.argmax(near_tie_scores(p, tol), axis=1)
        assert picks.tolist() == near_tie_routes(p, costs, tol).tolist()
    # A model 0.04 below the best but cheaper takes the task at tolerance 0.05, not at 0.
    p = np.asarray([[0.50, 0.54, 0.2, 0.1]])
    assert np.argmax(near_tie_scores(p, 0.05), axis=1).tolist() == [0]
    assert np.argmax(near_tie_scores(p, 0.0), axis=1).tolist() == [1]


@pytest.fixture(scope="module")
def checkpoint(irt_checkpoint: Path) -> Path:
    return irt_checkpoint  # fitted once per test process (train_fixtures)


def test_saved_router_routes_as_the_fitted_router(checkpoint: Path) -> None:
    table = load_table(bash_only_table_path())  # the shared checkpoint's table
    ckpt = read_irt(checkpoint)
    train_ids = {t.instance_id for t in select_tasks(table, "train", 0.2, 0)}
    assert ckpt.train_task_ids == sorted(train_ids)  # fitted on the train split only
    assert ckpt.fit.n_train_tasks == len(train_ids)
    eval_tasks = select_tasks(table, "eval", 0.2, 0)
    expected = FittedIrtRouter.from_fit(ckpt.fit).route(eval_tasks, table.pool)
    router = load_router(CheckpointSpec(checkpoint=checkpoint))
    got = [d.model for d in router.route_many(list(eval_tasks))]
    assert got == expected


def test_dial_is_lambda_on_predicted_probability_minus_predicted_cost(checkpoint: Path) -> None:
    table = load_table(bash_only_table_path())  # the shared checkpoint's table
    ckpt = read_irt(checkpoint)
    tasks = select_tasks(table, "eval", 0.2, 0)
    fitted = FittedIrtRouter.from_fit(ckpt.fit)
    p = pool_probabilities(fitted.run_probabilities(tasks), ckpt.fit.run_ids, table.pool)
    costs = fitted.pool_costs(table.pool)
    router = load_router(CheckpointSpec(checkpoint=checkpoint, dial=0.5, no_safe_point=True))
    assert router.point.costs is not None
    by_id = dict(zip(router.pool, list(router.point.costs), strict=True))
    assert [by_id[m] for m in table.pool.ids] == pytest.approx(costs.tolist(), abs=1e-6)  # stored rounded
    capped = near_tie_scores(p, ckpt.fit.tolerance)
    col = {m: j for j, m in enumerate(table.pool.ids)}
    for d, row in zip(
        router.route_many(list(tasks)),
        capped - 0.5 * np.asarray([by_id[m] for m in table.pool.ids]),
        strict=True,
    ):
        assert d.model is not None and row[col[d.model]] == pytest.approx(row.max(), abs=1e-12)


def test_fit_refuses_a_results_matrix_without_the_pool_or_the_tasks() -> None:
    table = load_table(bundled_table_path())
    matrix = bundled_results_for(table.pool)[1]
    run = table.pool.models[0].runs[0]
    keep = [j for j, r in enumerate(matrix.run_ids) if r != run]
    short = dataclasses.replace(
        matrix,
        run_ids=tuple(matrix.run_ids[j] for j in keep),
        run_models=tuple(matrix.run_models[j] for j in keep),
        resolved=matrix.resolved[:, keep],
        cost=matrix.cost[:, keep],
    )
    with pytest.raises(IrtDataError, match=f"has no run '{run}' of the pool"):
        check_covered(short, table.pool, table.tasks)
    fewer = dataclasses.replace(
        matrix, task_ids=matrix.task_ids[1:], resolved=matrix.resolved[1:], cost=matrix.cost[1:]
    )
    with pytest.raises(IrtDataError, match=f"has no task '{matrix.task_ids[0]}' of the table"):
        check_covered(fewer, table.pool, table.tasks)
