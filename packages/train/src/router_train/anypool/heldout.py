"""The any-pool run's end-of-run check: its router against simple per-pool rules on held-out episodes.

Episodes are the env's eval split in any-pool mode (`any_pool.any_pool_episodes`): held-out tasks, each
with its own pool holding at least one held-out model. Every number comes from the evaluate package's
metrics (`compute_metrics`, which scores choices with the env's `score_route`) on each task's row under
its own pool. This is a sanity check of one split, not the cross-validated evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence

from router_frontier_rl.any_pool import PoolEpisode
from router_frontier_rl.capabilities import CapabilitySummary
from router_oracle.infra.frozen_model import FrozenModel
from router_train.local.heldout import ScoreRow, named_row
from router_train.scoring.decisions import from_distributions, from_routes
from router_train.scoring.metrics import compute_metrics

ROUTER_NAME = "local-anypool"
"""Row name of the trained router."""


class AnyPoolRow(ScoreRow):
    """One router on the held-out episodes: `local-anypool` (the trained router, greedy), `random(expected)`
    (uniform over each pool), `cheapest-in-pool` and `best-rate-in-pool` (by the pool's train summary),
    `oracle`."""

    held_out_pick_share: float
    """Share of tasks routed to a held-out model."""
    held_out_oracle_accuracy: float | None
    """Accuracy on the tasks whose oracle is a held-out model (None: there are none)."""


class AnyPoolSummary(FrozenModel):
    """The trained router against the per-pool rules on held-out tasks with held-out models."""

    n_tasks: int
    """Held-out episodes (tasks, each with its own pool)."""
    pool_size: int
    """Models per evaluation pool."""
    held_out_models: list[str]
    """Models never in a training pool."""
    held_out_oracle_share: float
    """Share of episodes whose oracle is a held-out model."""
    rows: list[AnyPoolRow]
    """The trained router first, then random, cheapest-in-pool, best-rate-in-pool, oracle."""

    def row(self, name: str) -> AnyPoolRow:
        return named_row(self.rows, name)


def cheapest_in_pool(summary: CapabilitySummary) -> str:
    """The pool model with the lowest mean cost on the train tasks (ties: earlier in the pool)."""
    return min(summary.models, key=lambda m: m.mean_cost).id


def best_rate_in_pool(summary: CapabilitySummary) -> str:
    """The pool model with the best train resolve rate (ties: the cheaper, then earlier in the pool)."""
    return min(summary.models, key=lambda m: (-m.resolve_rate, m.mean_cost)).id


def anypool_summary(
    episodes: Sequence[PoolEpisode], routes: Sequence[str], held_out_models: Sequence[str]
) -> AnyPoolSummary:
    """Score greedy `routes` (one per episode) and the per-pool rules on the episodes."""
    tasks = [e.record for e in episodes]
    held = set(held_out_models)
    labels = {
        ROUTER_NAME: list(routes),
        "cheapest-in-pool": [cheapest_in_pool(e.summary) for e in episodes],
        "best-rate-in-pool": [best_rate_in_pool(e.summary) for e in episodes],
        "oracle": [t.oracle for t in tasks],
    }
    decisions = {name: from_routes(name, "baseline", tasks, picks) for name, picks in labels.items()}
    decisions["random(expected)"] = from_distributions(
        "random(expected)",
        "baseline",
        {e.record.instance_id: dict.fromkeys(e.pool.ids, 1.0) for e in episodes},
    )
    order = [ROUTER_NAME, "random(expected)", "cheapest-in-pool", "best-rate-in-pool", "oracle"]
    held_tasks = [t for t in tasks if t.oracle in held]
    rows = []
    for name in order:
        m = compute_metrics(decisions[name], tasks)
        d = decisions[name].choices
        on_held = compute_metrics(decisions[name], held_tasks).accuracy if held_tasks else None
        rows.append(
            AnyPoolRow.of(
                name,
                m,
                held_out_pick_share=round(
                    sum(w for t in tasks for label, w in d[t.instance_id].items() if label in held)
                    / len(tasks),
                    6,
                ),
                held_out_oracle_accuracy=on_held,
            )
        )
    return AnyPoolSummary(
        n_tasks=len(tasks),
        pool_size=len(episodes[0].pool.ids) if episodes else 0,
        held_out_models=list(held_out_models),
        held_out_oracle_share=round(len(held_tasks) / max(len(tasks), 1), 6),
        rows=rows,
    )


def format_anypool_summary(summary: AnyPoolSummary) -> str:
    """A plain-text table of the summary, for the terminal."""
    held = ", ".join(summary.held_out_models) or "none"
    lines = [
        f"held-out tasks: {summary.n_tasks}, each with its own pool of {summary.pool_size} models "
        f"holding a held-out model ({held}); the oracle is a held-out model on "
        f"{summary.held_out_oracle_share:.1%} of them",
        f"{'router':20s} {'reward':>7s} {'acc':>6s} {'resolved':>8s} {'$/task':>7s} "
        f"{'->held-out':>10s} {'acc|held-out oracle':>19s}",
    ]
    for r in summary.rows:
        on_held = "n/a" if r.held_out_oracle_accuracy is None else f"{r.held_out_oracle_accuracy:.3f}"
        lines.append(
            f"{r.name:20s} {r.mean_reward:7.3f} {r.accuracy:6.3f} {r.resolved_rate:8.3f} {r.mean_cost:7.3f} "
            f"{r.held_out_pick_share:10.3f} {on_held:>19s}"
        )
    return "\n".join(lines)
