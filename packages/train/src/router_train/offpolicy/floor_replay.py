"""The floor replayed on another harness's traffic: the prior is one table's per-model cost and resolve
rate, the traffic another table of the same models (every model's outcome on every task), streamed in a
seeded order. Arms at each objective:

- `static floor`: the mix at the objective on the prior table (`scoring.floor`), each task by its key;
- `learning floor`: `offpolicy.floor_learner.FloorLearner`, assigning each task and observing its served
  outcome and cost, exactly as serve drives it.

Each arm's regret after t tasks: the best mix in hindsight at the objective on the stream's first t tasks
(every model's true mean there, `router_oracle.frontier`) minus the arm's resolved rate there, in points;
beside it the arm's spend over the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_oracle.frontier import ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import OracleTable
from router_train.offpolicy.floor_learner import FloorLearner
from router_train.scoring.dial import outcome_matrices
from router_train.scoring.floor import Objective, floor_mix, floor_pick

CHECKPOINTS = (100, 200, 500)
"""Stream lengths regret is reported at (capped at the stream)."""


@dataclass(frozen=True)
class Traffic:
    """A traffic table's outcomes, tasks sorted by id, models in the prior's order."""

    models: list[str]
    """Pool model ids (the prior's order)."""
    keys: list[str]
    """Task keys (instance ids)."""
    resolved: np.ndarray
    """(tasks, models) resolved."""
    cost: np.ndarray
    """(tasks, models) cost, USD."""


def table_points(table: OracleTable, models: Sequence[str]) -> list[ModelPoint]:
    """Each model's mean cost and resolve rate over a table's tasks (the prior the floor starts from)."""
    resolved, cost = outcome_matrices(table.tasks, list(models))
    return [
        ModelPoint(model=m, cost=float(cost[:, j].mean()), resolved=float(resolved[:, j].mean()))
        for j, m in enumerate(models)
    ]


def traffic_of(table: OracleTable, models: Sequence[str]) -> Traffic:
    """The traffic's arrays; its pool must be `models`."""
    if sorted(table.pool.ids) != sorted(models):
        raise ValueError(f"the traffic's pool {sorted(table.pool.ids)} is not the prior's {sorted(models)}")
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)
    resolved, cost = outcome_matrices(tasks, list(models))
    return Traffic(list(models), [t.instance_id for t in tasks], resolved, cost)


class ArmPoint(FrozenModel):
    """One arm after the first `tasks` tasks of a stream."""

    tasks: int
    """Tasks served so far."""
    regret: float
    """Best mix in hindsight at the objective minus the arm's resolved rate, in points."""
    spend_ratio: float | None
    """Mean cost per task over the budget (None: a quality objective)."""


def hindsight(tr: Traffic, rows: np.ndarray, objective: Objective) -> tuple[float, float]:
    """(resolved, cost) of the best mix at `objective` on the tasks `rows` (every model's true mean)."""
    points = [
        ModelPoint(model=m, cost=float(tr.cost[rows, j].mean()), resolved=float(tr.resolved[rows, j].mean()))
        for j, m in enumerate(tr.models)
    ]
    mix = floor_mix(points, objective)
    return mix.resolved, mix.cost


def learning_stream(
    tr: Traffic, order: np.ndarray, prior: Sequence[ModelPoint], objective: Objective, **learner: float
) -> tuple[np.ndarray, np.ndarray]:
    """The learning arm on one stream: (served model column, propensity) per arrival, the learner
    observing each served outcome before the next task (what serve does)."""
    fl = FloorLearner(prior, objective, **learner)  # type: ignore[arg-type]
    served = np.zeros(len(order), dtype=np.int64)
    prop = np.zeros(len(order))
    for t, i in enumerate(order):
        a = fl.assign(tr.keys[i])
        j = tr.models.index(a.model)
        served[t], prop[t] = j, a.propensity
        fl.observe(a.model, float(tr.resolved[i, j]), float(tr.cost[i, j]))
    return served, prop


def static_stream(
    tr: Traffic, order: np.ndarray, prior: Sequence[ModelPoint], objective: Objective
) -> np.ndarray:
    """The static floor on one stream: the prior table's mix, each task by its key."""
    mix = floor_mix(prior, objective)
    return np.asarray([tr.models.index(floor_pick(mix, tr.keys[i])) for i in order], dtype=np.int64)


def arm_points(
    tr: Traffic,
    order: np.ndarray,
    served: np.ndarray,
    objective: Objective,
    checkpoints: Sequence[int] = CHECKPOINTS,
) -> list[ArmPoint]:
    """The arm's regret and spend after each of `checkpoints` tasks (capped at the stream)."""
    out = []
    for t in sorted({min(c, len(order)) for c in checkpoints}):
        rows, cols = order[:t], served[:t]
        best, _ = hindsight(tr, rows, objective)
        r, c = float(tr.resolved[rows, cols].mean()), float(tr.cost[rows, cols].mean())
        ratio = None if objective.budget is None else round(c / objective.budget, 4)
        out.append(ArmPoint(tasks=t, regret=round(100 * (best - r), 4), spend_ratio=ratio))
    return out


def replay_objective(
    tr: Traffic,
    prior: Sequence[ModelPoint],
    objective: Objective,
    seeds: Sequence[int],
    checkpoints: Sequence[int] = CHECKPOINTS,
    **learner: float,
) -> dict[str, list[list[ArmPoint]]]:
    """Arm name -> per stream seed its points (`arm_points` at `checkpoints`)."""
    out: dict[str, list[list[ArmPoint]]] = {"static floor": [], "learning floor": []}
    for seed in seeds:
        order = np.random.default_rng(seed).permutation(len(tr.keys))
        static = static_stream(tr, order, prior, objective)
        out["static floor"].append(arm_points(tr, order, static, objective, checkpoints))
        served, _ = learning_stream(tr, order, prior, objective, **learner)
        out["learning floor"].append(arm_points(tr, order, served, objective, checkpoints))
    return out


def at_checkpoints(arms: dict[str, list[list[ArmPoint]]], n: int) -> dict[str, list[list[ArmPoint]]]:
    """`arms`' points at `CHECKPOINTS` only (capped at a stream of `n` tasks): the printed lines of a
    replay computed at more checkpoints for a plot."""
    keep = {min(c, n) for c in CHECKPOINTS}
    return {arm: [[p for p in s if p.tasks in keep] for s in per_seed] for arm, per_seed in arms.items()}


def budget_at(prior: Sequence[ModelPoint], share: float) -> float:
    """The budget `share` of the way from the cheapest to the dearest model on the prior table."""
    lo, hi = min(p.cost for p in prior), max(p.cost for p in prior)
    return lo + share * (hi - lo)


def regret_lines(name: str, objective: Objective, arms: dict[str, list[list[ArmPoint]]]) -> list[str]:
    """One line per arm: mean regret [min, max over seeds] and mean spend/budget at each checkpoint."""
    out = []
    for arm, per_seed in arms.items():
        cells = []
        for k, first in enumerate(per_seed[0]):
            regrets = [s[k].regret for s in per_seed]
            cell = f"@{first.tasks}: {np.mean(regrets):+.2f} [{min(regrets):+.2f}, {max(regrets):+.2f}]"
            ratios = [r for s in per_seed if (r := s[k].spend_ratio) is not None]
            if ratios:
                cell += f" spend {np.mean(ratios):.2f}"
            cells.append(cell)
        out.append(f"{name:<28} {objective.describe():<18} {arm:<15} " + "  ".join(cells))
    return out
