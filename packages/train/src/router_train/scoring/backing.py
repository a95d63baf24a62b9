"""Whether a router's own point at the user's objective is backed by its inner estimate: the one rule
`route` (`route.floor`) and evaluate's objective tables (`evaluate.objectives`) decide router-or-floor by.
"""

from __future__ import annotations

from router_oracle.frontier import ModelPoint
from router_train.scoring.dial import CalibrationPoint, DialCalibration, operating_point, point_for_quality
from router_train.scoring.floor import Objective
from router_train.scoring.safe_point import SafePoint, dial_estimate, dial_margin, honoured, known_gap


def objective_dial(
    calibration: DialCalibration, objective: Objective, points: list[ModelPoint]
) -> CalibrationPoint:
    """The router's own point at `objective` on its training tasks: at a budget the richest point within
    it, at a quality the cheapest point reaching it (`scoring.dial`)."""
    if objective.budget is not None:
        return operating_point(calibration, objective.budget)
    return point_for_quality(calibration, objective.target_rate(points))


SPEND_TOLERANCE = 1.05
"""A router's point at a budget is backed only where its inner estimate spends at most this multiple of
the budget out of fold: its in-sample calibration underspends new tasks (bench_objectives.py: routers
backed on the default pool spent 1.07-1.08 x the budget without this check)."""


def backing(
    safe: SafePoint | None, dial: float, target: float | None = None, budget: float | None = None
) -> tuple[bool, str]:
    """Whether the fit's inner estimate at `dial` backs routing there, and the estimate in words (real
    numbers, or that there is none). Backed: it beats the mix by its kind's dial margin (and, with a
    quality `target`, resolves at least that much out of fold; at a `budget`, spends at most
    `SPEND_TOLERANCE` x it out of fold). A checkpoint that stores no dial
    estimates (older, or a kind without them: `local-anypool`) routes where asked, unchecked, as before."""
    estimate = None if safe is None else dial_estimate(safe, dial)
    if safe is None or estimate is None:
        return True, "unchecked: the checkpoint stores no inner estimate of its dial points"
    gap, margin = known_gap(estimate), dial_margin(safe)
    if gap is None:
        return False, (
            f"no inner estimate of the router there ({estimate.name}: its routes cost less than every "
            "single model, so there is no mix to compare with)"
        )
    ok = honoured(estimate, margin)
    words = (
        f"the fit's inner estimate there ({estimate.name}) is {100 * gap:+.2f} points vs the mix, "
        f"{'above' if ok else 'not above'} +{100 * margin:g}"
    )
    if ok and target is not None and estimate.resolved < target:
        return False, f"{words} but resolves {100 * estimate.resolved:.1f}% < {100 * target:.1f}% out of fold"
    if ok and budget is not None and estimate.cost_per_task > SPEND_TOLERANCE * budget:
        return (
            False,
            f"{words} but spends ${estimate.cost_per_task:.3f}/task out of fold, "
            f"over {SPEND_TOLERANCE:g} x the budget",
        )
    return ok, words
