"""The local trainer's end-of-run summary: its router against the baselines on the held-out split.

Every number comes from the evaluate package's metrics (`router_train.scoring.metrics`), which score
choices with the env's own `score_route`; this module only picks the rows the summary shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self, TypeVar

from router_oracle.frontier import ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_train.scoring import baselines
from router_train.scoring.decisions import from_routes
from router_train.scoring.metrics import RouterMetrics, compute_metrics, single_model_points

ROUTER_NAME = "local-grpo"
"""Row name of the trained router."""
RANDOM_NAME = "random(expected)"
"""Row name of the uniform random router (its exact expectation, from the evaluate baselines)."""

R = TypeVar("R", bound="ScoreRow")


class ScoreRow(FrozenModel):
    """One router on held-out tasks: the metrics both trainers' summaries show (`scoring.metrics`)."""

    name: str
    """The router's row name (its summary's `rows` lists them)."""
    mean_reward: float
    """Mean env `routed_reward`."""
    accuracy: float
    """Share of tasks routed to the oracle's pick (any-pool: the oracle of the task's pool)."""
    resolved_rate: float
    """Mean resolve rate of the chosen models."""
    mean_cost: float
    """Mean cost per task of the chosen models, USD."""

    @classmethod
    def of(cls, name: str, m: RouterMetrics, **extra: Any) -> Self:
        """The row `name`: every field `m` also has is taken from it, the rest from `extra`."""
        return cls(name=name, **m.model_dump(include=set(cls.model_fields) - {"name"}), **extra)


def named_row(rows: Sequence[R], name: str) -> R:
    """The row called `name` (KeyError when none)."""
    for r in rows:
        if r.name == name:
            return r
    raise KeyError(name)


class HeldOutRow(ScoreRow):
    """One router on the held-out tasks: `local-grpo` (the trained router, greedy), `random(expected)`
    (uniform random, exact expectation), `always:<id>`, `oracle`."""

    total_cost: float
    """Total cost over the held-out tasks, USD."""


class HeldOutSummary(FrozenModel):
    """The trained router against the baselines on the held-out split."""

    n_tasks: int
    """Held-out tasks."""
    rows: list[HeldOutRow]
    """The trained router first, then `random(expected)`, each `always:<id>` in pool order, then `oracle`."""
    routes: dict[str, int]
    """How many held-out tasks the trained router sends to each pool model."""
    gap_vs_mix: float | None
    """Router resolved rate minus the best random mix of single models at the router's mean cost
    (positive: above the single-model frontier); None when every single model costs more."""
    beats_random: bool
    """The router's mean `routed_reward` is above the uniform random router's."""

    def row(self, name: str) -> HeldOutRow:
        return named_row(self.rows, name)


def router_metrics(
    tasks: Sequence[TaskRecord], routes: Sequence[str], single_models: Sequence[ModelPoint] | None = None
) -> RouterMetrics:
    """The trained router's metrics for its greedy `routes` (one per task) on `tasks`."""
    return compute_metrics(from_routes(ROUTER_NAME, "checkpoint", tasks, routes), tasks, single_models)


def heldout_summary(
    tasks: Sequence[TaskRecord], pool_ids: Sequence[str], routes: Sequence[str]
) -> HeldOutSummary:
    """Score greedy `routes` (one per task) and the baselines on `tasks`."""
    baseline_routers = [
        baselines.uniform_random_expected(tasks, pool_ids),
        *(baselines.always(m, tasks) for m in pool_ids),
        baselines.oracle(tasks),
    ]
    metrics: dict[str, RouterMetrics] = {
        ROUTER_NAME: router_metrics(tasks, routes, single_model_points(tasks, pool_ids)),
        **{d.name: compute_metrics(d, tasks) for d in baseline_routers},
    }
    rows = [HeldOutRow.of(name, m) for name, m in metrics.items()]
    mine = metrics[ROUTER_NAME]
    return HeldOutSummary(
        n_tasks=len(tasks),
        rows=rows,
        routes={m: sum(r == m for r in routes) for m in pool_ids},
        gap_vs_mix=mine.frontier.gap_vs_mix if mine.frontier is not None else None,
        beats_random=mine.mean_reward > metrics[RANDOM_NAME].mean_reward,
    )


def format_summary(summary: HeldOutSummary) -> str:
    """A plain-text table of the summary, for the terminal."""
    lines = [
        f"held-out tasks: {summary.n_tasks}",
        f"{'router':28s} {'reward':>7s} {'acc':>6s} {'resolved':>8s} {'$/task':>7s} {'total $':>8s}",
    ]
    for r in summary.rows:
        lines.append(
            f"{r.name:28s} {r.mean_reward:7.3f} {r.accuracy:6.3f} {r.resolved_rate:8.3f} "
            f"{r.mean_cost:7.3f} {r.total_cost:8.2f}"
        )
    lines.append("routes: " + ", ".join(f"{m}={n}" for m, n in summary.routes.items()))
    gap = "n/a" if summary.gap_vs_mix is None else f"{summary.gap_vs_mix:+.4f}"
    lines.append(
        f"resolved rate vs best mix of single models at the same cost: {gap}; "
        f"beats random on routed_reward: {'yes' if summary.beats_random else 'no'}"
    )
    return "\n".join(lines)
