"""The one rule that turns a checkpoint's scores and its operating point into a model per task.

Every place that deploys a saved router goes through `deploy`: `route` and `serve` (`Router.route_many`),
`evaluate --checkpoint` (the kinds' `judge`), feedback's candidates (`offpolicy.from_log.candidate_picks`),
replay's static prior (`offpolicy.replay`) and serve's exploration (which draws around the router's pick).
A simulator that re-implemented the rule would judge a policy nobody deploys (issue 46).

An operating point is frozen at construction (`OperatingPoint`); `route.operating_point.point_for` builds
it from the checkpoint's stored safe point, a budget or a dial.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from router_oracle.task_input import TaskInput
from router_train.scoring.dial import CalibrationPoint, DialCalibration, apply_dial
from router_train.scoring.floor import FloorMix, floor_pick

Chooser = Literal["router", "floor"]
"""Who picked a decision's model at an objective: the learned router or the floor (the mix)."""


class Scorer:
    """What a router kind computes for tasks: `.name`, `.pool` (model ids), `.scores`, `.dial_scores`."""

    name: str
    """Router name, written in every decision (kind and source, e.g. `local:checkpoint.json`)."""
    pool: list[str]
    """The pool's model ids (the columns of `scores`)."""

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        """Per task and pool model, the router's score, shape (len(tasks), len(pool)); the native route is
        the argmax (first of ties)."""
        raise NotImplementedError

    def dial_scores(self, tasks: Sequence[TaskInput]) -> np.ndarray | None:
        """Per task and pool model, the scores the cost dial is applied to (evaluate's curves' scores: the
        same argmax as `scores` at dial 0); None for scorers without a dial."""
        return None


@dataclass(frozen=True)
class OperatingPoint:
    """Where a scoring router routes: natively (`dial` and `model` None), at a cost dial, or every task to
    one model. Built once (`route.operating_point.point_for`) and never changed."""

    dial: float | None = None
    """The cost dial routes are picked with; None: no dial."""
    costs: tuple[float, ...] | None = None
    """With `dial`: each pool model's price, USD, in pool order (the calibration's `model_costs`)."""
    model: str | None = None
    """Every task goes to this pool model (a safe default point that fell back to the cheapest model)."""
    reason: str | None = None
    """Written in every decision's `reason`: why it routes here and not where asked (None: nothing to say)."""
    calibration: DialCalibration | None = None
    """The dial table the dial was set from (a budget or a dial), else None."""
    bought: CalibrationPoint | None = None
    """What the dial buys on the router's training tasks (cost per task, resolved rate), else None."""
    default_point: str | None = None
    """The safe default point it routes at, in words (`SafePoint.describe`), when it routes at one."""
    note: str | None = None
    """One line for stderr at load (a budget or dial refused: what it routes at instead), else None."""
    floor: FloorMix | None = None
    """Every task goes to the model the floor assigns its key (`scoring.floor.floor_pick`): the mix of
    single models at the user's objective, where the router's own point is not backed; else None."""
    chooser: Chooser | None = None
    """With an objective or dial: who picks each task's model, `router` (its scores at `dial`) or
    `floor` (the mix), written in every decision; None: the default point (no objective)."""


NATIVE = OperatingPoint()
"""The router as trained: the argmax of its scores."""


def dial_point(
    pool: Sequence[str], dial: float, calibration: DialCalibration, bought: CalibrationPoint, **extra: object
) -> OperatingPoint:
    """The point routing at `dial`, priced with `calibration`'s per-model costs in `pool` order."""
    if sorted(calibration.model_ids) != sorted(pool):
        raise ValueError(f"calibration is over {calibration.model_ids}, the router's pool is {list(pool)}")
    cost = dict(zip(calibration.model_ids, calibration.model_costs, strict=True))
    return OperatingPoint(
        dial=dial,
        costs=tuple(cost[m] for m in pool),
        calibration=calibration,
        bought=bought,
        **extra,  # type: ignore[arg-type]
    )


def deploy(
    scorer: Scorer, point: OperatingPoint, tasks: Sequence[TaskInput]
) -> tuple[list[int], np.ndarray | None]:
    """Per task, the column of `scorer.pool` it is routed to at `point`, and the scores that pick reads
    (with a dial: score - dial x price, -inf kept; None when every task goes to one model)."""
    if point.model is not None:  # no score can move it
        return [scorer.pool.index(point.model)] * len(tasks), None
    if point.floor is not None:  # the task's key alone picks: the same model on every replica and turn
        return [scorer.pool.index(floor_pick(point.floor, t.instance_id)) for t in tasks], None
    if point.dial is None:
        s = scorer.scores(tasks)
        return [int(j) for j in np.argmax(s, axis=1)], s
    raw = scorer.dial_scores(tasks)
    assert raw is not None and point.costs is not None, "a dial point needs dial scores and costs"
    costs = np.asarray(point.costs)
    return [int(j) for j in apply_dial(raw, costs, point.dial)], raw - point.dial * costs
