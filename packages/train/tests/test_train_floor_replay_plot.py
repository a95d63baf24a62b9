"""The floor replay's regret figure: computed at the plot's checkpoints, the printed lines are unchanged,
and the PNG is the same bytes for the same results."""

from __future__ import annotations

import numpy as np

from router_oracle.frontier import ModelPoint
from router_train.offpolicy.floor_replay import (
    Traffic,
    at_checkpoints,
    regret_lines,
    replay_objective,
)
from router_train.offpolicy.floor_replay_plot import render_regret_png
from router_train.scoring.floor import Objective

MODELS = ["cheap", "dear"]
PRIOR = [ModelPoint(model="cheap", cost=0.2, resolved=0.6), ModelPoint(model="dear", cost=1.0, resolved=0.8)]


def _traffic(n: int) -> Traffic:
    rng = np.random.default_rng(0)
    resolved = (rng.random((n, 2)) < np.asarray([0.6, 0.8])).astype(float)
    cost = np.asarray([0.4, 2.0]) * rng.gamma(4.0, 0.25, size=(n, 2))  # the harness doubles costs
    return Traffic(MODELS, [f"task-{i:04d}" for i in range(n)], resolved, cost)


def test_dense_checkpoints_keep_the_printed_lines_and_draw_the_same_bytes() -> None:
    tr, objective = _traffic(230), Objective(budget=0.6)
    plain = replay_objective(tr, PRIOR, objective, [0, 1])
    dense = replay_objective(tr, PRIOR, objective, [0, 1], [*range(25, 231, 25), 100, 200, 500])
    assert [p.tasks for p in dense["learning floor"][0]] == [25, 50, 75, 100, 125, 150, 175, 200, 225, 230]
    assert at_checkpoints(dense, 230) == plain
    assert regret_lines("x", objective, at_checkpoints(dense, 230)) == regret_lines("x", objective, plain)
    panels = [("a -> b", dense), ("b -> a", dense)]
    png = render_regret_png(panels, "t")
    assert png.startswith(b"\x89PNG") and png == render_regret_png(panels, "t")
