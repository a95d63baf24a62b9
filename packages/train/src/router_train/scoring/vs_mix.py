"""The vs-mix gap, the project's headline number: a router against the best random mix of single models.

A random mix picks model i with probability p_i on every task, ignoring the task; the best one at a
mean cost lies on the upper concave hull of the single models' (cost, resolved) points (the geometry:
`router_oracle.frontier`). A router is worth its training only above that hull. Everything the reports
say about it is defined here, once:

- the gap at a point: resolved rate minus the best mix's at the same mean cost (`gap_at_cost`; None
  when every single model costs more), with the mixes on both axes (`frontier_position`); the floored
  gap of `evaluate-anypool`, which compares a router cheaper than every model with the cheapest one
  (`floored_gap`);
- its 95% paired bootstrap interval over tasks: the router and every single model re-measured on the
  same resampled tasks (`bootstrap.TaskResample`), the frontier rebuilt per resample (`gap_samples`,
  `gap_interval`, with `mix_resolved_at_cost`, the vectorised `best_mix_at_cost`);
- the gap in points with its interval and spread over fold seeds (`Gap`, `gap_in_points`, `points`);
- the verdict words (`verdict`): `beats mix` / `dominated` when the interval is above / below 0,
  `on the frontier`, `~ mix` otherwise;
- the overspend at a point: its cost minus the cheapest mix's resolving as much (`overspend`), which
  sees a router paying more for the same rate where the gap cannot (a one-point frontier);
- a cost dial curve's area vs the mix: the mean over a cost range of the curve minus the best mix at
  each cost, in points (`mix_on_grid`, `area_vs_mix`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from router_oracle.frontier import Mix, ModelPoint, best_mix_at_cost, cheapest_mix_at_resolved
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import EPS, rounded
from router_train.scoring.bootstrap import TaskResample, percentile_interval


def gap_at_cost(resolved: float, cost: float, single_models: Sequence[ModelPoint]) -> float | None:
    """`resolved` minus the best random mix of `single_models` costing at most `cost` (a fraction;
    positive: above every mix at that cost); None when every single model costs more."""
    mix = best_mix_at_cost(single_models, cost)
    return None if mix is None else resolved - mix.resolved


def overspend(resolved: float, cost: float, single_models: Sequence[ModelPoint]) -> float | None:
    """What a router pays per task over the cheapest random mix resolving as much, USD (0: it pays no
    more; None: no mix resolves that much). The gap at equal cost reads 0 where the frontier is one point
    (two models tie on resolved rate at different costs) or the router sits right of it; this does not:
    a router paying 3.5x for the same rate reads its extra cost."""
    mix = cheapest_mix_at_resolved(single_models, resolved)
    if mix is None:
        return None
    return max(0.0, cost - mix.cost) if cost - mix.cost > EPS else 0.0


class FrontierPosition(BaseModel):
    """Where a router sits against random mixes of single models."""

    model_config = ConfigDict(frozen=True)

    mix_at_same_cost: Mix | None
    """The best mix costing at most the router's mean cost; None when every single model costs more."""
    gap_vs_mix: float | None
    """Router resolved rate minus that mix's (positive: the router beats every mix at its cost)."""
    mix_at_same_resolved: Mix | None
    """The cheapest mix resolving at least as much; None when no single model resolves that much."""
    saving_vs_mix: float | None
    """That mix's mean cost minus the router's, USD per task (positive: the router is cheaper)."""
    dominated: bool | None
    """True when some mix resolves more at no more cost (gap < 0); None when no mix is that cheap."""
    gap_ci: tuple[float, float] | None = None
    """95% paired-bootstrap interval of `gap_vs_mix` over resampled tasks (contains 0: undecided)."""


def _round_mix(mix: Mix | None) -> Mix | None:
    if mix is None:
        return None
    return Mix(
        weights={k: rounded(v) for k, v in mix.weights.items()},
        cost=rounded(mix.cost),
        resolved=rounded(mix.resolved),
    )


