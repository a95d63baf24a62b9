"""Refit what a router's own traffic can tell: each pool model's resolve ability and mean cost.

The traffic shows one model's outcome per task (the one that served it): a sparse tasks x models matrix,
too thin to refit an IRT model's task parameters, but enough to move each model's ability. The IRT
checkpoint's public fit is the start and the prior: every task's logit for each run, `a_i . theta_j + c_j
- b_i`, comes from the task's text as before, and a per-model shift `d_m` is added to its runs'
intercepts `c_j`, fitted by penalised maximum likelihood on the outcomes of the tasks `m` served (a ridge
`RIDGE x d_m^2` pulls it back to the public fit, so a model the traffic barely saw keeps its public
ability). The cost of each model is the traffic's mean, shrunk toward the public cost scaled by how
much dearer the traffic is overall (`COST_PRIOR_TASKS` pseudo-tasks). Both `feedback --refit` and
`replay` run these functions, on a checkpoint and on arrays respectively; `feedback --refit` reaches them
through the IRT kind's `refit` hook (`fitting.irt.refit`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.task_input import TaskInput
from router_train.irt.checkpoint import IrtCheckpoint, ordered_pool, predicted_probabilities, route_order
from router_train.irt.router import FittedIrtRouter, IrtFit, near_tie_scores
from router_train.scoring.dial import CHECKPOINT_POINTS, calibrate

RIDGE = 1.0
"""Penalty per squared logit of a model's ability shift (about a couple of tasks' worth of evidence)."""
SHIFT_BOUND = 8.0
"""A shift is searched in [-SHIFT_BOUND, SHIFT_BOUND] logits."""
COST_PRIOR_TASKS = 5.0
"""A model's refit mean cost weighs its public cost (scaled to the traffic) as this many tasks."""


def model_probabilities(
    z: np.ndarray, shifts: np.ndarray, model_runs: Sequence[np.ndarray], temperature: float
) -> np.ndarray:
    """(tasks, models) resolve probabilities: per model the mean over its runs of
    sigmoid((logit + shift) / temperature) (`z`: (tasks, runs) logits)."""
    return np.stack(
        [expit((z[:, runs] + shifts[m]) / temperature).mean(axis=1) for m, runs in enumerate(model_runs)],
        axis=1,
    )


def fit_shifts(
    z: np.ndarray,
    served: np.ndarray,
    resolved: np.ndarray,
    model_runs: Sequence[np.ndarray],
    temperature: float,
) -> np.ndarray:
    """Each model's ability shift on the logged tasks (`z` their (tasks, runs) public logits, `served`
    the model column each was served by, `resolved` its outcome): 0 for a model that served none."""
    shifts = np.zeros(len(model_runs))
    for m, runs in enumerate(model_runs):
        mine = served == m
        if not mine.any():
            continue
        zm, y = z[mine][:, runs], resolved[mine]

        def loss(d: float, zm: np.ndarray = zm, y: np.ndarray = y) -> float:
            p = np.clip(expit((zm + d) / temperature).mean(axis=1), 1e-12, 1 - 1e-12)
            return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum() + RIDGE * d * d)

        res = minimize_scalar(
            loss, bounds=(-SHIFT_BOUND, SHIFT_BOUND), method="bounded", options={"xatol": 1e-7}
        )
        shifts[m] = float(res.x)
    return shifts


def fit_costs(served: np.ndarray, cost: np.ndarray, public: np.ndarray) -> np.ndarray:
    """Each model's mean cost per task on the traffic (`cost` NaN: unpriced, left out), shrunk toward its
    public cost times the traffic's overall ratio of observed to public cost of the served models."""
    priced = ~np.isnan(cost)
    if not priced.any():
        return public.copy()
    expected = public[served[priced]].sum()
    scale = float(cost[priced].sum() / expected) if expected > 0 else 1.0
    out = np.empty(len(public))
    for m in range(len(public)):
        mine = priced & (served == m)
        out[m] = (cost[mine].sum() + COST_PRIOR_TASKS * scale * public[m]) / (mine.sum() + COST_PRIOR_TASKS)
    return out


