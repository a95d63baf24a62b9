"""Checkpoint file of the local router: one JSON document, header and weights, written atomically."""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
from pydantic import model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_train.checkpoint_io import read_checkpoint_file
from router_train.local.config import FeatureConfig, LocalTrainConfig, LocalTrainError
from router_train.local.features import FeatureState, feature_dim
from router_train.local.policy import LinearTaskModel, RouterPolicy
from router_train.scoring.dial import DialCalibration
from router_train.scoring.safe_point import SafePoint


class LocalCheckpoint(FrozenModel):
    """A trained local router: everything needed to featurise a task and route it."""

    kind: Literal["router-train-local"] = "router-train-local"
    """Marks the file as a local-trainer checkpoint."""
    version: Literal[2, 3] = 3
    """Checkpoint format version (2 added `table_sha256` and `train_task_ids`; 3 added `calibration`;
    version 2 files are still read, without a calibration)."""
    pool_ids: list[str]
    """The pool's model ids, in the order of the weight columns."""
    features: FeatureConfig
    """How tasks were featurised."""
    feature_state: FeatureState
    """What feature fitting learned from the train split (idf, vocabularies)."""
    train: LocalTrainConfig
    """The run's full configuration, seed included."""
    table: str
    """The oracle table trained on: its path as given, or `router_frontier_rl/data/oracle_table.json`."""
    table_sha256: str
    """Hex sha256 of that table file's bytes."""
    train_task_ids: list[str]
    """Every task the router learned from (sorted instance ids): `router-train evaluate` refuses to score
    it on any of them."""
    step: int
    """GRPO steps taken when this checkpoint was written."""
    weights: list[list[float]]
    """Weight matrix, one row per feature, one column per pool model."""
    bias: list[float]
    """Bias per pool model."""
    calibration: DialCalibration | None = None
    """The cost dial's table on the train tasks (`evaluate.dial.calibrate_policy`: dial -> expected cost
    per task and resolved rate, from the policy's logits): what `router-train route --budget` reads.
    None in version 2 files (route recomputes it when the training table is at hand)."""
    safe_point: SafePoint | None = None
    """Its default operating point, chosen on the train tasks by inner cross-validation
    (`scoring.safe_point`): what `route` routes at without `--budget`, `--dial` or `--no-safe-point`.
    None in files written before it existed (the native route)."""

    @model_validator(mode="after")
    def _shapes(self) -> LocalCheckpoint:
        k = len(self.pool_ids)
        if self.calibration is not None and self.calibration.model_ids != self.pool_ids:
            raise ValueError(
                f"calibration is over {self.calibration.model_ids}, not the pool {self.pool_ids}"
            )
        irt = self.feature_state.irt
        if irt is not None and irt.pool.ids != self.pool_ids:
            raise ValueError(f"feature_state.irt is over the pool {irt.pool.ids}, not {self.pool_ids}")
        check_weights(self.weights, self.bias, self.features, self.feature_state, k, "this pool and features")
        return self


def check_weights(
    weights: list[list[float]], bias: list[float], cfg: FeatureConfig, state: FeatureState, k: int, of: str
) -> None:
    """A linear router's weights: feature_dim x `k` and `k` bias, all finite (a NaN weight routes every
    task to the same model, argmax of NaN, silently: refuse it at load). `of` ends the shape error."""
    dim = feature_dim(cfg, state)
    if len(bias) != k or len(weights) != dim or any(len(r) != k for r in weights):
        raise ValueError(f"weights must be {dim} x {k} and bias {k} long for {of}")
    for name, values in (
        ("weights", weights),
        ("bias", bias),
        ("feature_state.idf", state.idf),
        ("feature_state.bucket_weights", state.bucket_weights or []),
    ):
        if not np.isfinite(np.asarray(values, dtype=np.float64)).all():
            raise ValueError(f"{name} holds non-finite numbers (NaN or infinity)")


def checkpoint_of(
    policy: RouterPolicy,
    train: LocalTrainConfig,
    table: str,
    table_sha256: str,
    train_task_ids: list[str],
    step: int,
    calibration: DialCalibration | None = None,
    safe_point: SafePoint | None = None,
) -> LocalCheckpoint:
    return LocalCheckpoint(
        pool_ids=policy.pool_ids,
        train=train,
        table=table,
        table_sha256=table_sha256,
        train_task_ids=sorted(train_task_ids),
        step=step,
        calibration=calibration,
        safe_point=safe_point,
        **linear_fields(policy),
    )


def linear_fields(policy: LinearTaskModel) -> dict[str, Any]:
    """A linear router's checkpoint fields: its featurisation and its weights as plain floats."""
    state, weights, bias = policy.feature_state, policy.weights.tolist(), policy.bias.tolist()
    return {"features": policy.features, "feature_state": state, "weights": weights, "bias": bias}


def weight_arrays(weights: list[list[float]], bias: list[float], k: int) -> tuple[np.ndarray, np.ndarray]:
    """A checkpoint's weights (`k` columns) and bias as the arrays a policy holds."""
    return np.asarray(weights, dtype=np.float64).reshape(-1, k), np.asarray(bias, dtype=np.float64)


def read_checkpoint(path: str | os.PathLike[str]) -> LocalCheckpoint:
    """Read and validate a checkpoint; errors name the file."""
    return read_checkpoint_file(path, LocalCheckpoint, "local router checkpoint", LocalTrainError)


def policy_of(ckpt: LocalCheckpoint) -> RouterPolicy:
    weights, bias = weight_arrays(ckpt.weights, ckpt.bias, len(ckpt.pool_ids))
    return RouterPolicy(ckpt.pool_ids, ckpt.features, ckpt.feature_state, weights, bias)


def load_policy(path: str | os.PathLike[str]) -> RouterPolicy:
    """The router saved at `path` (a `checkpoint.json` written by `router-train local`)."""
    return policy_of(read_checkpoint(path))
