"""The local trainer's configuration: every knob of a run, recorded in its checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from router_frontier_rl.rewards import REWARD_NAMES, check_weights
from router_train.local.grpo import Advantage


class LocalTrainError(ValueError):
    """A local training run that cannot start or a checkpoint that cannot be read (message names the file)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FeatureConfig(_Strict):
    """How a task becomes a feature vector: only what a router sees before it routes."""

    text: Literal["tfidf", "hashed", "off"] = "tfidf"
    """Text features. `tfidf`: the TF-IDF of repository + issue exactly as the TF-IDF baselines compute
    it (`router_train.text_features`: the 5000 most frequent words of at least 2 train tasks, 1 + log
    counts, idf, l2-normalised). `hashed`: hashed words of the issue (the options below). `off`: none."""
    hash_bits: int = Field(default=12, ge=4, le=20)
    """`hashed`: words are hashed into 2**hash_bits buckets (scikit-learn `HashingVectorizer`)."""
    ngram_max: int = Field(default=1, ge=1, le=3)
    """`hashed`: word n-grams from 1 up to this length are hashed."""
    idf: bool = True
    """`hashed`: weight hashed counts by inverse document frequency fitted on the train split only."""
    sublinear_tf: bool = True
    """`hashed`: count a word k times in an issue as 1 + log(k), not k."""
    min_df: int = Field(default=2, ge=1)
    """`hashed`: drop buckets found in fewer train issues than this (a word of one issue only lets the
    policy memorise that task, not generalise)."""
    repo: bool = False
    """Add a one-hot of the task's repository (vocabulary from the train split; unseen repos are all zero).
    Off by default: the `tfidf` text holds the repository's name already."""
    length: bool = False
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
    advantage: Advantage = "mean"
    """Group advantage: `mean` = reward minus the group mean (prime-rl's `grpo`, as the hosted run);
    `std` = that divided by the group std + `adv_eps` (which turns a few cents of cost into +-1)."""
    adv_eps: float = Field(default=1e-6, gt=0)
    """eps in the `std` advantage (r - mean) / (std + eps)."""
    average_tail: float = Field(default=0.0, ge=0, lt=1)
    """Route with the mean of the weights over the last this share of the steps (0: the last step's):
    averaging the iterates of a noisy policy gradient cancels much of its noise."""
    shift_folds: int = Field(default=0, ge=0)
    """Choose the prior shift (see `val_select`) by cross-fitting instead of a held-out part: train this
    many inner policies, each on all train tasks but one fold, score every train task with the policy
    that never saw it, pick tau on all of them, then train the final policy on every train task.
    0: off. Costs (folds + 1) trainings, with a choice made on every train task, not on a fifth."""
    val_fraction: float = Field(default=0.0, ge=0, lt=1)
    """Share of the train tasks (stratified by oracle label) held out inside the run to pick the step
    whose greedy router scores best on them (`val_metric`); 0: no early stopping, the last step wins."""
    val_select: Literal["prior_shift", "step"] = "prior_shift"
    """What the inner validation chooses. `prior_shift`: after training, how far to move the policy back
    from the label-balanced prior (upsampling) towards the train tasks' own label mix, a bias of
    tau x log(label share) with tau in `PRIOR_SHIFTS`: the operating point between "route rare labels
    often" and "route like the majority" that scores best. `step`: the step whose weights score best."""
    val_every: int = Field(default=10, ge=1)
    """Steps between two scores on the inner validation tasks."""
    val_metric: Literal["frontier", "balanced_reward", "reward"] = "frontier"
    """What the inner validation maximises: `reward`, the mean routed_reward; `balanced_reward`, its
    mean over oracle labels (each label weighs the same, as the upsampled training distribution);
    `frontier`, resolved rate minus cost x the slope of the single models' mix frontier measured on
    the fit tasks (a router above that line beats every random mix of single models there)."""
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
