"""The `local-anypool` kind: a `router-train local-anypool` checkpoint
(`anypool.checkpoint.AnyPoolCheckpoint`), one policy that routes any pool of candidate models, seen
through the pool's capability summary on the checkpoint's train tasks (from its candidates table)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.derive import CandidateIndex
from router_oracle.pool_file import load_pool
from router_oracle.task_input import TaskInput
from router_train.anypool.checkpoint import AnyPoolCheckpoint, TrainedAnyPoolRouter, load_any_pool_router
from router_train.anypool.policy import PoolView
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import Judged, Loaded, RouterKind
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.dial import CHECKPOINT_POINTS, DialCalibration, calibrate


class PoolBoundRouter(Scorer):
    """A `router-train local-anypool` checkpoint bound to one pool: scores are its probabilities."""

    def __init__(self, router: TrainedAnyPoolRouter, pool: Sequence[str], name: str) -> None:
        self.router = router
        self.view: PoolView = router.view(pool)
        self.name = name
        self.pool = list(self.view.ids)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.router.policy.probabilities(tasks, self.view)

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.router.policy.logits(tasks, self.view)

    def pool_calibration(self) -> DialCalibration:
        """The dial table of this pool: the checkpoint's train tasks, with this pool's outcomes from the
        candidates table (one per pool, so computed here, not stored)."""
        index = self.router.index
        tasks = index.records(index.pool(self.view.ids, name="drawn"), self.router.train_task_ids)
        return calibrate(
            self.router.policy.logits(tasks, self.view), tasks, self.view.ids, max_points=CHECKPOINT_POINTS
        )


def load(path: Path, spec: CheckpointSpec) -> Loaded:
    """The checkpoint bound to `spec.pool` (needed), over `spec.candidates` or the table it names."""
    if spec.pool is None:
        raise RouteError(f"{path}: an any-pool checkpoint needs --pool POOL.toml (the models to route among)")
    if spec.table is not None:
        raise RouteError(
            f"{path}: an any-pool checkpoint reads a candidates table: give --candidates, not --table"
        )
    ids = load_pool(spec.pool).ids
    index = CandidateIndex.load(str(spec.candidates)) if spec.candidates is not None else None
    router = PoolBoundRouter(load_any_pool_router(path, index), ids, f"local-anypool:{path}")
    return Loaded(router, router.pool_calibration)


def judge(path: Path, pool: Sequence[str]) -> Judged:
    """The checkpoint bound to the evaluated table's pool, over the candidates table it names."""
    model = load_any_pool_router(path)
    scorer = PoolBoundRouter(model, pool, f"local-anypool:{path}")
    return Judged(ScoringRouter(scorer), list(model.train_task_ids))


KIND = RouterKind(name="local-anypool", checkpoint=AnyPoolCheckpoint, load=load, judge=judge)
"""The `local-anypool` kind's routing entry (`route.kinds.KINDS`); its fitting entry is
`fitting.anypool.FIT`."""
