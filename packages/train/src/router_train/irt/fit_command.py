"""`router-train fit irt`: fit the IRT router on the table's tasks (`--split all` or `train`) and every run
of the bundled candidates' results matrix, restricted to those tasks, and save its checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from router_oracle.infra.atomic_file import publish_directory
from router_oracle.results_matrix import ResultsMatrix, bundled_results_for
from router_oracle.table import Pool, TaskRecord
from router_train.checkpoint_io import save_checkpoint
from router_train.fit_source import FitSource
from router_train.irt.checkpoint import IRT_NAME, IrtCheckpoint, ordered_pool, route_order
from router_train.irt.fitter import IrtFitter
from router_train.irt.router import fit_irt_router, near_tie_scores, pool_probabilities
from router_train.scoring.dial import CHECKPOINT_POINTS, calibrate
from router_train.scoring.safe_point import IRT_MARGINS, checkpoint_safe_point


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


def fit_irt_checkpoint(
    train_tasks: Sequence[TaskRecord],
    matrix: ResultsMatrix,
    pool: Pool,
    seed: int,
    source: FitSource,
    *,
    results: str,
    task_features: str | None = None,
) -> IrtCheckpoint:
    """Fit the IRT router on `train_tasks` (the tasks `source` names; their rows of `matrix`, every run,
    `results` naming it; `task_features`: the regressor's extra inputs, as evaluate's) and its dial table."""
    train = sorted(train_tasks, key=lambda t: t.instance_id)
    router = fit_irt_router(train, matrix, pool, seed=seed, task_features=task_features)
    order = ordered_pool(pool, route_order(router.fit, pool))
    oof = pool_probabilities(router.train_p, router.fit.run_ids, order)  # train rows, instance-id order
    calibration = calibrate(
        near_tie_scores(oof, router.fit.tolerance),
        train,
        order.ids,
        costs=router.pool_costs(order),
        max_points=CHECKPOINT_POINTS,
    )
    # Its default point, chosen on the train tasks as evaluate chooses it per fit (`scoring.safe_point`).
    native = near_tie_scores(
        pool_probabilities(router.train_p, router.fit.run_ids, pool), router.fit.tolerance
    )
    fitter = IrtFitter(matrix, pool, name=IRT_NAME, task_features=task_features)
    safe = checkpoint_safe_point(fitter.fit_scored, IRT_NAME, train, pool.ids, native, seed, IRT_MARGINS)
    return IrtCheckpoint(
        pool=pool,
        **source.model_dump(),
        results=results,
        seed=seed,
        train_task_ids=[t.instance_id for t in train],
        fit=router.fit,
        calibration=calibration,
        safe_point=safe,
    )
