"""One evaluation: every router's metrics and gap vs the mix on one set of tasks, against the single models
measured on the same tasks (`router-train evaluate`'s tables; its cross-harness judging reuses it)."""

from __future__ import annotations

from collections.abc import Sequence

from router_oracle.analysis.noise import NoiseEstimate
from router_oracle.frontier import frontier_vertices
from router_oracle.table import TaskRecord
from router_train.evaluate.report import Evaluation, RouterRow
from router_train.scoring.decisions import Decisions
from router_train.scoring.metrics import (
    compute_metrics,
    oracle_distribution,
    single_model_points,
    task_resample,
)
from router_train.scoring.vs_mix import gap_in_points


def build_evaluation(
    name: str,
    tasks: list[TaskRecord],
    pool: list[str],
    seed: int,
    routers: Sequence[tuple[Decisions, list[Decisions], bool]],
    n_train_tasks: int | None,
    oracle_noise: NoiseEstimate,
) -> Evaluation:
    """Every router on `tasks`, against the single models measured on the same tasks.

    `routers`: (pooled decisions, decisions per fold seed (empty outside cross-validation), in-sample);
    `oracle_noise`: the rollout-noise estimate on `tasks`."""
    singles = single_model_points(tasks, pool)
    resample = task_resample(tasks, pool, seed)
    rows = []
    for d, repeats, in_sample in routers:
        m = compute_metrics(d, tasks, singles, resample)
        assert m.frontier is not None
        per_seed = [compute_metrics(r, tasks, singles).frontier for r in repeats]
        gap = gap_in_points(
            m.frontier.gap_vs_mix, m.frontier.gap_ci, [f.gap_vs_mix if f else None for f in per_seed]
        )
        rows.append(
            RouterRow(
                name=d.name,
                kind=d.kind,
                source=d.source,
                n_tasks=len(tasks),
                in_sample=in_sample,
                gap_vs_mix=gap,
                metrics=m,
                recorded=d.recorded,
            )
        )
    return Evaluation(
        name=name,
        n_tasks=len(tasks),
        n_train_tasks=n_train_tasks,
        oracle_distribution={k: round(v, 6) for k, v in oracle_distribution(tasks).items()},
        solvable_tasks=sum(not t.all_failed for t in tasks),
        single_models=singles,
        frontier=frontier_vertices(singles),
        routers=rows,
        oracle_noise=oracle_noise,
    )