def frontier_position(
    cost: float,
    resolved: float,
    single_models: Sequence[ModelPoint],
    gap_ci: tuple[float, float] | None = None,
) -> FrontierPosition:
    """Compare a (mean cost, resolved rate) point with the best random mixes of single models."""
    at_cost = best_mix_at_cost(single_models, cost)
    at_resolved = cheapest_mix_at_resolved(single_models, resolved)
    gap = gap_at_cost(resolved, cost, single_models)
    return FrontierPosition(
        mix_at_same_cost=_round_mix(at_cost),
        gap_vs_mix=None if gap is None else rounded(gap),
        mix_at_same_resolved=_round_mix(at_resolved),
        saving_vs_mix=None if at_resolved is None else rounded(at_resolved.cost - cost),
        dominated=None if gap is None else bool(gap < -EPS),
        gap_ci=None if gap_ci is None or gap is None else (rounded(gap_ci[0]), rounded(gap_ci[1])),
    )


def floored_gap(resolved: float, cost: float, singles: Sequence[ModelPoint]) -> tuple[float, bool]:
    """(resolved - best mix at max(cost, the cheapest single model's cost), whether the floor applied).

    A router cheaper than every single model has no mix at its cost; floored, it is compared with the
    cheapest model (no credit for the saving), so the gap is defined everywhere. Elsewhere it is
    `frontier_position`'s gap."""
    cheapest = min(p.cost for p in singles)
    gap = gap_at_cost(resolved, max(cost, cheapest), singles)
    assert gap is not None  # the cheapest model itself is a mix at its own cost
    return rounded(gap), cost < cheapest - EPS


