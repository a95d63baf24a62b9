"""The local router's IRT inputs (`FeatureConfig.irt`, `local.irt_features`): a held-out task's own outcomes
change neither its features nor the trained policy (fold spy), training outcomes do, train tasks get their
out-of-fold prediction, and a checkpoint carries the fit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from router_frontier_rl import bundled_table_path
from router_oracle.results_matrix import ResultsMatrix, bundled_results_for
from router_oracle.table import OracleTable
from router_oracle.table_check import load_table
from router_train.checkpoint_io import save_checkpoint
from router_train.local import irt_features as irt_module
from router_train.local.checkpoint import checkpoint_of, load_policy
from router_train.local.config import FeatureConfig, LocalTrainConfig, LocalTrainError
from router_train.local.features import feature_dim, featurize, fit_features
from router_train.local.fitter import LocalFitter
from router_train.local.trainer import fit_policy
from router_train.scoring.calibration import held_out_calibration

IRT = FeatureConfig(irt=True)
SMALL = LocalTrainConfig(steps=15, tasks_per_step=16, samples_per_task=4, shift_folds=0, features=IRT)
"""A short training: the IRT fit dominates its time."""


@pytest.fixture(scope="module")
def table() -> OracleTable:
    return load_table(bundled_table_path())


@pytest.fixture(scope="module")
def matrix(table: OracleTable) -> ResultsMatrix:
    # the bundled candidates table that holds the pool's runs (the default pool's: the OpenHands Index's)
    return bundled_results_for(table.pool)[1]


def _use_matrix(monkeypatch: pytest.MonkeyPatch, matrix: ResultsMatrix) -> None:
    monkeypatch.setattr(irt_module, "bundled_results_for", lambda pool: ("spy", matrix))


def _scrambled(matrix: ResultsMatrix, rows: np.ndarray) -> ResultsMatrix:
    """`matrix` with every outcome and cost of `rows` flipped / redrawn."""
    resolved = matrix.resolved.copy()
    resolved[rows] = 1 - resolved[rows]
    cost = matrix.cost.copy()
    cost[rows] = np.random.default_rng(1).uniform(0.0, 5.0, size=cost[rows].shape)
    return dataclasses.replace(matrix, resolved=resolved, cost=cost)


def test_fold_spy_held_out_outcomes_change_nothing(
    table: OracleTable, matrix: ResultsMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, test = table.tasks[:150], table.tasks[150:200]
    pool = table.pool.ids
    honest = fit_policy(SMALL, train, pool).policy
    _use_matrix(monkeypatch, _scrambled(matrix, matrix.rows([t.instance_id for t in test])))
    spied = fit_policy(SMALL, train, pool).policy
    assert honest.feature_state == spied.feature_state
    assert honest.weights.tobytes() == spied.weights.tobytes()
    assert honest.logits(test).tobytes() == spied.logits(test).tobytes()


def test_training_outcomes_do_move_the_features(
    table: OracleTable, matrix: ResultsMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    train, test = table.tasks[:150], table.tasks[150:200]
    pool = table.pool.ids
    honest = fit_features(IRT, train, pool)
    _use_matrix(monkeypatch, _scrambled(matrix, matrix.rows([t.instance_id for t in train[:40]])))
    moved = fit_features(IRT, train, pool)
    a, b = featurize(IRT, honest, test).toarray(), featurize(IRT, moved, test).toarray()
    assert a.shape == b.shape == (50, feature_dim(IRT, honest))
    assert not np.array_equal(a[:, -3:], b[:, -3:])  # the IRT columns
    assert np.array_equal(a[:, :-3], b[:, :-3])  # the text columns read no outcome


def test_train_tasks_get_their_out_of_fold_prediction(table: OracleTable) -> None:
    train, test = table.tasks[:150], table.tasks[150:200]
    state = fit_features(IRT, train, table.pool.ids)
    assert state.irt is not None
    cols = irt_module.irt_columns(state.irt, train)
    oof = np.asarray([state.irt.train_logits[t.instance_id] for t in train])
    assert np.allclose(cols, (oof - state.irt.mean) / state.irt.scale)
    assert np.allclose(cols.mean(axis=0), 0.0) and np.allclose(cols.std(axis=0), 1.0)
    # A train task's column is not the full fit's prediction from its text (that one saw its outcomes).
    refit = irt_module.IrtFeatureState(**{**state.irt.model_dump(), "train_logits": {}})
    assert not np.allclose(irt_module.irt_columns(refit, train), cols)
    assert np.isfinite(irt_module.irt_columns(state.irt, test)).all()


def test_off_by_default_and_needs_the_pool(table: OracleTable) -> None:
    plain = fit_features(FeatureConfig(), table.tasks[:100])
    assert plain.irt is None
    assert feature_dim(IRT, fit_features(IRT, table.tasks[:100], table.pool.ids)) == feature_dim(
        FeatureConfig(), plain
    ) + len(table.pool.ids)
    with pytest.raises(LocalTrainError, match="pool's model ids"):
        fit_features(IRT, table.tasks[:100])
    with pytest.raises(LocalTrainError, match="IRT features"):
        fit_features(IRT, table.tasks[:100], ["no-such-model"])


def test_checkpoint_carries_the_irt_fit(table: OracleTable, tmp_path: Path) -> None:
    train, test = table.tasks[:120], table.tasks[120:180]
    policy = fit_policy(SMALL, train, table.pool.ids).policy
    path = tmp_path / "checkpoint.json"
    ids = sorted(t.instance_id for t in train)
    save_checkpoint(checkpoint_of(policy, SMALL, "t", "0" * 64, ids, SMALL.steps, None), path)
    loaded = load_policy(path)
    assert np.allclose(loaded.logits(test), policy.logits(test))
    assert loaded.route(test) == policy.route(test)


def test_evaluate_gets_the_predictions_behind_the_columns_to_calibrate(table: OracleTable) -> None:
    """On IRT inputs the local fitter's scores carry the test tasks' predicted resolve probabilities (in its
    pool order): the columns the policy read, unstandardised; without them, none."""
    train, test = table.tasks[:150], table.tasks[150:200]
    pool = list(reversed(table.pool.ids))  # an order other than the IRT state's
    (scores,) = LocalFitter("local-grpo+irt", SMALL, pool).fit_scored(train, test, 0)[1]
    policy = fit_policy(SMALL, train, pool).policy
    assert policy.feature_state.irt is not None
    state = policy.feature_state.irt
    cols = irt_module.irt_columns(state, test) * state.scale + state.mean
    order = [state.pool.ids.index(m) for m in pool]
    assert scores.probabilities is not None and scores.probabilities.shape == (len(test), len(pool))
    assert np.allclose(scores.probabilities, 1 / (1 + np.exp(-cols[:, order])))
    (cal,) = held_out_calibration([list(test)], [[scores]])
    assert cal.router == "local-grpo+irt" and [m.model for m in cal.models] == pool
    plain = LocalTrainConfig(steps=15, tasks_per_step=16, samples_per_task=4, shift_folds=0)
    assert LocalFitter("local-grpo", plain, pool).fit_scored(train, test, 0)[1][0].probabilities is None
