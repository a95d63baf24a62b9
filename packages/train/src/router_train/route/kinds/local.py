"""The `local` kind: a `router-train local` GRPO checkpoint (`local.checkpoint.LocalCheckpoint`), a linear
softmax policy over one fixed pool; its scores are the policy's probabilities, its dial reads the logits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.task_input import TaskInput
from router_train.local.checkpoint import LocalCheckpoint, policy_of, read_checkpoint
from router_train.local.config import LocalTrainConfig
from router_train.local.fitter import LOCAL_ROUTER_NAME, LocalFitter
from router_train.local.policy import RouterPolicy
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import (
    Fit,
    FitRequest,
    Judged,
    Loaded,
    ReferenceRequest,
    RouterKind,
    check_fixed,
    kind_option,
    refuse_candidates,
    routing_task_features,
)
from router_train.route.operating_point import stored_point, training_tasks
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec
from router_train.scoring.dial import DialCalibration, calibrate_policy
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import LOCAL_MARGINS

KIND_NAME = "local"
"""This kind's name: its messages' word and its key of a request's `KindOptions`."""


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


def fitters(request: FitRequest) -> list[Fitter]:
    """One GRPO trainer per requested configuration (`local-grpo`, `--local NAME=...`), on the pool; with
    `--task-features` each configuration without its own reads them too."""
    return [
        LocalFitter(name, with_task_features(config, request.task_features), request.table.pool.ids)
        for name, config in kind_option(request.options, KIND_NAME, list, [])
    ]


def with_task_features(config: LocalTrainConfig, task_features: str | None) -> LocalTrainConfig:
    """`config` reading `task_features` too, unless it names its own (or none is given)."""
    if task_features is None or config.features.task_features is not None:
        return config
    features = config.features.model_copy(update={"task_features": task_features})
    return config.model_copy(update={"features": features})


def references(request: ReferenceRequest) -> list[Fitter]:
    """evaluate-anypool's fixed-pool GRPO router (`local-grpo`), its partitions trained in lockstep."""
    config = kind_option(request.options, KIND_NAME, LocalTrainConfig, LocalTrainConfig())
    return [LocalFitter(LOCAL_ROUTER_NAME, config, list(request.pool))]


KIND = RouterKind(
    name=KIND_NAME,
    checkpoint=LocalCheckpoint,
    load=load,
    judge=judge,
    fit=Fit(
        "router-train local",
        fitters,
        references=references,
        reference_rows=(LOCAL_ROUTER_NAME,),
        margins=LOCAL_MARGINS,
    ),
)
