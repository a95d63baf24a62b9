"""The local trainer's configuration: every knob of a run, recorded in its checkpoint."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from router_frontier_rl.rewards import REWARD_NAMES, check_weights


class LocalTrainError(ValueError):
    """A local training run that cannot start or a checkpoint that cannot be read (message names the file)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FeatureConfig(_Strict):
    """How a task becomes a feature vector: only what a router sees before it routes."""

    text: bool = True
    """Add the hashed words of the problem statement (l2-normalised, idf-weighted when `idf`)."""
    hash_bits: int = Field(default=12, ge=4, le=20)
    """Text features are hashed into 2**hash_bits buckets (scikit-learn `HashingVectorizer`)."""
    ngram_max: int = Field(default=1, ge=1, le=3)
    """Word n-grams from 1 up to this length are hashed."""
    idf: bool = True
    """Weight hashed counts by inverse document frequency fitted on the train split only."""
    repo: bool = True
    """Add a one-hot of the task's repository (vocabulary from the train split; unseen repos are all zero)."""
    length: bool = True
    """Add log(1 + characters of the problem statement) / 10: longer issues tend to be harder."""
    difficulty: bool = False
    """Add a one-hot of the SWE-bench Verified human difficulty annotation. Off by default: it is
    annotation metadata a deployed router would not have for a new issue."""


class RewardWeights(_Strict):
    """Training reward = sum of weight x the env's own `RouteScores` field, per sampled completion.

    The default is exactly the env's `routed_reward`; other weights let a run add, e.g., a small cost
    penalty (a negative `cost_if_chosen` weight, per USD) on top of the same env scores.
    """

    routed_reward: float = 1.0
    """Weight of the env's `routed_reward`."""
    chose_oracle: float = 0.0
    """Weight of `chose_oracle` (1 when the route is the task's oracle model)."""
    parsed_valid_route: float = 0.0
    """Weight of `parsed_valid_route` (1 when the completion named a pool model)."""
    resolved_if_chosen: float = 0.0
    """Weight of `resolved_if_chosen` (the routed model's measured resolve rate on the task)."""
    cost_if_chosen: float = 0.0
    """Weight of `cost_if_chosen` (the routed model's measured mean cost on the task, USD); use <= 0."""

    @model_validator(mode="after")
    def _finite(self) -> RewardWeights:
        # The env's own check of its `weights`, so both refuse the same lists (NaN, infinity).
        check_weights([getattr(self, name) for name in REWARD_NAMES])
        return self


class LocalTrainConfig(_Strict):
    """One `router-train local` run: GRPO of a linear softmax router on the CPU."""

    table_path: Path | None = None
    """Oracle table to train on; None means the table bundled with the env (`bundled_table_path()`)."""
    output_dir: Path = Path("runs/local")
    """Where `checkpoint.json`, `metrics.jsonl` and `summary.json` are written (created if missing)."""
    steps: int = Field(default=150, ge=1)
    """Number of GRPO updates."""
    tasks_per_step: int = Field(default=64, ge=1)
    """Train tasks per step (the reference recipe's 64), drawn epoch by epoch without replacement."""
    samples_per_task: int = Field(default=8, ge=2)
    """Routes sampled from the policy per task, the GRPO group (the reference recipe's 8)."""
    lr: float = Field(default=0.05, gt=0)
    """Adam learning rate. Far above the LLM recipe's 5e-7: this policy is a few thousand weights on
    l2-normalised features, where 0.01-0.1 moves the logits by about one unit in tens of steps."""
    betas: tuple[float, float] = (0.9, 0.98)
    """Adam betas (the reference recipe's)."""
    weight_decay: float = Field(default=0.1, ge=0)
    """Decoupled (AdamW) weight decay of the weights, not the bias (the reference recipe's 0.1); 0: off."""
    max_grad_norm: float = Field(default=0.0, ge=0)
    """Clip the global gradient norm to this value; 0 turns clipping off."""
    adv_eps: float = Field(default=1e-6, gt=0)
    """eps in the group-normalised advantage (r - mean) / (std + eps)."""
    seed: int = 0
    """Seed of the policy's sampling and the task order; same seed and inputs -> identical files."""
    eval_fraction: float = Field(default=0.2, gt=0, lt=1)
    """Share of the table held out for evaluation (the env's split)."""
    split_seed: int = 0
    """Seed of the env's stratified train/eval split."""
    upsample: bool = False
    """Upsample rare oracle labels in the train split (the env's `select_tasks(upsample=True)`, as the
    hosted recipe does). Off by default: on the bundled table it teaches this small policy a balanced
    label prior, and held-out routed_reward drops (0.838 vs 0.848 mean over 5 splits)."""
    features: FeatureConfig = FeatureConfig()
    """Task features."""
    reward: RewardWeights = RewardWeights()
    """Training reward as weights over the env's scores (default: `routed_reward` alone)."""
