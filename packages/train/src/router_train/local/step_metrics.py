"""One line of `metrics.jsonl`: what a GRPO step of a local trainer (fixed-pool or any-pool) saw and did."""

from __future__ import annotations

import numpy as np

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import rounded
from router_train.local.grpo import GRPOStep

STEP_SCORES = ("routed_reward", "chose_oracle", "resolved_if_chosen", "cost_if_chosen")
"""The env scores (by their `RouteScores` name) a step record averages over its samples."""


class StepMetrics(FrozenModel):
    """Metrics of one step; floats rounded to 6 decimals so files compare byte for byte."""

    step: int
    """1-based step number."""
    reward: float
    """Mean training reward over the step's samples (the config's weights over the env's scores)."""
    routed_reward: float
    """Mean env `routed_reward` over the samples."""
    chose_oracle: float
    """Share of samples that routed to the task's oracle model."""
    resolved_if_chosen: float
    """Mean resolve rate of the sampled models."""
    cost_if_chosen: float
    """Mean cost of the sampled models, USD per task."""
    entropy: float
    """Mean entropy (nats) of the policy over the step's tasks, before the update; ln(K) is uniform."""
    groups_with_signal: float
    """Share of task groups whose samples did not all score the same (the others have zero advantage)."""
    grad_norm: float
    """Global l2 norm of the policy gradient, before clipping."""
    route_share: dict[str, float]
    """Model id -> share of the step's samples routed to it."""
    heldout_reward: float | None = None
    """Greedy router's mean `routed_reward` on the held-out split (every steps/10 steps and the last)."""
    heldout_accuracy: float | None = None
    """Greedy router's share of held-out tasks routed to the oracle model."""
    heldout_resolved: float | None = None
    """Greedy router's mean resolve rate on the held-out split."""
    heldout_mean_cost: float | None = None
    """Greedy router's mean cost per held-out task, USD."""

    def to_line(self) -> str:
        return self.model_dump_json(exclude_none=True) + "\n"


def step_record(
    step: int, probs: np.ndarray, done: GRPOStep, route_share: dict[str, float], **heldout: float
) -> StepMetrics:
    """The record of GRPO step `step`: its policy `probs` before the update, what `grpo_step` did, the
    share of samples per model id, and any held-out numbers."""
    rewards = done.scores["reward"]
    entropy = float(-(probs * np.log(np.clip(probs, 1e-12, None))).sum(axis=1).mean())
    return StepMetrics(
        step=step,
        reward=rounded(rewards.mean()),
        **{name: rounded(done.scores[name].mean()) for name in STEP_SCORES},
        entropy=rounded(entropy),
        groups_with_signal=rounded(float((rewards.std(axis=1) > 0).mean())),
        grad_norm=rounded(done.grad_norm),
        route_share={k: rounded(v) for k, v in route_share.items()},
        **heldout,
    )
