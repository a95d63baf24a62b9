"""Every scoring router as a cost dial, judged by its whole cost-quality curve under cross-validation.

For each learned router that scores models (`dial.RouterScores`) and each fit (partition), the dial of
each operating point is chosen on that fit's train tasks only: the router's `DialCalibration` on them
turns a target cost per task into a dial (`dial.dial_for_budget`), and the fitted router then routes the
fit's test tasks with that dial. Targets: `TARGET_SHARES` of the way from the cheapest single model's
mean cost to the strongest's, both measured on the train tasks. Each point of the curve is then the
cross-validated resolved rate and mean cost of those routes (fold seeds pooled, as the rows are), so the
curve is out of sample.

Metrics, over the cost range [c_w, c_s] from the cheapest single model (w) to the strongest (s, the best
resolved rate; ties: cheaper) on the evaluated tasks:
- PGR at cost c: (R(c) - r_w) / (r_s - r_w), the share of the weak-to-strong gap recovered, with R(c)
  the router's curve: its points in cost order joined by straight lines (a coin between two dial
  settings reaches every point between them), starting at the cheapest model when its cheapest point
  costs more (the dial's cheap end), and flat past its most expensive point.
- APGR: the mean of PGR over [c_w, c_s] (uniform in cost). The straight line from w to s (a random mix
  of the two end models) has 0.5; the best random mix of single models, the oracle: see the references.
- CPT50 / CPT80: the lowest cost at which PGR reaches 0.5 / 0.8, as a share of c_s; None: not reached
  within [c_w, c_s].
- area_vs_mix: the mean over [c_w, c_s] of R(c) minus the best random mix of single models at c, in
  points (the area between the curve and the mix frontier divided by the cost range; `vs_mix.area_vs_mix`).
Intervals: 95% paired bootstrap over tasks (`bootstrap.TaskResample`, the same resamples as the rows'
gaps): each resample re-measures the curve's points, the end models and the mix frontier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.frontier import EPS, ModelPoint, frontier_vertices
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_train.evaluate import dial as dial_module
from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores, apply_dial, outcome_matrices
from router_train.scoring.bootstrap import TaskResample, percentile_interval
from router_train.scoring.metrics import single_model_points
from router_train.scoring.safe_point import DIAL_SHARES, dial_margin, honoured, share_estimate
from router_train.scoring.vs_mix import area_vs_mix, gap_at_cost, grid_mean, mix_on_grid, overspend, points

TARGET_SHARES = DIAL_SHARES
"""Operating points: target cost = c_w + share x (c_s - c_w) on each fit's train tasks (11 points; the
dial points each fit's safe point estimates, `scoring.safe_point.DIAL_SHARES`)."""

GRID = 401
"""Costs the curve metrics are evaluated at over [c_w, c_s] (CPT resolution: 1/400 of the range)."""


class CurveStat(FrozenModel):
    """A curve metric and its 95% paired-bootstrap interval (None: undefined, or CPT not reached)."""

    mean: float | None
    """On the evaluated tasks (fold seeds pooled). CPT: None when PGR never reaches the level."""
    low: float | None
    """Lower end of the interval (None when unknown)."""
    high: float | None
    """Upper end of the interval (CPT: None when the level is not reached on 2.5% or more resamples)."""


