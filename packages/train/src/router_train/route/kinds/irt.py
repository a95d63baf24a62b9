"""The `irt` kind: a `router-train fit irt` checkpoint (`irt.checkpoint.IrtCheckpoint`), an item-response
model over one fixed pool: per task, each model's predicted resolve probability from the task's text.

Its route is the oracle's rule on those probabilities (the best, near-ties to the cheapest): the scores are
the probabilities capped at the near-tie level (`irt.router.near_tie_scores`), columns by ascending
predicted cost. The dial is lambda: `--dial L` routes to argmax(score - L x predicted mean cost)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from router_oracle.infra.file_hash import sha256_file
from router_oracle.results_matrix import bundled_results_for, matrix_of
from router_oracle.task_input import TaskInput
from router_train.irt.checkpoint import (
    IrtCheckpoint,
    ordered_pool,
    predicted_probabilities,
    read_irt,
)
from router_train.irt.fitter import IRT_ROUTER_NAME, IrtFitter
from router_train.irt.refit import RefitReport, refit_checkpoint
from router_train.irt.router import FittedIrtRouter, IrtConfig, check_covered, near_tie_scores
from router_train.irt.shared_fit import fit_partition
from router_train.route.deploy import Scorer
from router_train.route.kinds.kind import (
    Fit,
    FitRequest,
    Judged,
    Loaded,
    ModelEvidence,
    PartitionFit,
    PartitionRequest,
    PoolRoutes,
    RefitRequest,
    Refitted,
    RouterKind,
    check_fixed,
    kind_option,
    refuse_candidates,
    routing_task_features,
)
from router_train.route.operating_point import stored_point
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import IRT_MARGINS

KIND_NAME = "irt"
"""This kind's name: its messages' word and its key of a request's `KindOptions`."""


class IrtRouter(Scorer):
    """A saved IRT router: scores are the predicted resolve probabilities capped at the near-tie level,
    columns the calibration's (the pool by ascending predicted cost)."""

    def __init__(self, ckpt: IrtCheckpoint, name: str, task_features: str | None = None) -> None:
        self.ckpt = ckpt
        self.name = name
        self.pool = list(ckpt.calibration.model_ids)
        self.model = FittedIrtRouter.from_fit(ckpt.fit, task_features)
        self.ordered = ordered_pool(ckpt.pool, self.pool)

    def probabilities(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """(tasks, pool) predicted resolve probabilities, in `pool` order."""
        return predicted_probabilities(self.model, tasks, self.ordered)

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return near_tie_scores(self.probabilities(tasks), self.ckpt.fit.tolerance)

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return self.scores(tasks)


def load(path: Path, spec: CheckpointSpec) -> Loaded:
    """The saved IRT router; its dial table is the stored one."""
    refuse_candidates(spec, path, "irt")
    ckpt = read_irt(path)
    check_fixed(spec, path, ckpt.pool.ids, ckpt.table, ckpt.table_sha256)
    features = routing_task_features(spec, path, ckpt.fit.task_features)
    return Loaded(IrtRouter(ckpt, f"irt:{path}", features), lambda: ckpt.calibration, ckpt.safe_point)


def judge(path: Path, pool: Sequence[str]) -> Judged:
    """The saved IRT router over its own pool (evaluate checks its routes are the table's models)."""
    ckpt = read_irt(path)
    return Judged(deployed(ckpt, f"irt:{path}"), list(ckpt.train_task_ids))


def deployed(ckpt: IrtCheckpoint, name: str) -> ScoringRouter:
    """The saved IRT router at the point its checkpoint stores (what `route` deploys without a budget or
    dial; replay's static prior)."""
    scorer = IrtRouter(ckpt, name)
    return ScoringRouter(scorer, stored_point(scorer, ckpt.safe_point, ckpt.calibration))


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
    return Refitted(refitted, report, "\n".join(lines) + "\n", evidence)


KIND = RouterKind(
    name=KIND_NAME,
    checkpoint=IrtCheckpoint,
    load=load,
    judge=judge,
    fit=Fit(
        "router-train fit irt",
        fitters,
        partition=PartitionFit(IRT_ROUTER_NAME, partition),
        margins=IRT_MARGINS,
    ),
    refit=refit,
)
