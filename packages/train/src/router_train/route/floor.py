"""A checkpoint at the user's objective (`--budget USD`, `--quality R`): the router's dial point where
its inner estimate backs it, else the floor, the mix of single models at that objective (`scoring.floor`).

The floor's single models are the router's own training tasks' per-model mean costs and resolve rates
(its calibration's `model_costs` and `model_resolved`), the same numbers its dial and its safe point were
judged against. Every decision says who chose (`chooser`: router / floor) and why (`reason`).
"""

from __future__ import annotations

from collections.abc import Callable

from router_oracle.frontier import ModelPoint
from router_train.route.deploy import OperatingPoint, Scorer, dial_point
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.backing import backing, objective_dial
from router_train.scoring.dial import DialCalibration
from router_train.scoring.floor import Objective, floor_mix
from router_train.scoring.safe_point import SafePoint


def calibration_for(
    scorer: Scorer, flag: str, calibrate: Callable[[], DialCalibration] | None
) -> DialCalibration:
    """The router's dial calibration on its training tasks; one `RouteError` line when it has none."""
    if calibrate is None:
        raise RouteError(f"{flag}: {scorer.name} has no per-model scores to put a cost dial on")
    calibration = calibrate()
    if not calibration.points:
        raise RouteError(f"{flag}: {scorer.name}: empty dial calibration")
    return calibration


def model_points(scorer: Scorer, calibration: DialCalibration, flag: str) -> list[ModelPoint]:
    """Each pool model's mean cost and resolve rate on the router's training tasks (the floor's models)."""
    if calibration.model_resolved is None:
        raise RouteError(
            f"{flag}: {scorer.name}: its calibration stores no per-model resolve rates (a checkpoint "
            "written before the floor): re-train / re-fit it to route at a budget or quality"
        )
    return [
        ModelPoint(model=m, cost=c, resolved=r)
        for m, c, r in zip(
            calibration.model_ids, calibration.model_costs, calibration.model_resolved, strict=True
        )
    ]


def floor_point(
    scorer: Scorer, calibration: DialCalibration, objective: Objective, why: str, flag: str
) -> OperatingPoint:
    """Every task to the model the floor at `objective` assigns its key; `why` the router is not used."""
    mix = floor_mix(model_points(scorer, calibration, flag), objective)
    where = f"{mix.describe()} on the {calibration.n_tasks} training tasks"
    reason = f"{why}: routing at the floor, {where}" + (f"; {mix.note}" if mix.note else "")
    return OperatingPoint(floor=mix, chooser="floor", reason=reason, note=reason, calibration=calibration)


def objective_point(
    scorer: Scorer,
    spec: CheckpointSpec,
    objective: Objective,
    calibrate: Callable[[], DialCalibration] | None,
    safe: SafePoint | None,
) -> OperatingPoint:
    """Where a checkpoint routes at `objective`: its dial point there when its inner estimate beats the
    mix by its kind's margin (`backing`; `--no-safe-point`: unchecked), else the floor."""
    flag = objective.describe()
    calibration = calibration_for(scorer, flag, calibrate)
    points = model_points(scorer, calibration, flag)
    bought = objective_dial(calibration, objective, points)
    if spec.no_safe_point:
        backed, words = True, "unchecked (--no-safe-point)"
    else:
        target = None if objective.quality is None else objective.target_rate(points)
        backed, words = backing(safe, bought.dial, target, objective.budget)
    if not backed:
        return floor_point(
            scorer, calibration, objective, f"{flag}: the router's point refused, {words}", flag
        )
    reason = f"{flag}: the router's point, {words}"
    return dial_point(
        scorer.pool, bought.dial, calibration, bought, chooser="router", reason=reason, note=reason
    )
