"""The `irt` kind: a `router-train fit irt` checkpoint (`irt.checkpoint.IrtCheckpoint`), an item-response
model over one fixed pool: per task, each model's predicted resolve probability from the task's text.

Its route is the oracle's rule on those probabilities (the best, near-ties to the cheapest): the scores are
the probabilities capped at the near-tie level (`irt.router.near_tie_scores`), columns by ascending
predicted cost. The dial is lambda: `--dial L` routes to argmax(score - L x predicted mean cost)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.task_input import TaskInput
from router_train.irt.checkpoint import (
    IrtCheckpoint,
    ordered_pool,
    predicted_probabilities,
    read_irt,
)
from router_train.irt.router import FittedIrtRouter, near_tie_scores
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import (
    Judged,
    Loaded,
    RouterKind,
    check_fixed,
    refuse_candidates,
    routing_task_features,
)
from router_train.route.operating_point import stored_point
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec

KIND_NAME = "irt"
"""This kind's name: its messages' word and its key of a fitting request's `KindOptions`."""


class IrtRouter(Scorer):
    """A saved IRT router: scores are the predicted resolve probabilities capped at the near-tie level,
    columns the calibration's (the pool by ascending predicted cost)."""

    def __init__(self, ckpt: IrtCheckpoint, name: str, task_features: str | None = None) -> None:
        self.ckpt = ckpt
        self.name = name
        self.pool = list(ckpt.calibration.model_ids)
        self.model = FittedIrtRouter.from_fit(ckpt.fit, task_features)
        self.ordered = ordered_pool(ckpt.pool, self.pool)

    def probabilities(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """(tasks, pool) predicted resolve probabilities, in `pool` order."""
        return predicted_probabilities(self.model, tasks, self.ordered)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return near_tie_scores(self.probabilities(tasks), self.ckpt.fit.tolerance)

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.scores(tasks)


def load(path: Path, spec: CheckpointSpec) -> Loaded:
    """The saved IRT router; its dial table is the stored one."""
    refuse_candidates(spec, path, "irt")
    ckpt = read_irt(path)
    check_fixed(spec, path, ckpt.pool.ids, ckpt.table, ckpt.table_sha256)
    features = routing_task_features(spec, path, ckpt.fit.task_features)
    return Loaded(IrtRouter(ckpt, f"irt:{path}", features), lambda: ckpt.calibration, ckpt.safe_point)


def judge(path: Path, pool: Sequence[str]) -> Judged:
    """The saved IRT router over its own pool (evaluate checks its routes are the table's models)."""
    ckpt = read_irt(path)
    return Judged(deployed(ckpt, f"irt:{path}"), list(ckpt.train_task_ids))


def deployed(ckpt: IrtCheckpoint, name: str) -> ScoringRouter:
    """The saved IRT router at the point its checkpoint stores (what `route` deploys without a budget or
    dial; replay's static prior)."""
    scorer = IrtRouter(ckpt, name)
    return ScoringRouter(scorer, stored_point(scorer, ckpt.safe_point, ckpt.calibration))


KIND = RouterKind(name=KIND_NAME, checkpoint=IrtCheckpoint, load=load, judge=judge)
"""The `irt` kind's routing entry (`route.kinds.KINDS`); its fitting entry is `fitting.irt.FIT`."""