class ModelRefit(FrozenModel):
    """What the traffic changed of one pool model."""

    model: str
    """The pool model id."""
    outcomes: int
    """Logged tasks it served with an outcome."""
    observed_resolved: float | None
    """Their resolved rate (None: none)."""
    resolved: int = 0
    """Of its logged tasks, the resolved ones."""
    prior_served: float | None = None
    """Its mean predicted resolve probability before the refit on the tasks it served (what its
    `observed_resolved` is tested against; None: it served none)."""
    public_predicted: float
    """Its mean predicted resolve probability on the logged tasks before the refit."""
    refit_predicted: float
    """The same after the refit."""
    shift: float
    """The logit added to its runs' intercepts."""
    public_cost: float
    """Its mean cost per task before (the public fit's), USD."""
    refit_cost: float
    """After (the traffic's, shrunk), USD."""


class RefitReport(FrozenModel):
    """What `feedback --refit` wrote, beside the checkpoint (`refit.json`)."""

    prior: str
    """The checkpoint refitted (path as given)."""
    prior_sha256: str
    """Its sha256."""
    log: str
    """The decision log or store read."""
    tasks: int
    """Logged tasks with an outcome the refit read."""
    models: list[ModelRefit]
    """Per pool model."""


def refit_arrays(
    fit: IrtFit, model_runs: Sequence[np.ndarray], shifts: np.ndarray, costs: np.ndarray, public: np.ndarray
) -> IrtFit:
    """`fit` with each model's shift added to its runs' intercepts and its runs' costs scaled to `costs`."""
    c = np.asarray(fit.c, dtype=float).copy()
    run_costs = np.asarray(fit.run_costs, dtype=float).copy()
    for m, runs in enumerate(model_runs):
        c[runs] += shifts[m]
        run_costs[runs] = run_costs[runs] * (costs[m] / public[m]) if public[m] > 0 else costs[m]
    data = fit.model_dump()
    data.update(c=c.tolist(), run_costs=[max(0.0, float(x)) for x in run_costs])
    return IrtFit.model_validate(data)


def model_run_columns(fit: IrtFit, models: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Per pool model (its runs), the columns of those runs in the fit."""
    col = {r: j for j, r in enumerate(fit.run_ids)}
    return [np.asarray([col[r] for r in runs], dtype=np.int64) for runs in models]


def refit_checkpoint(
    ckpt: IrtCheckpoint,
    tasks: Sequence[TaskInput],
    served: np.ndarray,
    resolved: np.ndarray,
    cost: np.ndarray,
) -> tuple[IrtCheckpoint, list[ModelRefit]]:
    """The IRT checkpoint refitted to the logged `tasks` (each served by pool column `served`, with its
    outcome and cost, NaN unpriced). Its dial table is recomputed on those tasks with the refit's own
    predictions (their counterfactual outcomes are unknown). Its `safe_point` is still the prior's here:
    `feedback` replaces it with the point chosen on the traffic (`offpolicy.refit_point`)."""
    router = FittedIrtRouter.from_fit(ckpt.fit)
    pool = ckpt.pool
    runs = model_run_columns(ckpt.fit, [m.runs for m in pool.models])
    z = router.predictor.logits(tasks)
    tau = ckpt.fit.temperature
    shifts = fit_shifts(z, served, resolved, runs, tau)
    public = router.pool_costs(pool)
    costs = fit_costs(served, cost, public)
    fit = refit_arrays(ckpt.fit, runs, shifts, costs, public)
    refit = FittedIrtRouter.from_fit(fit)
    order = route_order(fit, pool)
    ordered = ordered_pool(pool, order)
    p = predicted_probabilities(refit, tasks, ordered)
    price = refit.pool_costs(ordered)
    calibration = calibrate(
        near_tie_scores(p, fit.tolerance),
        tasks,
        order,
        costs=price,
        max_points=CHECKPOINT_POINTS,
        outcomes=(p, np.broadcast_to(price, p.shape)),
    )
    before = model_probabilities(z, np.zeros(len(runs)), runs, tau)
    after = model_probabilities(z, shifts, runs, tau)
    report = []
    for m, model in enumerate(pool.ids):
        mine = served == m
        report.append(
            ModelRefit(
                model=model,
                outcomes=int(mine.sum()),
                observed_resolved=float(resolved[mine].mean()) if mine.any() else None,
                resolved=int(resolved[mine].sum()),
                prior_served=float(before[mine, m].mean()) if mine.any() else None,
                public_predicted=float(before[:, m].mean()),
                refit_predicted=float(after[:, m].mean()),
                shift=float(shifts[m]),
                public_cost=float(public[m]),
                refit_cost=float(costs[m]),
            )
        )
    data = ckpt.model_dump()
    data.update(fit=fit.model_dump(), calibration=calibration.model_dump())
    return IrtCheckpoint.model_validate(data), report
