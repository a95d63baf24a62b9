"""Paired bootstrap of a router's gap to the random-mix frontier.

On a 100-task eval split a gap of one point is one task: the interval says whether the data can tell
the router from a random mix at all. Tasks are resampled with replacement; the router and every single
model are re-measured on the same resample (paired), and the frontier is rebuilt from the resampled
single models, so the interval covers the frontier's own noise too. Deterministic given the seed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from router_oracle.report_numbers import EPS

RESAMPLES = 1000
"""Bootstrap resamples; 1000 keeps the 2.5/97.5 percentiles stable to about a tenth of a point."""


class TaskResample:
    """Fixed resample indices plus every single model's per-task outcomes on the evaluated tasks."""

    def __init__(
        self, model_resolved: np.ndarray, model_cost: np.ndarray, seed: int, resamples: int = RESAMPLES
    ):
        """`model_resolved`, `model_cost`: arrays of shape (models, tasks)."""
        self.model_resolved = model_resolved
        self.model_cost = model_cost
        n = model_resolved.shape[1]
        self.idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        # (models, resamples): each single model's resolved rate and mean cost on each resample.
        self.mr = model_resolved[:, self.idx].mean(axis=2)
        self.mc = model_cost[:, self.idx].mean(axis=2)

    def gap_samples(
        self, resolved: Sequence[float], cost: Sequence[float], *, floor_at_cheapest: bool = False
    ) -> np.ndarray:
        """(router resolved - best mix at the router's cost) on each resample, shape (resamples,).

        `resolved`, `cost`: the router's expected outcome per task, in the same task order. NaN on the
        resamples where the router is cheaper than every single model (no mix to compare with), unless
        `floor_at_cheapest`: there it is compared with the cheapest single model instead (the best mix
        at that model's cost), so it gets no credit for costing less."""
        r = np.asarray(resolved, dtype=float)[self.idx].mean(axis=1)
        c = np.asarray(cost, dtype=float)[self.idx].mean(axis=1)
        if floor_at_cheapest:
            c = np.maximum(c, self.mc.min(axis=0))
        best = mix_resolved_at_cost(self.mr, self.mc, c)
        out: np.ndarray = np.where(np.isfinite(best), r - best, np.nan)
        return out

    def gap_interval(
        self, resolved: Sequence[float], cost: Sequence[float], level: float = 0.95
    ) -> tuple[float, float] | None:
        """Percentile interval of (router resolved - best mix at the router's cost) over the resamples.

        `resolved`, `cost`: the router's expected outcome per task, in the same task order. None when
        the router is cheaper than every single model on most resamples (no mix to compare with).
        """
        return percentile_interval(self.gap_samples(resolved, cost), level)


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the finite bootstrap `samples`; None when half of them or more are NaN."""
    ok = np.isfinite(samples)
    if ok.sum() < 0.5 * len(samples):
        return None
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(samples[ok], [tail, 100 - tail])
    return float(lo), float(hi)


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
