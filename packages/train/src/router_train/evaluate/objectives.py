"""What a user gets at each objective, out of sample: the router where its inner estimate backs its point,
else the floor (the mix at the objective), judged against the mix at that objective.

Per fit (cross-validation partition) and scoring router, on the fit's train tasks only: the single models'
mean cost and resolve rate (the floor's frontier, `scoring.floor`), the router's calibration and its
point at the objective (`scoring.backing.objective_dial`), and whether its stored inner estimate backs
that point (`scoring.backing.backing`, the rule `route` applies). The fit then serves its test tasks:
the router's dial routes where backed, else each task's floor model (`floor_pick` of its instance id).
The served outcome per task is averaged over fold seeds, as the rows are.

Objectives: `BUDGET_POINTS` budgets evenly from the cheapest to the dearest single model's mean cost on
each fit's train tasks, and the quality targets `QUALITY_TARGETS`. Judged on the evaluated tasks: at a
budget, served resolved rate minus the best mix costing the budget (`vs_mix.mix_resolved_at_cost`); at a
quality, minus the best mix at the served cost; both with the rows' 95% paired bootstrap over tasks (the
same resamples, `bootstrap.TaskResample`); and the realised spend over the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from router_oracle.frontier import ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_train.evaluate.design import Partition
from router_train.scoring.backing import backing, objective_dial
from router_train.scoring.bootstrap import TaskResample, percentile_interval
from router_train.scoring.dial import RouterScores, apply_dial, calibrate, outcome_matrices
from router_train.scoring.floor import Objective, floor_mix, floor_pick
from router_train.scoring.vs_mix import gap_samples, mix_resolved_at_cost

BUDGET_POINTS = 10
"""Budgets per evaluation: share i/9 (i = 0..9) of the way from the cheapest to the dearest model's cost."""

QUALITY_TARGETS = ("best-0.05", "best-0.02", "best")
"""Quality targets per evaluation, relative to the best single model on each fit's train tasks."""

FLOOR_ROW = "(floor)"
"""The row of the floor alone (every fit at the mix): what a router that is never backed serves."""


class ObjectivePoint(FrozenModel):
    """One objective's served outcome for one router, out of sample."""

    objective: str
    """`budget 0%`..`budget 100%` (share of the cheapest-to-dearest cost range) or `quality best-0.02`."""
    budget: float | None
    """A budget objective's USD per task (mean over fits of each fit's budget on its train tasks)."""
    router_fits: int
    """Fits whose router point was backed by its inner estimate (the rest served the floor)."""
    fits: int
    """Fits in all."""
    cost_per_task: float
    """Served mean cost per task on the evaluated tasks, USD."""
    resolved: float
    """Served resolved rate on the evaluated tasks."""
    spend_ratio: float | None
    """Served cost per task over the budget (None: a quality objective)."""
    vs_mix: float | None
    """Served resolved minus the best mix at the budget (quality: at the served cost), in points."""
    low: float | None
    """Lower end of the 95% paired-bootstrap interval of `vs_mix` (None: undefined)."""
    high: float | None
    """Upper end of that interval."""


def objectives(singles: Sequence[ModelPoint]) -> list[tuple[str, Objective]]:
    """The grid on one fit's train-task single models: (label, objective) pairs."""
    cheap = min(p.cost for p in singles)
    dear = max(p.cost for p in singles)
    out = []
    for i in range(BUDGET_POINTS):
        share = i / (BUDGET_POINTS - 1)
        out.append((f"budget {100 * share:.0f}%", Objective(budget=cheap + share * (dear - cheap))))
    out += [(f"quality {q}", Objective(quality=q)) for q in QUALITY_TARGETS]
    return out


def train_singles(outcomes: tuple[np.ndarray, np.ndarray], pool: Sequence[str]) -> list[ModelPoint]:
    """Each pool model's mean cost and resolve rate on a fit's train tasks."""
    resolved, cost = outcomes
    return [
        ModelPoint(model=m, cost=float(cost[:, j].mean()), resolved=float(resolved[:, j].mean()))
        for j, m in enumerate(pool)
    ]


def fit_picks(
    scores: RouterScores | None,
    train: Sequence[TaskRecord],
    test: Sequence[TaskRecord],
    outcomes: tuple[np.ndarray, np.ndarray],
    pool: Sequence[str],
) -> tuple[np.ndarray, list[bool], list[float | None]]:
    """One fit's served model column per objective and test task (objectives, tests), whether the router
    chose at each objective, and each budget. `scores` None: the floor alone."""
    singles = train_singles(outcomes, pool)
    grid = objectives(singles)
    cal = None
    if scores is not None:
        price = outcomes[1].mean(axis=0)
        cal = calibrate(scores.train, train, list(pool), costs=price, outcomes=outcomes)
    picks = np.empty((len(grid), len(test)), dtype=int)
    chose: list[bool] = []
    for i, (_, objective) in enumerate(grid):
        backed = False
        if scores is not None and cal is not None:
            bought = objective_dial(cal, objective, singles)
            target = None if objective.quality is None else objective.target_rate(singles)
            backed = backing(scores.safe_point, bought.dial, target, objective.budget)[0]
            if backed:
                picks[i] = apply_dial(scores.test, np.asarray(cal.model_costs), bought.dial)
        if not backed:
            mix = floor_mix(singles, objective)
            picks[i] = [list(pool).index(floor_pick(mix, t.instance_id)) for t in test]
        chose.append(backed)
    return picks, chose, [o.budget for _, o in grid]


