"""The oracle's headroom that `router_oracle.noise` reports is the one `router-train evaluate` measures:
the oracle's resolved rate minus the best random mix of single models at its cost, on the same tasks."""

from __future__ import annotations

import math

import pytest

from router_frontier_rl.split import select_tasks
from router_oracle.build import build_table
from router_oracle.noise import estimate_noise
from router_train.evaluate.metrics import frontier_position, single_model_points


@pytest.mark.parametrize("pool", ["default", "multi_run"])
def test_noise_headroom_is_the_evaluate_yardstick(pool: str) -> None:
    table = build_table(pool)
    tasks = select_tasks(table, "eval")
    n = len(tasks)
    cost = math.fsum(t.per_model[t.oracle].cost for t in tasks) / n
    resolved = math.fsum(t.per_model[t.oracle].resolve_rate for t in tasks) / n
    position = frontier_position(cost, resolved, single_model_points(tasks, table.pool.ids))
    assert position.gap_vs_mix is not None
    est = estimate_noise(table, [t.instance_id for t in tasks])
    assert est.tasks == n == 100
    assert est.headroom_points == pytest.approx(100 * position.gap_vs_mix, abs=1e-3)
    assert est.noise is not None and est.headroom_points is not None
    assert 0 < est.noise.noise_points < est.headroom_points