class CurvePoint(FrozenModel):
    """One operating point of a router's dial, out of sample."""

    target_share: float
    """Where between the cheapest (0) and the strongest (1) single model's cost the target lies."""
    target_cost: float
    """Target mean cost per task, USD (mean over fits of each fit's target on its train tasks)."""
    dial: float
    """The dial chosen for the target (median over fits; each fit chose its own on its train tasks)."""
    cost_per_task: float
    """Mean cost per task of the routes on the evaluated tasks, USD."""
    resolved: float
    """Resolved rate of the routes on the evaluated tasks."""
    gap_vs_mix: float | None
    """Resolved minus the best random mix of single models at `cost_per_task`, in points (None: cheaper
    than every single model)."""
    pgr: CurveStat
    """Performance gap recovered at this point: (resolved - r_w) / (r_s - r_w)."""
    overspend: float | None = None
    """Cost per task over the cheapest random mix resolving as much, USD (0: none; None: no mix resolves
    that much; `vs_mix.overspend`): a loss the gap misses where the frontier is one point."""
    refused_fits: int | None = None
    """Fits whose inner estimate at this point does not beat the mix by the margin: a checkpoint fitted
    as that fit was refuses a budget or dial here and routes at its safe default point
    (`scoring.safe_point.dial_estimate`); None: no estimates (`--no-safe-point`, the references)."""
    fits: int | None = None
    """Fits with an estimate at this point (the denominator of `refused_fits`)."""


class CurveMetrics(FrozenModel):
    """A router's whole curve summarised (definitions: this module's docstring)."""

    apgr: CurveStat
    """Mean PGR over [c_w, c_s]; 0.5 for the straight line between the two end models."""
    cpt50: CurveStat
    """Lowest cost reaching PGR 0.5, as a share of the strongest single model's cost."""
    cpt80: CurveStat
    """Lowest cost reaching PGR 0.8, as a share of the strongest single model's cost."""
    area_vs_mix: CurveStat
    """Mean over [c_w, c_s] of the curve minus the mix frontier, in points (> 0: above the mix)."""
    overspend: float | None = None
    """Mean over the curve's points of `CurvePoint.overspend`, USD per task (None: no point has one);
    defined where the cost range is one point and the other metrics are not."""


class CurveReference(FrozenModel):
    """A reference curve on the same tasks: `oracle` (the dial on the measured outcomes, chosen on the
    evaluated tasks themselves: an upper bound), `mix-frontier`, `random-line` (w to s)."""

    name: str
    """`oracle`, `mix-frontier` or `random-line`."""
    metrics: CurveMetrics
    """Its curve metrics (intervals only for the oracle)."""
    curve: list[CurvePoint]
    """The oracle's points (empty for the lines)."""


class CurveSummary(FrozenModel):
    """The cost range of the curves of one evaluation and the reference curves."""

    cheapest: ModelPoint
    """The cheapest single model on the evaluated tasks (PGR 0)."""
    strongest: ModelPoint
    """The single model with the best resolved rate (PGR 1); CPT is a share of its cost."""
    target_shares: list[float]
    """The operating points' target shares."""
    references: list[CurveReference]
    """Oracle, mix frontier, random line."""


@dataclass(frozen=True)
class RouterCurve:
    """One router's curve and metrics."""

    points: list[CurvePoint]
    metrics: CurveMetrics


def end_models(singles: Sequence[ModelPoint]) -> tuple[ModelPoint, ModelPoint]:
    """(cheapest, strongest) single model: lowest cost (ties: better), best rate (ties: cheaper)."""
    weak = min(singles, key=lambda p: (p.cost, -p.resolved, p.model))
    strong = max(singles, key=lambda p: (p.resolved, -p.cost, p.model))
    return weak, strong


def _grid(mc: np.ndarray, weak: int, strong: int) -> np.ndarray:
    """(k, GRID): the cost grid from the cheapest to the strongest model of each sample."""
    wc, sc = mc[weak], mc[strong]
    u = np.linspace(0.0, 1.0, GRID)
    out: np.ndarray = wc[:, None] + u[None] * (sc - wc)[:, None]
    return out


def _mix_on_grid(mr: np.ndarray, mc: np.ndarray, weak: int, strong: int) -> np.ndarray:
    """(k, GRID): the best random mix of single models at each cost of `_grid`."""
    return mix_on_grid(mr, mc, _grid(mc, weak, strong))


