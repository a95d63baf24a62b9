"""The `local` kind: a `router-train local` GRPO checkpoint (`local.checkpoint.LocalCheckpoint`), a linear
softmax policy over one fixed pool; its scores are the policy's probabilities, its dial reads the logits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.task_input import TaskInput
from router_train.local.checkpoint import LocalCheckpoint, policy_of, read_checkpoint
from router_train.local.policy import RouterPolicy
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import (
    Judged,
    Loaded,
    RouterKind,
    check_fixed,
    refuse_candidates,
    routing_task_features,
)
from router_train.route.operating_point import stored_point, training_tasks
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec
from router_train.scoring.dial import DialCalibration, calibrate_policy

KIND_NAME = "local"
"""This kind's name: its messages' word and its key of a fitting request's `KindOptions`."""


class LocalRouter(Scorer):
    """A `router-train local` checkpoint: scores are the policy's probabilities."""

    def __init__(self, policy: RouterPolicy, name: str) -> None:
        self.policy = policy
        self.name = name
        self.pool = list(policy.pool_ids)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.policy.probabilities(tasks)

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.policy.logits(tasks)


def load(path: Path, spec: CheckpointSpec) -> Loaded:
    """The checkpoint's router; its dial table is the stored one (v3), else recomputed on its training
    tasks from the training table when at hand (v2)."""
    refuse_candidates(spec, path, "local")
    ckpt = read_checkpoint(path)
    check_fixed(spec, path, ckpt.pool_ids, ckpt.table, ckpt.table_sha256)
    features = routing_task_features(spec, path, ckpt.feature_state.task_features)
    if features is not None:  # the routing file replaces the one it was trained with
        config = ckpt.features.model_copy(update={"task_features": features})
        ckpt = ckpt.model_copy(update={"features": config})
    policy = policy_of(ckpt)

    def calibration() -> DialCalibration:
        if ckpt.calibration is not None:
            return ckpt.calibration
        tasks = training_tasks(path, spec, ckpt.table, ckpt.table_sha256, ckpt.train_task_ids)
        return calibrate_policy(policy, tasks)

    return Loaded(LocalRouter(policy, f"local:{path}"), calibration, ckpt.safe_point)


def judge(path: Path, pool: Sequence[str]) -> Judged:
    """The checkpoint's router over its own pool (evaluate checks its routes are the table's models)."""
    ckpt = read_checkpoint(path)
    scorer = LocalRouter(policy_of(ckpt), f"local:{path}")
    point = stored_point(scorer, ckpt.safe_point, ckpt.calibration)
    return Judged(ScoringRouter(scorer, point), list(ckpt.train_task_ids))


KIND = RouterKind(name=KIND_NAME, checkpoint=LocalCheckpoint, load=load, judge=judge)
"""The `local` kind's routing entry (`route.kinds.KINDS`); its fitting entry is `fitting.local.FIT`."""
