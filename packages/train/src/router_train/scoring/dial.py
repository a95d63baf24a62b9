"""The cost dial: one scalar that moves any scoring router from the cheapest model toward the strongest.

A router that scores models (the GRPO policies' logits, a classifier's log-probabilities, kNN's smoothed
log vote shares, per-model log-probabilities of an LLM router) routes a task to

    argmax_m  score(task, m) - dial x cost_m

with `cost_m` the model's mean cost per task on the router's training tasks (a router does not know a
task's cost before running it). `dial` is a price: score units given up per USD of mean cost.
`dial = 0` is the router as trained (its greedy route), a large positive dial routes everything to the
cheapest model, a large negative one to the most expensive. Why this form:
- It is monotone: for one task, if dial a < b choose models m_a and m_b, then optimality at a and at b
  add up to (b - a)(cost_{m_a} - cost_{m_b}) >= 0, so a higher dial never picks a model with a higher
  mean cost, and the mean of the chosen models' mean costs is non-increasing in the dial on any tasks.
  The measured cost of the routes (each task's own cost of the chosen model) follows it up to the
  task-to-task spread of costs (a task on which the dearer model happened to be cheap).
- It is a Lagrangian relaxation of "best routes under a mean-cost budget": with scores in resolved units
  (the oracle's resolve rates) it traces the best per-task assignment at every budget; with log-
  probabilities it trades the router's confidence against price, so the tasks it is least sure need the
  cheap model are the first to move up.
- Row constants do not matter (logits and log-softmax route alike), and the trained policy and its
  reward are untouched: the dial is applied at routing time only.

Scores differ in scale between routers, so a dial value means nothing across routers: a router's
`DialCalibration` (dial -> expected cost per task and resolved rate on its own training tasks) turns a
budget into its dial (`dial_for_budget`). The calibration reads training tasks only.

It lives in `scoring` (which imports neither `local` nor `evaluate`) so that the trainers can store a
calibration in their checkpoints; `router_train.evaluate.dial` re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol

import numpy as np
from pydantic import Field, model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Finite
from router_oracle.infra.report_numbers import rounded
from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.scoring.default_point import SafePoint
from router_train.scoring.metrics import task_outcome

_CHUNK = 256
"""Dial values evaluated per vectorised step (bounds memory at chunk x tasks x models floats)."""

MAX_CANDIDATES = 4096
"""At most this many dial values are tabulated; past it they are spread evenly over the breakpoints."""

BUDGET_TOL = 1e-9
"""A point costing this much over a budget (USD, float noise) still fits it."""

Price = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A cost in USD: finite, 0 or more (a negative price would make the dial favour the dearer model)."""

CHECKPOINT_POINTS = 201
"""Rows of the calibration table a checkpoint stores (`calibrate_policy`): steps of about 1/200 of the
cost range, a few kB of JSON."""


@dataclass(frozen=True)
class RouterScores:
    """One fitted router's per-model scores on its train tasks and on the tasks it routes (one partition)."""

    name: str
    """Router row name."""
    model_ids: list[str]
    """Column order of both matrices (the pool order)."""
    train: np.ndarray
    """(train tasks, models), in the partition's train order: what its dial is calibrated on."""
    test: np.ndarray
    """(test tasks, models), in the partition's test order: what it routes."""
    probabilities: np.ndarray | None = None
    """(test tasks, models): each model's predicted resolve probability, for routers that predict one
    (the IRT router); evaluate reports its calibration (`scoring.calibration`)."""
    tolerance: float | None = None
    """A router that routes by `irt.router.near_tie_routes` on `probabilities` (the IRT router): its
    near-tie tolerance (`evaluate --calibrate` re-routes it with re-estimated abilities and costs)."""
    safe_point: SafePoint | None = None
    """The default operating point this fit routes at (`scoring.safe_point`); None: its native route,
    no safe point chosen (`--no-safe-point`)."""


class CalibrationPoint(FrozenModel):
    """One dial value and what it buys on the training tasks."""

    dial: Finite
    """The dial (score units per USD of a model's mean cost; 0 = the router as trained)."""
    cost_per_task: Finite
    """Mean cost per task of the routes at this dial on the training tasks, USD."""
    resolved: Finite
    """Resolved rate of those routes on the training tasks."""


class DialCalibration(FrozenModel):
    """A router's dial table on its training tasks: what `--budget` is turned into a dial with. Every
    number is finite: a checkpoint holding NaN or infinity here is refused at load (an infinite cost
    would put every budget below or above every point), and no model cost is negative."""

    model_ids: list[str]
    """The pool, in score-column order."""
    model_costs: list[Price]
    """Each model's mean cost per task on the training tasks, USD: the dial's per-model price."""
    model_resolved: list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]] | None = None
    """Each model's resolved rate on the training tasks, in `model_ids` order: with `model_costs`, the
    single models whose frontier mix is the floor at a budget or quality (`scoring.floor`); None: an
    older checkpoint, calibrated before the floor."""
    n_tasks: int
    """Training tasks it was measured on."""
    points: list[CalibrationPoint]
    """Ascending dial (so falling cost); one per distinct route set, at most `max_points`."""

    @model_validator(mode="after")
    def _one_cost_per_model(self) -> DialCalibration:
        if len(set(self.model_ids)) != len(self.model_ids) or len(self.model_costs) != len(self.model_ids):
            raise ValueError("model_ids must name each model once, with one model_costs entry per model")
        if self.model_resolved is not None and len(self.model_resolved) != len(self.model_ids):
            raise ValueError("model_resolved must have one entry per model of model_ids")
        return self