def mix_resolved_at_cost(mr: np.ndarray, mc: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Vectorised `frontier.best_mix_at_cost(...).resolved` per column; -inf where no mix is that cheap.

    `mr`, `mc`: (models, k) resolved rates and costs; `cost`: (k,) budgets.
    """
    shape = cost.shape
    m = mr.shape[0]
    # Flat (models, k) views of the budgets' shape, so each pair below touches only where it mixes.
    cost = cost.ravel()
    mr = np.broadcast_to(mr, (m, *shape)).reshape(m, -1)
    mc = np.broadcast_to(mc, (m, *shape)).reshape(m, -1)
    best = np.full(cost.shape, -np.inf)
    for i in range(m):
        np.maximum(best, np.where(mc[i] <= cost + EPS, mr[i], -np.inf), out=best)
        below = mc[i] < cost
        for j in range(m):
            if j == i:  # mc[i] < cost < mc[i] never holds
                continue
            span = mc[j] - mc[i]
            # The mix of i and j only where it exists: elsewhere it would add max(best, -inf) = best.
            at = np.flatnonzero(below & (cost < mc[j]) & (span > EPS))
            if at.size:
                ri, ci = mr[i, at], mc[i, at]
                val = ri + (mr[j, at] - ri) * (cost[at] - ci) / span[at]
                best[at] = np.maximum(best[at], val)
    return best.reshape(shape)


def gap_samples(
    resample: TaskResample,
    resolved: Sequence[float] | np.ndarray,
    cost: Sequence[float] | np.ndarray,
    *,
    floor_at_cheapest: bool = False,
) -> np.ndarray:
    """(router resolved - best mix at the router's cost) on each resample, shape (resamples,).

    `resolved`, `cost`: the router's expected outcome per task, in the task order of `resample`; the
    single models are re-measured on the same resampled tasks and the frontier rebuilt from them. NaN on
    the resamples where the router is cheaper than every single model (no mix to compare with), unless
    `floor_at_cheapest` (`floored_gap` on each resample)."""
    r = np.asarray(resolved, dtype=float)[resample.idx].mean(axis=1)
    c = np.asarray(cost, dtype=float)[resample.idx].mean(axis=1)
    if floor_at_cheapest:
        c = np.maximum(c, resample.mc.min(axis=0))
    best = mix_resolved_at_cost(resample.mr, resample.mc, c)
    out: np.ndarray = np.where(np.isfinite(best), r - best, np.nan)
    return out


def gap_interval(
    resample: TaskResample,
    resolved: Sequence[float] | np.ndarray,
    cost: Sequence[float] | np.ndarray,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Paired-bootstrap percentile interval of the router's gap to the mix (fractions).

    `resolved`, `cost`: the router's expected outcome per task, in the task order of `resample`. None
    when the router is cheaper than every single model on most resamples (no mix to compare with).
    """
    return percentile_interval(gap_samples(resample, resolved, cost), level)


class Gap(FrozenModel):
    """A router's resolved rate minus the best random mix of single models at its mean cost, in points."""

    mean: float | None
    """Over the evaluation's tasks, every fold seed's decisions pooled; None when the router is cheaper
    than every single model (no mix to compare with)."""
    low: float | None
    """Lower end of the 95% paired-bootstrap interval over tasks (frontier rebuilt per resample)."""
    high: float | None
    """Upper end of that interval."""
    by_fold_seed: list[float | None] = Field(default_factory=list)
    """Cross-validation: the gap of each fold seed's decisions alone, in fold-seed order."""
    sd: float | None = None
    """Cross-validation with two or more fold seeds: sample standard deviation of `by_fold_seed`."""


def points(gap: float | None) -> float | None:
    """A gap as a fraction -> in points, to 4 decimals (None stays None)."""
    return None if gap is None else round(100 * gap, 4) + 0.0


def gap_in_points(
    metrics_gap: float | None, ci: tuple[float, float] | None, by_repeat: Sequence[float | None]
) -> Gap:
    """A gap, its interval and its value per fold seed (fractions, as the metrics give them) in points."""
    per_seed = [points(g) for g in by_repeat]
    known = [g for g in per_seed if g is not None]
    return Gap(
        mean=points(metrics_gap),
        low=points(ci[0]) if ci else None,
        high=points(ci[1]) if ci else None,
        by_fold_seed=per_seed,
        sd=round(statistics.stdev(known), 4) + 0.0 if len(known) >= 2 else None,
    )


def verdict(gap: Gap) -> str:
    """One phrase: does a random mix of single models do as well for the same money?"""
    if gap.mean is None:
        return "cheaper than every model"
    pts = gap.mean
    spread = "" if gap.sd is None else f" sd {gap.sd:.1f}"
    if gap.low is None or gap.high is None:
        return f"{pts:+.1f} pts{spread}"
    ci = f" [{gap.low:+.1f}, {gap.high:+.1f}]{spread}"
    # The words follow the interval, so a one-task difference on 100 tasks is not called a win.
    if gap.low > 0.05:
        return f"beats mix: {pts:+.1f} pts{ci}"
    if gap.high < -0.05:
        return f"dominated: {pts:+.1f} pts{ci}"
    if abs(pts) < 0.05 and gap.high - gap.low < 0.1:
        return "on the frontier"
    return f"~ mix: {pts:+.1f} pts{ci}"


def grid_mean(y: np.ndarray) -> np.ndarray:
    """Mean of y over a uniform grid along the last axis (trapezoid rule): a curve's average over a
    cost range."""
    out: np.ndarray = ((y[..., 1:] + y[..., :-1]) / 2).mean(axis=-1)
    return out


def mix_on_grid(mr: np.ndarray, mc: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(k, G): the best random mix of single models at each cost of `grid` (k, G), sample by sample.

    `mr`, `mc`: (models, k) the single models' resolved rates and costs on each of k samples."""
    g = grid.shape[1]
    mix = mix_resolved_at_cost(np.repeat(mr, g, axis=1), np.repeat(mc, g, axis=1), grid.ravel())
    return mix.reshape(grid.shape)


def area_vs_mix(curve: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """(k,): the mean over a uniform cost grid of a curve minus the best mix there (`mix_on_grid` of the
    same grid), in points: the area between curve and mix frontier divided by the cost range."""
    out: np.ndarray = 100 * grid_mean(curve - mix)
    return out
