"""The frontier measured on the team's own traffic, and the regret so far (issue 53 item 5): what the
dashboard's frontier section shows, computed from the shared store's records alone (no replica's
checkpoint), so every replica draws the same section.

- Per model: its served tasks' resolved rate and mean cost, each with a 95% percentile bootstrap interval
  over those tasks (`BOOTSTRAP` resamples, seed 0), on the outcomes the learned floor observes
  (`serve.floor_choice.observed`: cost known, model in the pool).
- The mix line: the cost frontier of those points (`router_oracle.frontier`, the mix the floor deploys).
- Where serving lands: the served tasks' mean cost and resolved rate.
- Regret: the best mix at that realised spend on the measured points minus the served resolved rate,
  with the same bootstrap over tasks (each resample recomputes the points, the spend and the served rate).
- The learner's belief: the posterior recorded with the latest learned-floor decision (`posterior`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.frontier import ModelPoint, best_mix_at_cost, frontier_vertices
from router_train.scoring.floor import Objective
from router_train.serve.export import ServeRecords
from router_train.serve.floor_choice import observed

BOOTSTRAP = 400
"""Resamples of the served tasks behind every interval of the section."""
LEVEL = 0.95
"""Coverage of the intervals."""


@dataclass(frozen=True)
class Band:
    """An estimate and its percentile bootstrap interval."""

    value: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class ModelPointBand:
    """One model as measured on the traffic."""

    model: str
    tasks: int
    """Served tasks with an outcome and a known cost."""
    resolved: Band
    cost: Band


@dataclass(frozen=True)
class Frontier:
    """The section's figures."""

    objective: Objective | None
    """What serve serves (None: no objective, the safe default point)."""
    models: list[ModelPointBand]
    """Per pool model with outcomes, in pool order."""
    line: list[tuple[float, float]]
    """The frontier's vertices (cost, resolved), cheapest first."""
    served: tuple[float, float] | None
    """Where serving lands: (mean cost, resolved rate) of the served tasks; None without outcomes."""
    tasks: int
    """Outcomes the section reads."""
    regret: Band | None
    """Best mix at the realised spend minus served resolved rate (a fraction); None without outcomes."""
    belief: list[tuple[str, float, float]] | None
    """The latest learned-floor decision's posterior means (model, cost, resolved); None: none yet."""
    quality_rate: float | None
    """A quality objective's target rate on the measured points (None otherwise)."""


def _points(
    models: Sequence[str], served: np.ndarray, resolved: np.ndarray, cost: np.ndarray
) -> list[ModelPoint]:
    """Each model with served tasks: its mean cost and resolved rate over them."""
    out = []
    for j, m in enumerate(models):
        rows = served == j
        if rows.any():
            mean_cost, rate = float(cost[rows].mean()), float(resolved[rows].mean())
            out.append(ModelPoint(model=m, cost=mean_cost, resolved=rate))
    return out


def _regret(points: Sequence[ModelPoint], resolved: np.ndarray, cost: np.ndarray) -> float:
    mix = best_mix_at_cost(points, float(cost.mean()))
    best = mix.resolved if mix is not None else float(resolved.mean())
    return best - float(resolved.mean())


def _band(value: float, draws: Sequence[float]) -> Band:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(np.asarray(draws), [tail, 100 - tail]) if draws else (value, value)
    return Band(value, float(low), float(high))


def frontier(records: ServeRecords, pool: Sequence[str], objective: Objective | None) -> Frontier:
    """The measured frontier, where serving lands and the regret so far, from `records`."""
    rows = observed(list(records.outcomes.values()), pool)
    served = np.asarray([list(pool).index(o.model) for o in rows], dtype=np.int64)
    resolved = np.asarray([float(o.resolved) for o in rows])
    cost = np.asarray([float(o.cost or 0.0) for o in rows])
    points = _points(pool, served, resolved, cost)
    rng = np.random.default_rng(0)
    per_model: dict[str, tuple[list[float], list[float]]] = {p.model: ([], []) for p in points}
    regrets = []
    for _ in range(BOOTSTRAP if len(rows) > 1 else 0):
        i = rng.integers(0, len(rows), len(rows))
        sample = _points(pool, served[i], resolved[i], cost[i])
        for p in sample:
            per_model[p.model][0].append(p.resolved)
            per_model[p.model][1].append(p.cost)
        regrets.append(_regret(sample, resolved[i], cost[i]))
    bands = [
        ModelPointBand(
            p.model,
            int((served == list(pool).index(p.model)).sum()),
            _band(p.resolved, per_model[p.model][0]),
            _band(p.cost, per_model[p.model][1]),
        )
        for p in points
    ]
    belief = _belief(records)
    quality = None
    if objective is not None and objective.quality is not None and points:
        quality = objective.target_rate(points)
    return Frontier(
        objective=objective,
        models=bands,
        line=[(v.cost, v.resolved) for v in frontier_vertices(points)] if points else [],
        served=(float(cost.mean()), float(resolved.mean())) if len(rows) else None,
        tasks=len(rows),
        regret=_band(_regret(points, resolved, cost), regrets) if len(rows) else None,
        belief=belief,
        quality_rate=quality,
    )


def _belief(records: ServeRecords) -> list[tuple[str, float, float]] | None:
    """The posterior recorded with the latest learned-floor decision (by time, then task key)."""
    floor = [d for d in records.decisions.values() if d.posterior is not None]
    if not floor:
        return None
    last = max(floor, key=lambda d: (d.time, d.task)).posterior
    assert last is not None
    return [
        (str(m), float(c), float(r))
        for m, c, r in zip(last["models"], last["cost"], last["resolved"], strict=True)
    ]
