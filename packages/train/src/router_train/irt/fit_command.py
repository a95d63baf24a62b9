"""`router-train fit irt`: fit the IRT router on the table's tasks (`--split all` or `train`) and every run
of the bundled candidates' results matrix, restricted to those tasks, and save its checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from router_oracle.infra.atomic_file import publish_directory
from router_oracle.results_matrix import bundled_results_for
from router_oracle.table import Pool, TaskRecord
from router_train.checkpoint_io import save_checkpoint
from router_train.fit_source import FitSource
from router_train.irt.checkpoint import fit_irt_checkpoint


def fit_irt(
    train: Sequence[TaskRecord],
    pool: Pool,
    seed: int,
    source: FitSource,
    checkpoint: Path,
    task_features: str | None = None,
) -> int:
    """Fit on `train` (the tasks `source` names; `task_features`: the regressor's extra inputs) and save as
    `checkpoint`, published whole or not at all; prints what it did."""
    results, matrix = bundled_results_for(pool)
    ckpt = fit_irt_checkpoint(train, matrix, pool, seed, source, results=results, task_features=task_features)
    with publish_directory(checkpoint.parent, owned=[checkpoint.name]) as staged:
        save_checkpoint(ckpt, staged / checkpoint.name)
    fit = ckpt.fit
    print(
        f"irt: fitted on {len(ckpt.train_task_ids)} tasks of {ckpt.table} ({source.split}) x "
        f"{len(fit.run_ids)} runs: k={fit.k}, alpha={fit.alpha}, temperature={fit.temperature}, "
        f"near-tie tolerance={fit.tolerance}"
    )
    if fit.task_features is not None:
        print(
            f"task features: {len(fit.task_features.columns)} columns of {fit.task_features.source} "
            "(route needs --task-features with them)"
        )
    if ckpt.safe_point is not None:
        print(
            f"default point (chosen on the train tasks; route --no-safe-point: native): "
            f"{ckpt.safe_point.describe()}"
        )
    print(f"checkpoint: {checkpoint}")
    return 0
