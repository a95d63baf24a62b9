"""The any-pool trainer's configuration: every knob of a run, recorded in its checkpoint."""

from __future__ import annotations

from pydantic import Field, field_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import MAX_COUNT, Seed
from router_train.local.config import MAX_DECAY, MAX_SAMPLES, Advantage, FeatureConfig, RewardWeights


class AnyPoolError(ValueError):
    """An any-pool run that cannot start, or a checkpoint that cannot be used (message names the file)."""


class AnyPoolTrainConfig(FrozenModel):
    """GRPO of the pool-agnostic router: the same step as `router-train local` (`local.grpo.grpo_step`),
    over drawn pools."""

    steps: int = Field(default=200, ge=1, le=MAX_COUNT)
    """GRPO steps (policy updates), 1 to 1,000,000."""
    tasks_per_step: int = Field(default=64, ge=1, le=MAX_COUNT)
    """Train tasks per step, drawn epoch by epoch without replacement; each gets a pool from the bank."""
    samples_per_task: int = Field(default=8, ge=2, le=MAX_SAMPLES)
    """Routes sampled per (task, pool), the GRPO group."""
    pool_sizes: list[int] = Field(default_factory=lambda: [2, 3, 4, 5], min_length=1)
    """Sizes of the training pools, used in turn; varied so the policy does not fit one pool size."""
    pool_bank: int = Field(default=128, ge=1, le=MAX_COUNT)
    """Distinct training pools drawn once per run (each costs one capability summary, about 20 ms);
    every (step, task) pair gets one of them at random."""
    lr: float = Field(default=0.05, gt=0, le=1, allow_inf_nan=False)
    """Adam learning rate (as the local trainer: a few ten thousand weights on normalised features)."""
    betas: tuple[float, float] = (0.9, 0.98)
    """Adam betas (the reference recipe's)."""
    weight_decay: float = Field(default=0.1, ge=0, le=MAX_DECAY, allow_inf_nan=False)
    """Decoupled weight decay of the task x model interaction weights (not of the model-feature bias)."""
    max_grad_norm: float = Field(default=0.0, ge=0, le=MAX_COUNT, allow_inf_nan=False)
    """Clip the global gradient norm to this value; 0 turns clipping off."""
    advantage: Advantage = "mean"
    """Group advantage, as the local trainer's: `mean` = reward minus the group mean (prime-rl's `grpo`);
    `std` = that divided by the group std + `adv_eps`."""
    adv_eps: float = Field(default=1e-6, gt=0, le=1, allow_inf_nan=False)
    """eps in the `std` advantage (r - mean) / (std + eps)."""
    seed: Seed = 0
    """Seed of the pool bank, the task order and the sampling; same seed and inputs -> same policy
    (0 to 2**32 - 1)."""
    features: FeatureConfig = FeatureConfig()
    """Task features (the local trainer's)."""
    reward: RewardWeights = RewardWeights()
    """Training reward as weights over the env's scores (default: `routed_reward` alone)."""

    @field_validator("pool_sizes")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if any(s < 2 for s in v):
            raise ValueError(f"every pool size must be at least 2, got {v}")
        return v
