"""What the pool-agnostic router knows about a model: its capability-summary entries, as numbers.

Every number comes from the pool's `CapabilitySummary` (the env's `capabilities.summarize` on train
tasks), the same table the LLM router reads in its system prompt, so the policy never sees a model id:
a model it never trained with is described exactly like one it did. Entries that depend on the task
are those of the task's repository (its row in the summary's per-repository table, or the model's
overall numbers when the summary has no row for it).
"""

from __future__ import annotations

import math

import numpy as np

from router_frontier_rl.capabilities import CapabilitySummary
from router_oracle.infra.frozen_model import FrozenModel

MODEL_FEATURES: tuple[str, ...] = (
    "resolve_rate",
    "log_relative_cost",
    "oracle_share",
    "sole_solver",
    "repo_resolve_rate",
    "repo_oracle_share",
    "resolve_gap",
    "repo_resolve_gap",
    "cheapest",
)
"""Names of the model features, in column order (`ModelFeatures` documents each)."""


class ModelFeatures(FrozenModel):
    """One model in one pool for one task's repository (the meaning of each `MODEL_FEATURES` column)."""

    resolve_rate: float
    """The model's resolve rate on the train tasks."""
    log_relative_cost: float
    """ln of its mean cost over the pool's cheapest model's (0 for the cheapest)."""
    oracle_share: float
    """Share of train tasks on which it is the pool's oracle."""
    sole_solver: float
    """Share of train tasks it alone in the pool resolved."""
    repo_resolve_rate: float
    """Its resolve rate on train tasks of the task's repository (overall rate without a row)."""
    repo_oracle_share: float
    """Its oracle share on train tasks of that repository (overall share without a row)."""
    resolve_gap: float
    """resolve_rate minus the pool's best (0 for the best, negative otherwise)."""
    repo_resolve_gap: float
    """repo_resolve_rate minus the pool's best for that repository."""
    cheapest: float
    """1.0 for the pool's cheapest model, else 0.0."""

    def vector(self) -> list[float]:
        return [float(getattr(self, name)) for name in MODEL_FEATURES]


def pool_features(summary: CapabilitySummary, repo: str) -> list[ModelFeatures]:
    """One entry per pool model (in the summary's pool order) for a task of `repo`."""
    group = next((g for g in summary.by_repo if g.group == repo), None)
    rates = [m.resolve_rate for m in summary.models]
    repo_rates = [group.resolve_rate[m.id] if group else m.resolve_rate for m in summary.models]
    return [
        ModelFeatures(
            resolve_rate=m.resolve_rate,
            log_relative_cost=math.log(max(m.relative_cost, 1.0)),
            oracle_share=m.oracle_share,
            sole_solver=m.sole_solver,
            repo_resolve_rate=repo_rate,
            repo_oracle_share=group.oracle_share[m.id] if group else m.oracle_share,
            resolve_gap=m.resolve_rate - max(rates),
            repo_resolve_gap=repo_rate - max(repo_rates),
            cheapest=1.0 if m.relative_cost <= 1.0 else 0.0,
        )
        for m, repo_rate in zip(summary.models, repo_rates, strict=True)
    ]


class PoolFeatureCache:
    """`pool_features` as arrays (models x MODEL_FEATURES), computed once per repository of a pool."""

    def __init__(self, summary: CapabilitySummary) -> None:
        self.summary = summary
        self._by_repo: dict[str, np.ndarray] = {}

    def matrix(self, repo: str) -> np.ndarray:
        cached = self._by_repo.get(repo)
        if cached is None:
            cached = np.asarray([f.vector() for f in pool_features(self.summary, repo)], dtype=np.float64)
            self._by_repo[repo] = cached
        return cached
