"""The paired bootstrap over tasks: fixed resample indices and each single model re-measured on them.

On a 100-task eval split a gap of one point is one task: the interval says whether the data can tell
the router from a random mix at all. Tasks are resampled with replacement; a router and every single
model are re-measured on the same resample (paired), so an interval covers the single models' (and the
frontier's) own noise too. Deterministic given the seed. The gap's interval on these resamples:
`vs_mix.gap_interval`; the curves' intervals use the same resamples.
"""

from __future__ import annotations

import numpy as np

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


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the finite bootstrap `samples`; None when half of them or more are NaN."""
    ok = np.isfinite(samples)
    if ok.sum() < 0.5 * len(samples):
        return None
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(samples[ok], [tail, 100 - tail])
    return float(lo), float(hi)
