"""The IRT router (`router_train.irt.router`, `.fitter`): a routed task's own outcomes enter nothing (fold
spy), training outcomes do, the near-tie rule, and the evaluate fitter's contract."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from router_frontier_rl import bundled_table_path
from router_oracle.results_matrix import ResultsMatrix, bundled_results_for
from router_oracle.table import OracleTable
from router_oracle.table_check import load_table
from router_train.irt.fitter import IrtFitter
from router_train.irt.router import (
    FittedIrtRouter,
    IrtConfig,
    IrtFit,
    fit_irt_router,
    near_tie_routes,
    near_tie_scores,
)

SMALL = IrtConfig(dims=(0, 1), alphas=(3.0,), temperatures=(1.0, 2.0), inner_folds=3)
"""A small search, so each fit takes well under a second."""


@pytest.fixture(scope="module")
def table() -> OracleTable:
    return load_table(bundled_table_path())


@pytest.fixture(scope="module")
def matrix(table: OracleTable) -> ResultsMatrix:
    # the bundled candidates table that holds the pool's runs (the default pool's: the OpenHands Index's)
    return bundled_results_for(table.pool)[1]


def _with_rows(matrix: ResultsMatrix, rows: np.ndarray, seed: int) -> ResultsMatrix:
    """`matrix` with the outcomes of `rows` replaced by random ones."""
    rng = np.random.default_rng(seed)
    resolved, cost = matrix.resolved.copy(), matrix.cost.copy()
    resolved[rows] = rng.random((len(rows), resolved.shape[1])) < 0.5
    cost[rows] = rng.random((len(rows), cost.shape[1])) * 3
    return dataclasses.replace(matrix, resolved=resolved, cost=cost)


def test_fold_spy_held_out_outcomes_change_nothing(table: OracleTable, matrix: ResultsMatrix) -> None:
    train, test = table.tasks[:150], table.tasks[150:200]
    held = matrix.rows([t.instance_id for t in test])
    honest = fit_irt_router(train, matrix, table.pool, config=SMALL)
    spied = fit_irt_router(train, _with_rows(matrix, held, seed=1), table.pool, config=SMALL)
    assert honest.fit == spied.fit
    assert honest.run_probabilities(test).tobytes() == spied.run_probabilities(test).tobytes()
    assert honest.route(test, table.pool) == spied.route(test, table.pool)


def test_training_outcomes_do_move_the_predictions(table: OracleTable, matrix: ResultsMatrix) -> None:
    train, test = table.tasks[:150], table.tasks[150:200]
    changed = matrix.rows([t.instance_id for t in train[:30]])
    honest = fit_irt_router(train, matrix, table.pool, config=SMALL)
    moved = fit_irt_router(train, _with_rows(matrix, changed, seed=1), table.pool, config=SMALL)
    assert honest.run_probabilities(test).tobytes() != moved.run_probabilities(test).tobytes()
    assert honest.fit.run_costs != moved.fit.run_costs


def test_fit_is_bitwise_deterministic(table: OracleTable, matrix: ResultsMatrix) -> None:
    train, test = table.tasks[:120], table.tasks[120:160]
    a = fit_irt_router(train, matrix, table.pool, config=SMALL, seed=3)
    b = fit_irt_router(list(reversed(train)), matrix, table.pool, config=SMALL, seed=3)
    assert a.fit == b.fit
    assert a.run_probabilities(test).tobytes() == b.run_probabilities(test).tobytes()


def test_near_tie_rule_sends_close_calls_to_the_cheapest() -> None:
    p = np.array([[0.80, 0.78, 0.50], [0.90, 0.60, 0.70], [0.40, 0.40, 0.40]])
    costs = np.array([0.5, 0.1, 0.3])
    assert near_tie_routes(p, costs, 0.0).tolist() == [0, 0, 1]
    assert near_tie_routes(p, costs, 0.05).tolist() == [1, 0, 1]
    assert near_tie_routes(p, costs, 0.25).tolist() == [1, 2, 1]


def test_fitter_routes_exactly_the_test_tasks_with_scores(table: OracleTable, matrix: ResultsMatrix) -> None:
    train, test = table.tasks[:120], table.tasks[120:150]
    fitter = IrtFitter(matrix, table.pool, config=SMALL)
    (decisions,), (scores,) = fitter.fit_scored(train, test, 0)
    assert set(decisions.choices) == {t.instance_id for t in test}
    assert all(len(c) == 1 and next(iter(c)) in table.pool.ids for c in decisions.choices.values())
    assert scores.train.shape == (120, 3) and scores.test.shape == (30, 3)
    p = scores.probabilities
    assert p is not None and p.shape == (30, 3) and ((p > 0) & (p < 1)).all()
    # The probabilities are the ones the routes were chosen from; the dial's scores are them capped at
    # the near-tie level (equal to them below it).
    tol = fitter.fits[0].fit.tolerance
    costs = fitter.fits[0].pool_costs(table.pool)
    assert np.array_equal(scores.test, near_tie_scores(p, tol))
    expect = [table.pool.ids[j] for j in near_tie_routes(p, costs, tol)]
    assert [next(iter(decisions.choices[t.instance_id])) for t in test] == expect


def test_stored_fit_routes_bitwise_alike(table: OracleTable, matrix: ResultsMatrix) -> None:
    train, test = table.tasks[:120], table.tasks[120:200]
    router = fit_irt_router(train, matrix, table.pool, config=SMALL)
    back = FittedIrtRouter.from_fit(IrtFit.model_validate_json(router.fit.model_dump_json()))
    assert back.run_probabilities(test).tobytes() == router.run_probabilities(test).tobytes()
    assert back.route(test, table.pool) == router.route(test, table.pool)