def served_objectives(
    partitions: Sequence[Partition],
    scores: Sequence[Sequence[RouterScores]],
    tasks: Sequence[TaskRecord],
    pool: Sequence[str],
    seed: int,
) -> dict[str, list[ObjectivePoint]]:
    """Router name -> its served outcome at every objective (and `FLOOR_ROW`: the floor alone)."""
    pool = list(pool)
    index = {t.instance_id: i for i, t in enumerate(tasks)}
    all_resolved, all_cost = outcome_matrices(tasks, pool)
    repeats = max(p.repeat for p in partitions) + 1 if partitions else 1
    n_obj = BUDGET_POINTS + len(QUALITY_TARGETS)
    picks: dict[str, np.ndarray] = {}
    chosen: dict[str, np.ndarray] = {}
    budgets: dict[str, list[list[float | None]]] = {}
    for p, fitted in zip(partitions, scores, strict=True):
        if not fitted:
            continue
        train_rows = np.asarray([index[t.instance_id] for t in p.train])
        outcomes = (all_resolved[train_rows], all_cost[train_rows])
        test_rows = np.asarray([index[t.instance_id] for t in p.test])
        for name, s in [(FLOOR_ROW, None), *((s.name, s) for s in fitted)]:
            fp, chose, fb = fit_picks(s, p.train, p.test, outcomes, pool)
            picks.setdefault(name, np.full((repeats, n_obj, len(tasks)), -1))[p.repeat][:, test_rows] = fp
            chosen[name] = chosen.get(name, np.zeros(n_obj, dtype=int)) + np.asarray(chose, dtype=int)
            budgets.setdefault(name, []).append(fb)
    labels = [label for label, _ in objectives(_all_singles(all_resolved, all_cost, pool))]
    resample = TaskResample(all_resolved.T, all_cost.T, seed) if picks else None
    out: dict[str, list[ObjectivePoint]] = {}
    cols = np.arange(len(tasks))
    for name, arr in picks.items():
        if (arr < 0).any():
            raise ValueError(f"{name}: some tasks have no served route at some objective")
        assert resample is not None
        res = np.mean([all_resolved[cols, arr[r]] for r in range(repeats)], axis=0)
        cst = np.mean([all_cost[cols, arr[r]] for r in range(repeats)], axis=0)
        fits = len(budgets[name])
        rows = []
        for j, label in enumerate(labels):
            per_fit = [b[j] for b in budgets[name]]
            budget = None if per_fit[0] is None else float(np.mean([b for b in per_fit if b is not None]))
            rows.append(_point(label, budget, res[j], cst[j], resample, int(chosen[name][j]), fits))
        out[name] = rows
    return out


def _all_singles(resolved: np.ndarray, cost: np.ndarray, pool: Sequence[str]) -> list[ModelPoint]:
    return train_singles((resolved, cost), pool)


def _point(
    label: str,
    budget: float | None,
    res: np.ndarray,
    cst: np.ndarray,
    rs: TaskResample,
    chose: int,
    fits: int,
) -> ObjectivePoint:
    r, c = float(res.mean()), float(cst.mean())
    mr = rs.model_resolved.mean(axis=1)[:, None]
    mc = rs.model_cost.mean(axis=1)[:, None]
    # The mix is compared at the budget (the promise), floored at the cheapest model: a budget just under
    # it on the evaluated tasks is compared with the cheapest model, not with nothing.
    at = max(budget, float(mc.min())) if budget is not None else max(c, float(mc.min()))
    full = r - float(mix_resolved_at_cost(mr, mc, np.asarray([at]))[0])
    if budget is not None:
        floor = np.maximum(budget, rs.mc.min(axis=0))
        samples = res[rs.idx].mean(axis=1) - mix_resolved_at_cost(rs.mr, rs.mc, floor)
    else:
        samples = gap_samples(rs, res, cst, floor_at_cheapest=True)
    ci = percentile_interval(samples)
    return ObjectivePoint(
        objective=label,
        budget=None if budget is None else round(budget, 6) + 0.0,
        router_fits=chose,
        fits=fits,
        cost_per_task=round(c, 6) + 0.0,
        resolved=round(r, 6) + 0.0,
        spend_ratio=None if budget is None else round(c / budget, 4) + 0.0,
        vs_mix=round(100 * full, 4) + 0.0 if np.isfinite(full) else None,
        low=None if ci is None else round(100 * ci[0], 4) + 0.0,
        high=None if ci is None else round(100 * ci[1], 4) + 0.0,
    )


def objective_table(rows: dict[str, list[ObjectivePoint]]) -> list[str]:
    """The terminal table: one line per router and objective (router-chosen fits, served $/task and
    resolved, spend / budget, vs the mix at the objective [95% CI], `BELOW` where wholly below)."""
    out = [
        "objective: each learned router at --budget / --quality where its inner estimate backs its point, "
        "else the floor (the mix there); vs mix at the budget (quality: at the served cost), "
        "95% paired bootstrap",
        f"{'router':<24} {'objective':<20} {'budget':>7} {'router':>7} {'$/task':>7} {'spend/b':>7} "
        f"{'resolved':>8}  vs mix",
    ]
    for name, points in rows.items():
        for p in points:
            budget = "" if p.budget is None else f"{p.budget:.3f}"
            ratio = "" if p.spend_ratio is None else f"{p.spend_ratio:.2f}"
            gap = "n/a" if p.vs_mix is None else f"{p.vs_mix:+.2f}"
            ci = "" if p.low is None or p.high is None else f" [{p.low:+.2f}, {p.high:+.2f}]"
            below = "  BELOW" if p.high is not None and p.high < 0 else ""
            out.append(
                f"{name:<24} {p.objective:<20} {budget:>7} {f'{p.router_fits}/{p.fits}':>7} "
                f"{p.cost_per_task:>7.3f} {ratio:>7} {100 * p.resolved:>7.1f}%  {gap}{ci}{below}"
            )
    return out