def curve_stats(
    pr: np.ndarray,
    pc: np.ndarray,
    mr: np.ndarray,
    mc: np.ndarray,
    weak: int,
    strong: int,
    *,
    mix: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Curve metrics on k samples at once. `pr`, `pc`: (k, points) resolved and cost of the curve's
    points; `mr`, `mc`: (models, k) the single models' resolved and cost; `weak`, `strong`: model rows;
    `mix`: `_mix_on_grid` of these, when already at hand (it depends on the models only).
    Returns arrays of shape (k,) (`pgr`: (k, points)); NaN where r_s <= r_w, inf where CPT is not reached."""
    k = pr.shape[0]
    wr, wc, sr, sc = mr[weak], mc[weak], mr[strong], mc[strong]
    grid = _grid(mc, weak, strong)
    curve = np.empty((k, GRID))
    for i in range(k):
        order = np.argsort(pc[i], kind="stable")
        x, y = pc[i][order], pr[i][order]
        if x[0] > wc[i] + EPS:  # the dial's cheap end: the cheapest model
            x, y = np.concatenate([[wc[i]], x]), np.concatenate([[wr[i]], y])
        curve[i] = np.interp(grid[i], x, y)
    span = sr - wr
    with np.errstate(divide="ignore", invalid="ignore"):
        pgr_grid = np.where(span[:, None] > EPS, (curve - wr[:, None]) / span[:, None], np.nan)
        pgr_points = np.where(span[:, None] > EPS, (pr - wr[:, None]) / span[:, None], np.nan)
    if mix is None:
        mix = _mix_on_grid(mr, mc, weak, strong)
    out = {"apgr": grid_mean(pgr_grid), "area_vs_mix": area_vs_mix(curve, mix), "pgr": pgr_points}
    for name, level in (("cpt50", 0.5), ("cpt80", 0.8)):
        hit = pgr_grid >= level - 1e-9
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        share = grid[np.arange(k), np.maximum(first, 0)] / np.where(sc > 0, sc, np.nan)
        out[name] = np.where(first >= 0, share, np.inf)
        out[name] = np.where(np.isnan(pgr_grid[:, 0]), np.nan, out[name])
    return out


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), digits) + 0.0


def _stat(full: float, samples: np.ndarray | None, *, cpt: bool = False) -> CurveStat:
    if samples is None:
        return CurveStat(mean=_round(full), low=None, high=None)
    if cpt:  # inf = not reached: the nearest-rank percentile keeps it as such
        ok = ~np.isnan(samples)
        if ok.sum() < 0.5 * len(samples):
            return CurveStat(mean=_round(full), low=None, high=None)
        lo, hi = np.percentile(samples[ok], [2.5, 97.5], method="nearest")
        return CurveStat(mean=_round(full), low=_round(lo), high=_round(hi))
    ci = percentile_interval(samples)
    return CurveStat(mean=_round(full), low=_round(ci[0]) if ci else None, high=_round(ci[1]) if ci else None)


@dataclass(frozen=True)
class CurveBootstrap:
    """The task resamples of one evaluation's single models and their best random mix on each resample's
    cost grid: every curve measured on that evaluation shares them (the mix is most of a curve's cost)."""

    resample: TaskResample
    """The resamples (`metrics.task_resample` draws the same for the seed and task count)."""
    mix: np.ndarray
    """(resamples, GRID): `_mix_on_grid` of the resampled single models."""

    @classmethod
    def draw(
        cls, model_resolved: np.ndarray, model_cost: np.ndarray, weak: int, strong: int, seed: int
    ) -> CurveBootstrap:
        rs = TaskResample(model_resolved, model_cost, seed)
        return cls(rs, _mix_on_grid(rs.mr, rs.mc, weak, strong))


def measure_curve(
    point_resolved: np.ndarray,
    point_cost: np.ndarray,
    model_resolved: np.ndarray,
    model_cost: np.ndarray,
    weak: int,
    strong: int,
    seed: int,
    *,
    bootstrap: bool = True,
    shared: CurveBootstrap | None = None,
) -> tuple[CurveMetrics, list[CurveStat]]:
    """Curve metrics and per-point PGR of a curve given per task: `point_resolved`, `point_cost`
    (points, tasks) its expected outcome at each point; `model_resolved`, `model_cost` (models, tasks).
    `shared`: `CurveBootstrap.draw` of these models, weak, strong and seed, when another curve of the same
    evaluation drew it already."""
    full = curve_stats(
        point_resolved.mean(axis=1)[None],
        point_cost.mean(axis=1)[None],
        model_resolved.mean(axis=1)[:, None],
        model_cost.mean(axis=1)[:, None],
        weak,
        strong,
    )
    boot = None
    if bootstrap:
        # The resamples `metrics.task_resample` draws for this seed and task count: curve intervals pair
        # with the rows' gap intervals.
        drawn = shared or CurveBootstrap.draw(model_resolved, model_cost, weak, strong, seed)
        rs = drawn.resample
        pr = point_resolved[:, rs.idx].mean(axis=2).T
        pc = point_cost[:, rs.idx].mean(axis=2).T
        boot = curve_stats(pr, pc, rs.mr, rs.mc, weak, strong, mix=drawn.mix)

    def stat(name: str) -> CurveStat:
        return _stat(float(full[name][0]), None if boot is None else boot[name], cpt=name.startswith("cpt"))

    metrics = CurveMetrics(
        apgr=stat("apgr"), cpt50=stat("cpt50"), cpt80=stat("cpt80"), area_vs_mix=stat("area_vs_mix")
    )
    pgr = [
        _stat(float(full["pgr"][0, j]), None if boot is None else boot["pgr"][:, j])
        for j in range(point_resolved.shape[0])
    ]
    return metrics, pgr


def fold_dials(
    scores: RouterScores,
    train: Sequence[TaskRecord],
    outcomes: tuple[np.ndarray, np.ndarray],
    shares: Sequence[float] = TARGET_SHARES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dials, target costs, price) of one fit, from its train tasks only: the router's calibration on
    them turns each target share of [cheapest, strongest] single-model cost there into a dial.
    `outcomes`: `outcome_matrices` of `train`."""
    resolved, cost = outcomes
    price = cost.mean(axis=0)
    singles = [
        ModelPoint(model=m, cost=float(price[j]), resolved=float(resolved[:, j].mean()))
        for j, m in enumerate(scores.model_ids)
    ]
    weak, strong = end_models(singles)
    targets = np.asarray([weak.cost + s * (strong.cost - weak.cost) for s in shares])
    calibration = dial_module.calibrate(scores.train, train, scores.model_ids, costs=price, outcomes=outcomes)
    dials = np.asarray([dial_module.dial_for_budget(calibration, float(t)) for t in targets])
    return dials, targets, price


def _points(
    shares: Sequence[float],
    targets: np.ndarray,
    dials: np.ndarray,
    resolved: np.ndarray,
    cost: np.ndarray,
    singles: Sequence[ModelPoint],
    pgr: list[CurveStat],
) -> list[CurvePoint]:
    out = []
    for j, share in enumerate(shares):
        r, c = float(resolved[j].mean()), float(cost[j].mean())
        out.append(
            CurvePoint(
                target_share=round(share, 4) + 0.0,
                target_cost=round(float(targets[j]), 6) + 0.0,
                dial=round(float(dials[j]), 6) + 0.0,
                cost_per_task=round(c, 6) + 0.0,
                resolved=round(r, 6) + 0.0,
                gap_vs_mix=points(gap_at_cost(r, c, singles)),
                pgr=pgr[j],
                overspend=_usd(overspend(r, c, singles)),
            )
        )
    return out


def build_curves(
    partitions: Sequence[Partition],
    scores: Sequence[Sequence[RouterScores]],
    tasks: Sequence[TaskRecord],
    pool: Sequence[str],
    seed: int,
    shares: Sequence[float] = TARGET_SHARES,
) -> tuple[dict[str, RouterCurve], CurveSummary]:
    """The curve of every router with scores, and the references, on the evaluated `tasks`.

    `scores[i]`: the RouterScores the fitters gave for `partitions[i]`."""
    curves = router_curves(partitions, scores, tasks, pool, seed, shares)
    weak_p, strong_p = end_models(single_model_points(tasks, list(pool)))
    return curves, CurveSummary(
        cheapest=weak_p,
        strongest=strong_p,
        target_shares=[round(s, 4) + 0.0 for s in shares],
        references=references(tasks, pool, seed, shares),
    )


def router_curves(
    partitions: Sequence[Partition],
    scores: Sequence[Sequence[RouterScores]],
    tasks: Sequence[TaskRecord],
    pool: Sequence[str],
    seed: int,
    shares: Sequence[float] = TARGET_SHARES,
) -> dict[str, RouterCurve]:
    """The curve of every router with scores on the evaluated `tasks`, without the references (what
    `build_curves` adds): `scores[i]`, the RouterScores the fitters gave for `partitions[i]`."""
    pool = list(pool)
    index = {t.instance_id: i for i, t in enumerate(tasks)}
    all_resolved, all_cost = outcome_matrices(tasks, pool)  # (tasks, models)
    singles = single_model_points(tasks, pool)
    weak_p, strong_p = end_models(singles)
    weak, strong = pool.index(weak_p.model), pool.index(strong_p.model)
    repeats = max(p.repeat for p in partitions) + 1 if partitions else 1
    n, n_points = len(tasks), len(shares)

    picks: dict[str, np.ndarray] = {}
    refusals: dict[str, list[list[bool]]] = {}
    fit_dials: dict[str, list[np.ndarray]] = {}
    fit_targets: dict[str, list[np.ndarray]] = {}
    for p, fitted in zip(partitions, scores, strict=True):
        if not fitted:
            continue
        # Cross-validation: the train tasks are evaluated tasks too.
        if all(t.instance_id in index for t in p.train):
            train_rows = np.asarray([index[t.instance_id] for t in p.train])
            outcomes = (all_resolved[train_rows], all_cost[train_rows])
        else:
            outcomes = outcome_matrices(p.train, pool)
        test_rows = np.asarray([index[t.instance_id] for t in p.test])
        for s in fitted:
            if s.model_ids != pool:
                raise ValueError(f"{s.name}: scores are over {s.model_ids}, not the pool {pool}")
            dials, targets, price = fold_dials(s, p.train, outcomes, shares)
            fit_dials.setdefault(s.name, []).append(dials)
            if (refused := refused_points(s, shares)) is not None:
                refusals.setdefault(s.name, []).append(refused)
            fit_targets.setdefault(s.name, []).append(targets)
            arr = picks.setdefault(s.name, np.full((repeats, n_points, n), -1))
            arr[p.repeat][:, test_rows] = apply_dial(s.test, price, dials)

    curves: dict[str, RouterCurve] = {}
    cols = np.arange(n)
    # Every router's curve is measured against the same single models: their resamples are drawn once.
    shared = CurveBootstrap.draw(all_resolved.T, all_cost.T, weak, strong, seed) if picks else None
    for name, arr in picks.items():
        if (arr < 0).any():
            raise ValueError(f"{name}: some tasks have no curve route in some fold seed")
        # (points, tasks): each task's outcome averaged over fold seeds, as the pooled rows are.
        res = np.mean([all_resolved[cols, arr[r]] for r in range(repeats)], axis=0)
        cst = np.mean([all_cost[cols, arr[r]] for r in range(repeats)], axis=0)
        metrics, pgr = measure_curve(res, cst, all_resolved.T, all_cost.T, weak, strong, seed, shared=shared)
        dials = np.median(np.stack(fit_dials[name]), axis=0)
        targets = np.mean(np.stack(fit_targets[name]), axis=0)
        pts = _points(shares, targets, dials, res, cst, singles, pgr)
        metrics = metrics.model_copy(update={"overspend": mean_overspend(pts)})
        if refusals.get(name):
            counts = np.sum(refusals[name], axis=0)
            n_fits = len(refusals[name])
            pts = [
                p.model_copy(update={"refused_fits": int(k), "fits": n_fits})
                for p, k in zip(pts, counts, strict=True)
            ]
        curves[name] = RouterCurve(pts, metrics)
    return curves


def _usd(x: float | None) -> float | None:
    return None if x is None else round(x, 6) + 0.0


def mean_overspend(curve: Sequence[CurvePoint]) -> float | None:
    """The mean overspend of the points that have one (None: none has)."""
    known = [p.overspend for p in curve if p.overspend is not None]
    return _usd(float(np.mean(known))) if known else None


def refused_points(scores: RouterScores, shares: Sequence[float]) -> list[bool] | None:
    """Per share, whether this fit refuses a budget or dial there (its inner estimate does not beat the
    mix by the margin); None when the fit stores no estimate at every share (`--no-safe-point`)."""
    if scores.safe_point is None:
        return None
    estimates = [share_estimate(scores.safe_point, share) for share in shares]
    if any(e is None for e in estimates):
        return None
    margin = dial_margin(scores.safe_point)
    return [not honoured(e, margin) for e in estimates if e is not None]


def references(
    tasks: Sequence[TaskRecord], pool: Sequence[str], seed: int, shares: Sequence[float] = TARGET_SHARES
) -> list[CurveReference]:
    """The oracle's curve (the dial on the measured outcomes, per-task costs, chosen on these very tasks:
    the best any router could do at each budget), the mix frontier and the random line from the cheapest
    to the strongest single model."""
    pool = list(pool)
    resolved, cost = outcome_matrices(tasks, pool)
    singles = single_model_points(tasks, pool)
    weak_p, strong_p = end_models(singles)
    weak, strong = pool.index(weak_p.model), pool.index(strong_p.model)
    targets = np.asarray([weak_p.cost + s * (strong_p.cost - weak_p.cost) for s in shares])
    calibration = dial_module.calibrate(resolved, tasks, pool, costs=cost, outcomes=(resolved, cost))
    dials = np.asarray([dial_module.dial_for_budget(calibration, float(t)) for t in targets])
    cols = np.arange(len(tasks))
    chosen = apply_dial(resolved, cost, dials)
    o_res, o_cost = resolved[cols, chosen], cost[cols, chosen]
    metrics, pgr = measure_curve(o_res, o_cost, resolved.T, cost.T, weak, strong, seed)
    out = [
        CurveReference(
            name="oracle", metrics=metrics, curve=_points(shares, targets, dials, o_res, o_cost, singles, pgr)
        )
    ]
    mr, mc = resolved.mean(axis=0)[:, None], cost.mean(axis=0)[:, None]
    corners = frontier_vertices(singles)
    for name, pts in (("mix-frontier", corners), ("random-line", [weak_p, strong_p])):
        stats = curve_stats(
            np.asarray([[p.resolved for p in pts]]), np.asarray([[p.cost for p in pts]]), mr, mc, weak, strong
        )
        out.append(
            CurveReference(
                name=name,
                metrics=CurveMetrics(
                    apgr=_stat(float(stats["apgr"][0]), None),
                    cpt50=_stat(float(stats["cpt50"][0]), None),
                    cpt80=_stat(float(stats["cpt80"][0]), None),
                    area_vs_mix=_stat(float(stats["area_vs_mix"][0]), None),
                ),
                curve=[],
            )
        )
    return out


__all__ = [
    "TARGET_SHARES",
    "CurveMetrics",
    "CurvePoint",
    "CurveReference",
    "CurveStat",
    "CurveSummary",
    "RouterCurve",
    "build_curves",
    "curve_stats",
    "end_models",
    "fold_dials",
    "measure_curve",
    "references",
    "router_curves",
]
