"""The local trainer: GRPO of a small linear router on the CPU, over the env's split and reward."""

from __future__ import annotations

from router_train.local.checkpoint import LocalCheckpoint, load_policy, read_checkpoint
from router_train.local.config import FeatureConfig, LocalTrainConfig, LocalTrainError, RewardWeights
from router_train.local.heldout import HeldOutRow, HeldOutSummary, format_summary
from router_train.local.policy import RouterPolicy
from router_train.local.step_metrics import StepMetrics
from router_train.local.trainer import LocalTrainResult, train_local

__all__ = [
    "FeatureConfig",
    "HeldOutRow",
    "HeldOutSummary",
    "LocalCheckpoint",
    "LocalTrainConfig",
    "LocalTrainError",
    "LocalTrainResult",
    "RewardWeights",
    "RouterPolicy",
    "StepMetrics",
    "format_summary",
    "load_policy",
    "read_checkpoint",
    "train_local",
]
