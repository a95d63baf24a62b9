"""Off-policy estimates of a routing policy's resolved rate and cost per task from logged decisions.

A logged task i was served model a_i with probability p_i (the decision's `propensity`) and has an
outcome r_i (resolved 0/1, or its cost). A deterministic target policy pi that routes task i to pi_i is
estimated with the weights w_i = [pi_i == a_i] / p_i:

- IPS (inverse propensity): mean(w r), unbiased whenever every p_i > 0 where pi_i == a_i could happen;
- SNIPS (self-normalised): sum(w r) / sum(w), slightly biased, far less variance;
- DR (doubly robust): mean(q(i, pi_i) + w (r - q(i, a_i))) with a reward model q (tasks, models): unbiased
  when either the propensities or q are right, and exactly the truth when q is.

Each comes with a 95% percentile bootstrap interval over logged tasks (seeded: the same log gives the same
numbers) and the effective sample size (sum w)^2 / sum(w^2). A policy that picks a model the log holds
too few outcomes of gets a warning instead of numbers: its weights rest on a handful of tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.infra.frozen_model import FrozenModel

MIN_TRIED = 10
"""A model served on fewer logged tasks (with an outcome) than this is too little explored to estimate a
policy that routes to it."""
BOOTSTRAP = 1000
"""Bootstrap resamples of the logged tasks, by default."""
LEVEL = 0.95
"""Coverage of the intervals."""


@dataclass(frozen=True)
class Logged:
    """Logged tasks with an outcome: what the serving policy did and what it got."""

    models: list[str]
    """The pool (column order of `served`, picks and reward models)."""
    served: np.ndarray
    """(n,) column of the model each task was served by."""
    propensity: np.ndarray
    """(n,) the probability the serving policy gave that model, > 0."""
    resolved: np.ndarray
    """(n,) 1.0 resolved, 0.0 not."""
    cost: np.ndarray
    """(n,) the task's cost, USD; NaN where the outcome has none (left out of the cost estimates)."""

    def __post_init__(self) -> None:
        n = len(self.served)
        if not (len(self.propensity) == len(self.resolved) == len(self.cost) == n):
            raise ValueError("served, propensity, resolved and cost must have one entry per logged task")
        if n and not (np.all(self.propensity > 0) and np.all(self.propensity <= 1 + 1e-9)):
            raise ValueError("every propensity must be in (0, 1]")

    def tried(self) -> np.ndarray:
        """(models,) logged tasks served by each model."""
        return np.bincount(self.served, minlength=len(self.models))

    def reward_models(self) -> tuple[np.ndarray, np.ndarray]:
        """Per model, the resolve rate and mean cost of the tasks it served (the plain per-model means
        DR uses when the policy brings no model of its own); a model never served gets the overall mean."""
        k = len(self.models)
        rate, cost = np.zeros(k), np.zeros(k)
        all_r = float(self.resolved.mean()) if len(self.resolved) else 0.0
        priced = ~np.isnan(self.cost)
        all_c = float(self.cost[priced].mean()) if priced.any() else 0.0
        for m in range(k):
            mine = self.served == m
            rate[m] = float(self.resolved[mine].mean()) if mine.any() else all_r
            mc = mine & priced
            cost[m] = float(self.cost[mc].mean()) if mc.any() else all_c
        return rate, cost


class Interval(FrozenModel):
    """An estimate and its bootstrap interval."""

    value: float
    """The estimate on the log as it is."""
    low: float
    """Lower end of the 95% percentile bootstrap interval over logged tasks."""
    high: float
    """Upper end."""


class MetricEstimate(FrozenModel):
    """The three estimates of one metric (resolved rate, or cost per task)."""

    ips: Interval
    """Inverse propensity scoring."""
    snips: Interval
    """Self-normalised IPS."""
    dr: Interval
    """Doubly robust."""


class PolicyEstimate(FrozenModel):
    """What the log tells of one policy."""

    policy: str
    """Its name (`serving`, `router`, `always:<model>`, `candidate:<path>`)."""
    tasks: int
    """Logged tasks with an outcome."""
    matched: int
    """Of them, the tasks where the policy picks the model that served it (the only ones IPS reads)."""
    ess: float
    """Effective sample size of the weights, (sum w)^2 / sum(w^2)."""
    resolved: MetricEstimate | None
    """Resolved rate; None with a warning."""
    cost: MetricEstimate | None
    """Cost per task, USD, over the priced outcomes; None with a warning or when none is priced."""
    warning: str | None = None
    """Why there are no numbers (a model the policy picks is too little explored)."""


