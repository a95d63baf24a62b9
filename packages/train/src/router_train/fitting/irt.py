"""The `irt` kind's fitting side (`fitting.FITS`): `router-train fit irt` fits it; evaluate fits it with
`--irt`, evaluate-anypool once per task partition for every pool; `feedback --refit` refits it to serve's
logged outcomes. Its routing side is `route.kinds.irt`."""

from __future__ import annotations

import numpy as np

from router_oracle.infra.file_hash import sha256_file
from router_oracle.results_matrix import bundled_results_for, matrix_of
from router_train.fitting.fit import (
    Fit,
    FitRequest,
    ModelEvidence,
    PartitionFit,
    PartitionRequest,
    PoolRoutes,
    RefitRequest,
    Refitted,
    kind_option,
)
from router_train.irt.checkpoint import IrtCheckpoint, read_irt, route_order
from router_train.irt.fitter import IRT_ROUTER_NAME, IrtFitter
from router_train.irt.refit import RefitReport, refit_checkpoint
from router_train.irt.router import IrtConfig, check_covered
from router_train.irt.shared_fit import fit_partition
from router_train.route.kinds.irt import KIND, KIND_NAME, deployed
from router_train.route.spec import RouteError
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import IRT_MARGINS


def fitters(request: FitRequest) -> list[Fitter]:
    """With `--irt`: the IRT router on the results of the bundled candidates table that holds the pool's runs
    (`bundled_results_for`), which must cover every routed task; its task regressor reads
    `--task-features` beside the text when given."""
    if not kind_option(request.options, KIND_NAME, bool, False):
        return []
    _, matrix = bundled_results_for(request.table.pool)
    check_covered(matrix, request.table.pool, request.tasks)
    return [IrtFitter(matrix, request.table.pool, task_features=request.task_features)]


def partition(request: PartitionRequest) -> list[PoolRoutes]:
    """evaluate-anypool's `irt` row in one task partition: one fit on its train tasks' rows of every
    candidate run, a held-out group's included (their cold start: train tasks only), routing every pool
    with that pool's own near-tie tolerance (`irt.shared_fit`)."""
    matrix = matrix_of(request.index.candidates, origin=request.index.label)
    return fit_partition(
        request.index,
        matrix,
        request.train_ids,
        request.test_ids,
        request.pools,
        config=kind_option(request.options, KIND_NAME, IrtConfig, IrtConfig()),
        seed=request.seed,
        label=request.label,
    )


def refit(request: RefitRequest) -> Refitted:
    """`feedback --refit`: each pool model's ability shift and mean cost refitted to the logged outcomes
    (`irt.refit`); a checkpoint trained on task features is refused (the log keeps the text alone)."""
    path = request.checkpoint
    ckpt = read_irt(path)
    if ckpt.fit.task_features is not None:
        raise RouteError(
            f"{path}: trained on task features ({ckpt.fit.task_features.source}); --refit takes an IRT "
            "checkpoint fitted on the text alone"
        )
    col = {m: j for j, m in enumerate(ckpt.pool.ids)}
    unknown = sorted({m for m in request.served if m not in col})
    if unknown:
        raise RouteError(
            f"{request.log}: served {unknown[0]!r}, not a model of {path}'s pool ({', '.join(ckpt.pool.ids)})"
        )
    served = np.asarray([col[m] for m in request.served], dtype=np.int64)
    refitted, models = refit_checkpoint(ckpt, request.tasks, served, request.resolved, request.cost)
    report = RefitReport(
        prior=str(path), prior_sha256=sha256_file(path), log=request.log, tasks=len(served), models=models
    )
    lines = [
        f"refit of {path} on {len(served)} logged outcomes (IRT: per-model ability shift, mean cost):",
        f"{'model':<28} {'outcomes':>8} {'observed':>8} {'public P':>8} {'refit P':>8} {'shift':>7} "
        f"{'cost':>15}",
    ]
    for m in models:
        obs = f"{m.observed_resolved:.3f}" if m.observed_resolved is not None else "-"
        lines.append(
            f"{m.model:<28} {m.outcomes:>8} {obs:>8} {m.public_predicted:>8.3f} {m.refit_predicted:>8.3f} "
            f"{m.shift:>+7.3f} {m.public_cost:>6.4f}->{m.refit_cost:.4f}"
        )
    evidence = [
        ModelEvidence(model=m.model, outcomes=m.outcomes, resolved=m.resolved, prior=m.prior_served)
        for m in models
    ]
    cheapest = route_order(refitted.fit, refitted.pool)[0]
    native = _native(refitted, request)
    return Refitted(refitted, report, "\n".join(lines) + "\n", evidence, native, cheapest)


def _native(refitted: IrtCheckpoint, request: RefitRequest) -> list[str]:
    """The refitted router's native route of each logged task (its point unset: no default, no dial)."""
    router = deployed(refitted.model_copy(update={"safe_point": None}), "refit")
    return [d.model or "" for d in router.route_many(list(request.tasks), explain=False)]


FIT = Fit(
    KIND,
    "router-train fit irt",
    fitters,
    partition=PartitionFit(IRT_ROUTER_NAME, partition),
    margins=IRT_MARGINS,
    refit=refit,
)
"""The `irt` kind's fitting entry."""
