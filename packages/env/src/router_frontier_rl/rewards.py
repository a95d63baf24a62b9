"""The environment's rewards and metrics, each defined once and read from the oracle table alone."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from router_frontier_rl.route_parser import parse_route
from router_oracle.table import TaskRecord

REWARD_NAMES = ("routed_reward", "chose_oracle", "parsed_valid_route", "resolved_if_chosen", "cost_if_chosen")
"""The five signals, in the order of the `weights` list."""

DEFAULT_WEIGHTS = (1.0, 0.0, 0.0, 0.0, 0.0)
"""Only `routed_reward` counts towards the reward by default; the other four are reported."""


MAX_WEIGHT = 1e6
"""Largest magnitude of a reward weight (and of the env's `exploration_cost`): far beyond any useful
weighting, and small enough that a weighted sum of the signals can never overflow to infinity (a weight
of 1e308 did, turning rewards into inf/NaN)."""


def check_weights(weights: Sequence[float]) -> tuple[float, ...]:
    """The one check of reward weights (the env's `weights`, `router-train local`'s `--reward-weights`):
    one finite number per name of `REWARD_NAMES`, of magnitude at most MAX_WEIGHT. A NaN, infinite or
    overflowing weight makes rewards NaN, which a trainer would follow silently; raises ValueError
    naming the first bad weight."""
    if len(weights) != len(REWARD_NAMES):
        raise ValueError(
            f"weights must be {len(REWARD_NAMES)} numbers for {list(REWARD_NAMES)}, got {len(weights)}"
        )
    for name, w in zip(REWARD_NAMES, weights, strict=True):
        if not math.isfinite(w):
            raise ValueError(f"weights must be finite numbers: the weight of {name} is {w}")
        if abs(w) > MAX_WEIGHT:
            raise ValueError(f"weights must be within ±{MAX_WEIGHT:g}: the weight of {name} is {w:g}")
    return tuple(float(w) for w in weights)


class RouteScores(BaseModel):
    """What one route earns on one task."""

    model_config = ConfigDict(frozen=True)

    routed_reward: float
    """1.0 for the task's oracle model, 0.0 for another valid model, -1.0 for no valid route."""
    chose_oracle: float
    """1.0 when the route is the oracle model, else 0.0."""
    parsed_valid_route: float
    """1.0 when the reply named exactly one valid model id, else 0.0."""
    resolved_if_chosen: float
    """The chosen model's resolve rate on this task (0.0 without a valid route)."""
    cost_if_chosen: float
    """The chosen model's mean cost on this task in USD (0.0 without a valid route)."""

    def weighted(self, weights: Sequence[float] = DEFAULT_WEIGHTS) -> float:
        """Σ score × weight over `REWARD_NAMES`, as verifiers sums a trace's rewards."""
        return sum(getattr(self, name) * w for name, w in zip(REWARD_NAMES, weights, strict=True))


NO_ROUTE = RouteScores(
    routed_reward=-1.0, chose_oracle=0.0, parsed_valid_route=0.0, resolved_if_chosen=0.0, cost_if_chosen=0.0
)


def score_route(task: TaskRecord, route: str | None) -> RouteScores:
    """Scores of routing `task` to model `route` (None: no valid route)."""
    if route is None:
        return NO_ROUTE
    outcome = task.per_model.get(route)
    if outcome is None:
        raise ValueError(f"route {route!r} is not a pool model of task {task.instance_id}")
    oracle = route == task.oracle
    return RouteScores(
        routed_reward=1.0 if oracle else 0.0,
        chose_oracle=float(oracle),
        parsed_valid_route=1.0,
        resolved_if_chosen=outcome.resolve_rate,
        cost_if_chosen=outcome.cost,
    )


def score_completion(task: TaskRecord, text: str, valid_ids: Sequence[str]) -> RouteScores:
    """Scores of a router reply: `score_route(task, parse_route(text, valid_ids))`."""
    return score_route(task, parse_route(text, valid_ids))
