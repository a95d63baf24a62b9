"""Checkpoint of the any-pool router: one JSON document (header, train tasks, weights), written atomically.

Routing a new pool needs the pool's capability summary on the train tasks, so the checkpoint records
the candidates table (label and sha256) and the train task ids; `load_any_pool_router` checks that the
candidates table given is the same one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer, model_validator

from router_oracle.derive import CandidateIndex
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.task_input import TaskInput
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.irt_inputs import AnyPoolIrtState, task_side
from router_train.anypool.policy import AnyPoolPolicy, PoolView, model_feature_names
from router_train.checkpoint_io import read_checkpoint_file
from router_train.local.checkpoint import check_weights, linear_fields, weight_arrays
from router_train.local.config import FeatureConfig
from router_train.local.features import FeatureState


class AnyPoolCheckpoint(FrozenModel):
    """A trained any-pool router: its weights, and the data its capability summaries come from."""

    kind: Literal["router-train-local-anypool"] = "router-train-local-anypool"
    """Marks the file as an any-pool checkpoint."""
    version: Literal[1] = 1
    """Checkpoint format version."""
    model_features: list[str]
    """Names of the model features, in the order of the weight columns (`model_features.MODEL_FEATURES`,
    then `irt_inputs.IRT_MODEL_FEATURES` with the IRT inputs)."""
    features: FeatureConfig
    """How tasks were featurised."""
    feature_state: FeatureState
    """What feature fitting learned from the train tasks (idf, vocabularies)."""
    train: AnyPoolTrainConfig
    """The run's training configuration, seed included."""
    candidates: str
    """The candidates table trained on: `bundled` or its path as given."""
    candidates_sha256: str
    """sha256 of that table's canonical text (`CandidateIndex.digest`)."""
    train_task_ids: list[str]
    """The tasks trained on; every capability summary, also for new pools, is computed on them."""
    train_models: list[str]
    """The models training pools were drawn from."""
    held_out_models: list[str]
    """Candidate models kept out of training (never in a training pool)."""
    step: int
    """GRPO steps taken."""
    weights: list[list[float]]
    """Task feature x model feature weights, one row per task feature."""
    bias: list[float]
    """Weight of each model feature independent of the task."""
    irt: AnyPoolIrtState | None = None
    """With the IRT inputs (`features.irt`): their IRT fit on the train tasks, which routing a pool needs;
    absent from the file without them."""

    @model_validator(mode="after")
    def _shapes(self) -> AnyPoolCheckpoint:
        want = list(model_feature_names(self.features))
        if self.model_features != want:
            raise ValueError(f"model_features must be {want} (this version's columns for these features)")
        if self.features.irt != (self.irt is not None):
            raise ValueError("features.irt needs the IRT fit (`irt`), and only it")
        d = len(self.model_features)
        task_cfg = task_side(self.features)
        check_weights(self.weights, self.bias, task_cfg, self.feature_state, d, "these features")
        return self

    @model_serializer(mode="wrap")
    def _without_absent_irt(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A router without IRT inputs is written as before they existed: the same files, byte for byte.
        data: dict[str, Any] = handler(self)
        if self.irt is None:
            data.pop("irt", None)
        return data


def checkpoint_of(
    policy: AnyPoolPolicy,
    train: AnyPoolTrainConfig,
    index: CandidateIndex,
    train_task_ids: Sequence[str],
    train_models: Sequence[str],
    held_out_models: Sequence[str],
) -> AnyPoolCheckpoint:
    return AnyPoolCheckpoint(
        model_features=list(policy.model_features),
        train=train,
        candidates=index.label,
        candidates_sha256=index.digest(),
        train_task_ids=list(train_task_ids),
        train_models=list(train_models),
        held_out_models=list(held_out_models),
        step=train.steps,
        irt=policy.irt,
        **linear_fields(policy),
    )


def read_checkpoint(path: str | os.PathLike[str]) -> AnyPoolCheckpoint:
    """Read and validate a checkpoint; errors name the file."""
    return read_checkpoint_file(path, AnyPoolCheckpoint, "any-pool checkpoint", AnyPoolError)


def policy_of(ckpt: AnyPoolCheckpoint) -> AnyPoolPolicy:
    weights, bias = weight_arrays(ckpt.weights, ckpt.bias, len(ckpt.model_features))
    return AnyPoolPolicy(ckpt.features, ckpt.feature_state, weights, bias, ckpt.irt)


class TrainedAnyPoolRouter:
    """A trained any-pool policy bound to its candidates table and train tasks: routes any pool of
    candidate ids given per call (`route.kinds.anypool.PoolBoundRouter` binds one pool for `route`)."""

    def __init__(self, policy: AnyPoolPolicy, index: CandidateIndex, train_task_ids: Sequence[str]) -> None:
        self.policy = policy
        self.index = index
        self.train_task_ids = list(train_task_ids)

    def view(self, model_ids: Sequence[str]) -> PoolView:
        """The pool `model_ids` with its capability summary on the train tasks."""
        return PoolView.build(self.index, model_ids, self.train_task_ids)

    def route(self, tasks: Sequence[TaskInput], model_ids: Sequence[str]) -> list[str]:
        """Greedy route of each task among `model_ids`."""
        return self.policy.route(tasks, self.view(model_ids))


def load_any_pool_router(
    path: str | os.PathLike[str], index: CandidateIndex | None = None
) -> TrainedAnyPoolRouter:
    """The router saved at `path`, over `index` (default: the candidates table it names), which must be
    the table it was trained on (same sha256)."""
    ckpt = read_checkpoint(path)
    index = index or CandidateIndex.load(ckpt.candidates)
    want, got = ckpt.candidates_sha256, index.digest()
    if got != want:
        raise AnyPoolError(
            f"{path}: trained on candidates table {ckpt.candidates} (sha256 {want[:16]}...), "
            f"but {index.label} has sha256 {got[:16]}..."
        )
    return TrainedAnyPoolRouter(policy_of(ckpt), index, ckpt.train_task_ids)
