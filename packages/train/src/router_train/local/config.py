"""The local trainer's configuration: every knob of a run, recorded in its checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from router_frontier_rl.rewards import REWARD_NAMES, check_weights
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import MAX_COUNT, Seed

Advantage = Literal["mean", "std"]
"""A GRPO group advantage (`local.grpo.group_advantages`). `mean`: reward minus the group mean (prime-rl's
`grpo` advantage, what the hosted run uses); `std`: that divided by the group's standard deviation + eps
(the GRPO paper's normalisation). Defined here, not in `grpo`: a checkpoint records the configuration, so
routing reads this module, and must load no trainer."""


class LocalTrainError(ValueError):
    """A local training run that cannot start or a checkpoint that cannot be read (message names the file)."""


class FeatureConfig(FrozenModel):
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
    irt: bool = False
    """Add each pool model's predicted resolve probability from the IRT router fitted on the train tasks
    only (out-of-fold on train tasks). `local`: one standardised logit column per pool model
    (`local.irt_features`; pool models must be candidates of the bundled candidates table).
    `local-anypool`: per-model feature columns beside the capability entries (`anypool.irt_inputs`; a
    model never trained with gets its ability from its results on the train tasks). Off by default:
    under cross-validation it has not been shown to help."""
    task_features: str | None = None
    """Add per-task numeric features from a pre-pass: a CSV or JSONL file keyed by instance_id, or
    `bundled-issue` / `bundled-repo` / `bundled` (the bundled judged features: 15 issue-only, 8
    repository, all 23 columns; `router_train.task_features`), standardised on the train tasks only.
    Every task trained on or routed needs a row."""


class RewardWeights(FrozenModel):
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


MAX_SAMPLES = 1024
"""Largest GRPO group (routes sampled per task)."""
MAX_DECAY = 1000.0
"""Largest weight decay."""
MAX_SHIFT_FOLDS = 100
"""Most inner folds of the prior-shift choice (each costs one training)."""


class LocalTrainConfig(FrozenModel):
    """One `router-train local` run: GRPO of a linear softmax router on the CPU."""

    table_path: Path | None = None
    """Oracle table to train on (unset: the table bundled with the env, `bundled_table_path()`)."""
    output_dir: Path = Path("runs/local")
    """Where `checkpoint.json`, `metrics.jsonl` and `summary.json` are written (created if missing)."""
    steps: int = Field(default=600, ge=1, le=MAX_COUNT)
    """GRPO steps (policy updates), 1 to 1,000,000."""
    tasks_per_step: int = Field(default=64, ge=1, le=MAX_COUNT)
    """Train tasks per step (the reference recipe's 64), drawn epoch by epoch without replacement
    (1 to 1,000,000)."""
    samples_per_task: int = Field(default=8, ge=2, le=MAX_SAMPLES)
    """Routes sampled from the policy per task, the GRPO group (the reference recipe's 8; 2 to 1024)."""
    lr: float = Field(default=0.05, gt=0, le=1, allow_inf_nan=False)
    """Adam learning rate, in (0, 1]. Far above the LLM recipe's 5e-7: this policy is a few thousand
    weights on l2-normalised features, where 0.01-0.1 moves the logits by about one unit in tens of steps."""
    betas: tuple[float, float] = (0.9, 0.98)
    """Adam betas (the reference recipe's)."""
    weight_decay: float = Field(default=2.0, ge=0, le=MAX_DECAY, allow_inf_nan=False)
    """Decoupled (AdamW) weight decay of the weights, not the bias; 0: off; at most 1000. Far above the
    LLM recipe's 0.1: with lr 0.05 it caps each weight near lr / (lr x decay) = 0.5, so no single word
    can memorise a task (with upsampling, the few rare-label tasks repeat a dozen times each)."""
    max_grad_norm: float = Field(default=0.0, ge=0, le=MAX_COUNT, allow_inf_nan=False)
    """Clip the global gradient norm to this value; 0 turns clipping off (at most 1,000,000)."""
    advantage: Advantage = "mean"
    """Group advantage: `mean` = reward minus the group mean (prime-rl's `grpo`, as the hosted run);
    `std` = that divided by the group std + `adv_eps` (which turns a few cents of cost into +-1)."""
    adv_eps: float = Field(default=1e-6, gt=0, le=1, allow_inf_nan=False)
    """eps in the `std` advantage (r - mean) / (std + eps), in (0, 1]."""
    average_tail: float = Field(default=0.5, ge=0, lt=1, allow_inf_nan=False)
    """Route with the mean of the weights over the last this share of the steps (0: the last step's):
    averaging the iterates of a noisy policy gradient cancels much of its noise."""
    shift_folds: int = Field(default=5, ge=0, le=MAX_SHIFT_FOLDS)
    """Upsampling trains a policy on a balanced label mix, which routes rare labels far more often than
    their share; how much of that suits a pool depends on its costs. With k > 0 shift folds the run
    trains k inner policies, each on all train tasks but one fold, scores every train task with the one
    that never saw it, and picks tau (`trainer.PRIOR_SHIFTS`) for a bias of tau x log(label share) on
    those scores (`trainer.pick_prior_shift`); the final policy, trained on every train task, gets that
    bias. Costs k + 1 trainings. 0: no shift, one training; at most 100."""
    seed: Seed = 0
    """Seed of the policy's sampling and the task order; same seed and inputs -> identical files
    (0 to 2**32 - 1)."""
    eval_fraction: float = Field(default=0.2, gt=0, lt=1, allow_inf_nan=False)
    """Share of the table held out for evaluation (the env's split), in (0, 1)."""
    split_seed: Seed = 0
    """Seed of the env's stratified train/eval split (0 to 2**32 - 1)."""
    upsample: bool = True
    """Repeat train tasks of rare oracle labels until every label is as common as the most common (the
    env's `upsampled`, as the hosted recipe does). Without it the exact reward is best served by always
    the majority label (85% of the bundled tasks), the policy collapses onto it within a few steps and
    GRPO's groups stop carrying signal; `shift_folds` then decides how much of the balance to undo."""
    features: FeatureConfig = FeatureConfig()
    """Task features."""
    reward: RewardWeights = RewardWeights()
    """Training reward as weights over the env's scores, in the order the default lists them (the
    default is `routed_reward` alone)."""