def under_explored(picks: np.ndarray, logged: Logged, min_tried: int = MIN_TRIED) -> str | None:
    """A warning when the policy routes a logged task to a model served on fewer than `min_tried` logged
    tasks, else None."""
    tried = logged.tried()
    chosen = np.bincount(picks, minlength=len(logged.models))
    for m in np.flatnonzero(chosen):
        if tried[m] < min_tried:
            return (
                f"picks {logged.models[m]} on {int(chosen[m])} of {len(picks)} tasks, but the log has "
                f"{int(tried[m])} outcome(s) of it (< {min_tried}): explore more before trusting an estimate"
            )
    return None


def _estimates(
    w: np.ndarray, r: np.ndarray, q_pick: np.ndarray, q_served: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IPS, SNIPS and DR along the last axis (rows: the log, or bootstrap resamples of it)."""
    ips = (w * r).mean(axis=-1)
    sw = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        snips = np.where(sw > 0, (w * r).sum(axis=-1) / np.where(sw > 0, sw, 1.0), np.nan)
    dr = (q_pick + w * (r - q_served)).mean(axis=-1)
    return ips, snips, dr


def _metric(
    w: np.ndarray,
    r: np.ndarray,
    q_pick: np.ndarray,
    q_served: np.ndarray,
    resamples: np.ndarray,
) -> MetricEstimate:
    point = _estimates(w, r, q_pick, q_served)
    boot = _estimates(w[resamples], r[resamples], q_pick[resamples], q_served[resamples])
    tail = (1 - LEVEL) / 2 * 100
    out = []
    for v, b in zip(point, boot, strict=True):
        b = b[~np.isnan(b)]
        lo, hi = np.percentile(b, [tail, 100 - tail]) if b.size else (np.nan, np.nan)
        out.append(Interval(value=float(v), low=float(lo), high=float(hi)))
    return MetricEstimate(ips=out[0], snips=out[1], dr=out[2])


def estimate_policy(
    name: str,
    picks: np.ndarray | None,
    logged: Logged,
    *,
    q_resolved: np.ndarray | None = None,
    q_cost: np.ndarray | None = None,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
    min_tried: int = MIN_TRIED,
) -> PolicyEstimate:
    """The estimates of the policy routing logged task i to column `picks[i]` (None: the serving policy
    itself, every weight 1). `q_resolved` / `q_cost` (tasks, models): DR's reward models, by default the
    log's per-model means (`Logged.reward_models`). The bootstrap resamples are drawn from `seed`."""
    n, k = len(logged.served), len(logged.models)
    served = logged.served
    on_policy = picks is None
    if picks is None:
        picks = served
    if len(picks) != n:
        raise ValueError(f"{name}: {len(picks)} picks for {n} logged tasks")
    warning = under_explored(picks, logged, min_tried) if n else "no logged outcomes"
    # The logging policy's own value is the plain mean (its weight pi(a_i) / p_i is 1 on every task).
    w = np.ones(n) if on_policy else (picks == served) / logged.propensity
    matched = int((picks == served).sum())
    ess = float(w.sum() ** 2 / (w**2).sum()) if n and (w**2).sum() > 0 else 0.0
    if warning is not None:
        return PolicyEstimate(
            policy=name, tasks=n, matched=matched, ess=ess, resolved=None, cost=None, warning=warning
        )
    rate, mean_cost = logged.reward_models()
    qr = np.broadcast_to(rate, (n, k)) if q_resolved is None else np.asarray(q_resolved, dtype=float)
    qc = np.broadcast_to(mean_cost, (n, k)) if q_cost is None else np.asarray(q_cost, dtype=float)
    rows = np.arange(n)
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, n, size=(bootstrap, n))
    resolved = _metric(w, logged.resolved, qr[rows, picks], qr[rows, served], resamples)
    priced = ~np.isnan(logged.cost)
    cost = None
    if priced.any():
        idx = np.flatnonzero(priced)
        sub = rng.integers(0, idx.size, size=(bootstrap, idx.size))
        cost = _metric(w[idx], logged.cost[idx], qc[idx, picks[idx]], qc[idx, served[idx]], sub)
    return PolicyEstimate(policy=name, tasks=n, matched=matched, ess=ess, resolved=resolved, cost=cost)


def always(model: int, n: int) -> np.ndarray:
    """The picks of the policy that always routes to column `model`."""
    return np.full(n, model, dtype=np.int64)


def columns(models: Sequence[str], picks: Sequence[str], where: str) -> np.ndarray:
    """Model ids as columns of `models`; an unknown one is a `ValueError` naming `where`."""
    col = {m: j for j, m in enumerate(models)}
    unknown = sorted({p for p in picks if p not in col})
    if unknown:
        raise ValueError(
            f"{where}: routes to {unknown[0]!r}, not a model of the log's pool ({', '.join(models)})"
        )
    return np.asarray([col[p] for p in picks], dtype=np.int64)
