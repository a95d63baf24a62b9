"""The `local-anypool` kind: a `router-train local-anypool` checkpoint
(`anypool.checkpoint.AnyPoolCheckpoint`), one policy that routes any pool of candidate models, seen
through the pool's capability summary on the checkpoint's train tasks (from its candidates table)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from router_oracle.derive import CandidateIndex
from router_oracle.pool_file import load_pool
from router_oracle.task_input import TaskInput
from router_train.anypool.checkpoint import AnyPoolCheckpoint, TrainedAnyPoolRouter, load_any_pool_router
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.irt_inputs import AnyPoolIrtState, fit_anypool_irt
from router_train.anypool.policy import PoolView
from router_train.anypool.trainer import AnyPoolTrainResult, ScoreCache, train_any_pool
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import Fit, Judged, Loaded, RouterKind
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.dial import CHECKPOINT_POINTS, DialCalibration, calibrate


class AnyPoolTrainer(Protocol):
    """Trains one router of any pool on `train_task_ids` with pools drawn from `model_ids`
    (`anypool.train_any_pool`); `score_cache` and `irt` are work shared between the trainings of one
    evaluation (route scores of a bank of pools; the IRT inputs' fit of a partition)."""

    def __call__(
        self,
        index: CandidateIndex,
        train_task_ids: Sequence[str],
        model_ids: Sequence[str],
        cfg: AnyPoolTrainConfig | None = None,
        *,
        score_cache: ScoreCache | None = None,
        irt: AnyPoolIrtState | None = None,
    ) -> AnyPoolTrainResult: ...


@dataclass(frozen=True)
class AnyPoolTraining:
    """How `router-train evaluate-anypool` trains a kind that routes any pool (`local-anypool`) per held-out
    group and task partition (`route.kinds.anypool_training`)."""

    train: AnyPoolTrainer
    """The trainer."""
    irt_inputs: Callable[[CandidateIndex, Sequence[str]], AnyPoolIrtState]
    """With IRT inputs (`FeatureConfig.irt`): their fit on a partition's train task ids (every run's rows),
    shared by the partition's trainings of every group."""


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


KIND = RouterKind(
    name="local-anypool",
    checkpoint=AnyPoolCheckpoint,
    load=load,
    judge=judge,
    # Judged across pools by `evaluate-anypool`, which trains it; `evaluate` does not fit it.
    fit=Fit("router-train local-anypool", anypool=AnyPoolTraining(train_any_pool, fit_anypool_irt)),
)