def outcome_matrices(tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(resolved, cost), each (tasks, models): the env's measured outcome of every route (`task_outcome`)."""
    out = np.asarray([[task_outcome(t, m)[:2] for m in model_ids] for t in tasks], dtype=float)
    out = out.reshape(len(tasks), len(model_ids), 2)
    return out[:, :, 0], out[:, :, 1]


def model_mean_costs(tasks: Sequence[TaskRecord], model_ids: Sequence[str]) -> np.ndarray:
    """Each model's mean cost per task on `tasks` (the dial's price vector)."""
    if not tasks:
        raise ValueError("the dial's model costs need at least one training task")
    return outcome_matrices(tasks, model_ids)[1].mean(axis=0)


def _finite(scores: np.ndarray) -> np.ndarray:
    """Scores with -inf (a log-probability of 0) replaced by a finite floor well below every other score,
    so such a model is still reachable by a large enough dial and breakpoints stay finite."""
    s = np.asarray(scores, dtype=float)
    ok = np.isfinite(s)
    if ok.all():
        return s
    floor = (s[ok].min() if ok.any() else 0.0) - 50.0
    return np.where(ok, s, floor)


def apply_dial(scores: np.ndarray, costs: np.ndarray, dial: float | np.ndarray) -> np.ndarray:
    """Column index of argmax(score - dial x cost) per task (ties: the earlier column).

    `scores` (tasks, models); `costs` (models,) or (tasks, models); `dial` a scalar, or an array of
    shape (k,) giving (k, tasks)."""
    s = _finite(scores)
    c = np.asarray(costs, dtype=float)
    d = np.asarray(dial, dtype=float)
    if d.ndim == 0:
        out: np.ndarray = np.argmax(s - float(d) * c, axis=1)
        return out
    return np.argmax(s[None] - d[:, None, None] * c[None], axis=2)


def dial_candidates(scores: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Dial values, ascending, one inside every interval between the breakpoints where some task's route
    changes, plus one beyond each end: every distinct route set of the dial (spread evenly over the
    breakpoints when there are more than `MAX_CANDIDATES`)."""
    s = _finite(scores)
    c = np.broadcast_to(np.asarray(costs, dtype=float), s.shape)
    bps = []
    m = s.shape[1]
    for a in range(m):
        for b in range(a + 1, m):
            dc = c[:, a] - c[:, b]
            ok = np.abs(dc) > 1e-12
            bps.append((s[ok, a] - s[ok, b]) / dc[ok])
    flat = np.unique(np.concatenate(bps)) if bps else np.zeros(0)
    flat = flat[np.isfinite(flat)]
    if flat.size == 0:
        return np.zeros(1)
    if flat.size > MAX_CANDIDATES:
        flat = np.unique(np.quantile(flat, np.linspace(0, 1, MAX_CANDIDATES)))
    pad = max(1.0, float(flat[-1] - flat[0]))  # the ends stand for +-inf: far enough for unseen tasks too
    mids = (flat[:-1] + flat[1:]) / 2
    return np.concatenate([[flat[0] - pad], mids, [flat[-1] + pad]])


def _measured(tasks: Sequence[TaskInput]) -> list[TaskRecord]:
    """`tasks` as table rows with their measured outcomes (a task without them needs `outcomes` given)."""
    rows = [t for t in tasks if isinstance(t, TaskRecord)]
    if len(rows) != len(tasks):
        raise ValueError("calibrate: tasks without measured outcomes need `outcomes` given")
    return rows


def calibrate(
    scores: np.ndarray,
    tasks: Sequence[TaskInput],
    model_ids: Sequence[str],
    *,
    costs: np.ndarray | None = None,
    max_points: int | None = None,
    outcomes: tuple[np.ndarray, np.ndarray] | None = None,
) -> DialCalibration:
    """The dial table of a router on its training `tasks`: `scores` (tasks, models) are its scores there.

    `costs`: the dial's price, default each model's mean cost on `tasks`; `max_points` thins the table
    evenly (by index, so evenly in cost) for storage, keeping both ends; `outcomes`: `outcome_matrices`
    of `tasks` when the caller has them already (required for tasks without measured outcomes, such as
    logged ones)."""
    if len(tasks) != scores.shape[0] or len(model_ids) != scores.shape[1]:
        raise ValueError(f"scores {scores.shape} do not match {len(tasks)} tasks x {len(model_ids)} models")
    resolved, cost = outcome_matrices(_measured(tasks), model_ids) if outcomes is None else outcomes
    price = cost.mean(axis=0) if costs is None else np.asarray(costs, dtype=float)
    dials = dial_candidates(scores, price)
    rows = np.arange(len(tasks))
    table: list[tuple[float, float, float]] = []
    for start in range(0, len(dials), _CHUNK):
        chunk = dials[start : start + _CHUNK]
        picks = apply_dial(scores, price, chunk)  # (k, tasks)
        c = cost[rows, picks].mean(axis=1)
        r = resolved[rows, picks].mean(axis=1)
        table += zip(chunk.tolist(), c.tolist(), r.tolist(), strict=True)
    points: list[tuple[float, float, float]] = []
    for d, c_, r_ in table:  # consecutive equal outcomes are one route set: keep its first dial
        if points and abs(points[-1][1] - c_) < 1e-12 and abs(points[-1][2] - r_) < 1e-12:
            continue
        points.append((d, c_, r_))
    if max_points is not None and len(points) > max_points >= 2:
        keep = np.unique(np.round(np.linspace(0, len(points) - 1, max_points)).astype(int))
        points = [points[i] for i in keep]
    return DialCalibration(
        model_ids=list(model_ids),
        model_costs=[rounded(x) for x in (price if price.ndim == 1 else price.mean(axis=0))],
        model_resolved=[rounded(x) for x in resolved.mean(axis=0)],
        n_tasks=len(tasks),
        points=[
            CalibrationPoint(dial=rounded(d), cost_per_task=rounded(c_), resolved=rounded(r_))
            for d, c_, r_ in points
        ],
    )


def operating_point(calibration: DialCalibration, budget_usd: float) -> CalibrationPoint:
    """The tabulated point spending the most without exceeding `budget_usd` per task on the training
    tasks (ties: the higher resolved rate); below the cheapest point, the cheapest point."""
    pts = calibration.points
    if not pts:
        raise ValueError("empty dial calibration")
    fits = [p for p in pts if p.cost_per_task <= budget_usd + BUDGET_TOL]
    if not fits:
        return min(pts, key=lambda p: (p.cost_per_task, -p.resolved))
    return max(fits, key=lambda p: (p.cost_per_task, p.resolved, -p.dial))


def point_for_quality(calibration: DialCalibration, rate: float) -> CalibrationPoint:
    """The cheapest tabulated point resolving at least `rate` on the training tasks (ties: the higher
    resolved rate); none reaching it, the point resolving most."""
    pts = calibration.points
    if not pts:
        raise ValueError("empty dial calibration")
    reach = [p for p in pts if p.resolved >= rate - BUDGET_TOL]
    if not reach:
        return max(pts, key=lambda p: (p.resolved, -p.cost_per_task, p.dial))
    return min(reach, key=lambda p: (p.cost_per_task, -p.resolved, -p.dial))


def dial_for_budget(calibration: DialCalibration, budget_usd: float) -> float:
    """The dial whose routes cost at most `budget_usd` per task on the router's training tasks, as close
    to it as the table allows (`operating_point`)."""
    return operating_point(calibration, budget_usd).dial


def point_for_dial(calibration: DialCalibration, dial: float) -> CalibrationPoint:
    """The expected cost and resolved rate of `dial` on the training tasks: the last tabulated point at or
    below it (each point stands for the dials up to the next one; the cheapest end above them all)."""
    if not calibration.points:
        raise ValueError("empty dial calibration")
    below = [p for p in calibration.points if p.dial <= dial]
    return below[-1] if below else calibration.points[0]


class ScoringPolicy(Protocol):
    """A router with per-model scores: the local GRPO policy (`RouterPolicy`) and the like."""

    pool_ids: list[str]

    def logits(self, tasks: Sequence[TaskInput]) -> np.ndarray: ...


def calibrate_policy(
    policy: ScoringPolicy, train_tasks: Sequence[TaskRecord], *, max_points: int | None = CHECKPOINT_POINTS
) -> DialCalibration:
    """The calibration a checkpoint stores: `policy`'s dial table on the tasks it was trained on."""
    return calibrate(policy.logits(train_tasks), train_tasks, policy.pool_ids, max_points=max_points)


def route_with_dial(
    policy: ScoringPolicy, tasks: Sequence[TaskRecord], calibration: DialCalibration, dial: float
) -> list[str]:
    """`policy`'s routes of `tasks` at `dial`, priced with the calibration's per-model costs (the ones
    its table was measured with); `dial_for_budget` gives the dial of a budget."""
    if list(calibration.model_ids) != list(policy.pool_ids):
        raise ValueError(f"calibration is over {calibration.model_ids}, the policy over {policy.pool_ids}")
    if not tasks:
        return []
    picks = apply_dial(policy.logits(tasks), np.asarray(calibration.model_costs), dial)
    return [policy.pool_ids[int(i)] for i in picks]
