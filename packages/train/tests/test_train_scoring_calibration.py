"""The one definition of the Brier score and the expected calibration error (`scoring.calibration`),
checked against values computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.table_check import load_table
from router_train.scoring.calibration import (
    brier_score,
    expected_calibration_error,
    held_out_calibration,
    router_calibration,
)
from router_train.scoring.dial import RouterScores
from router_train.scoring.metrics import task_outcome


def test_brier_by_hand() -> None:
    # (0.9-1)^2 + (0.2-0)^2 + (0.6-0)^2 + (0.5-1)^2 = 0.01 + 0.04 + 0.36 + 0.25 = 0.66; / 4
    assert brier_score(np.asarray([0.9, 0.2, 0.6, 0.5]), np.asarray([1, 0, 0, 1])) == pytest.approx(0.165)


def test_ece_by_hand() -> None:
    # Bins of width 0.1: [0.05, 0.08] in bin 0 (mean p 0.065, mean y 0.5, |diff| 0.435, weight 2/5);
    # [0.95, 1.0] in bin 9 (1.0 joins the last bin; mean p 0.975, mean y 1, 0.025, 2/5);
    # [0.55] in bin 5 (0.55 vs 0: 0.55, 1/5). ECE = 0.4 * 0.435 + 0.4 * 0.025 + 0.2 * 0.55 = 0.294.
    p = np.asarray([0.05, 0.08, 0.95, 1.0, 0.55])
    y = np.asarray([0, 1, 1, 1, 0])
    assert expected_calibration_error(p, y) == pytest.approx(0.294)
    # Perfectly calibrated within each bin: 0; a single bin is |mean p - mean y|.
    assert expected_calibration_error(np.asarray([0.25, 0.25, 0.25, 0.25]), np.asarray([1, 0, 0, 0])) == 0.0
    assert expected_calibration_error(np.asarray([0.31, 0.39]), np.asarray([1, 1])) == pytest.approx(0.65)


def test_router_calibration_is_per_model_column() -> None:
    p = np.asarray([[0.9, 0.1], [0.2, 0.3]])
    y = np.asarray([[1.0, 0.0], [0.0, 0.5]])
    rc = router_calibration("irt", ["a", "b"], p, y)
    a, b = rc.models
    assert (a.model, a.n, b.model) == ("a", 2, "b")
    assert a.brier == pytest.approx((0.01 + 0.04) / 2) and b.brier == pytest.approx((0.01 + 0.04) / 2)
    assert a.mean_predicted == pytest.approx(0.55) and b.observed == pytest.approx(0.25)
    # a: bins 9 (0.9 vs 1) and 2 (0.2 vs 0): 0.5 * 0.1 + 0.5 * 0.2; b: bins 1 and 3: 0.5 * 0.1 + 0.5 * 0.2
    assert a.ece == pytest.approx(0.15) and b.ece == pytest.approx(0.15)
    with pytest.raises(ValueError, match="must be"):
        router_calibration("irt", ["a"], p, y)


def test_held_out_calibration_pools_partitions_and_skips_routers_without_probabilities() -> None:
    table = load_table(bundled_table_path())
    ids = table.pool.ids
    parts = [table.tasks[:3], table.tasks[3:5]]
    probs = [np.full((3, 3), 0.5), np.full((2, 3), 0.25)]
    scores = [
        [RouterScores("irt", ids, np.zeros((1, 3)), p, probabilities=p), RouterScores("lr", ids, p, p)]
        for p in probs
    ]
    (rc,) = held_out_calibration(parts, scores)
    assert rc.router == "irt" and [m.model for m in rc.models] == ids
    y = np.asarray([[task_outcome(t, m)[0] for m in ids] for t in table.tasks[:5]])
    p = np.vstack(probs)
    for j, m in enumerate(rc.models):
        assert m.n == 5
        assert m.brier == pytest.approx(np.mean((p[:, j] - y[:, j]) ** 2), abs=1e-6)
        assert m.observed == pytest.approx(y[:, j].mean(), abs=1e-6)
