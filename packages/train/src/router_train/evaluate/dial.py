"""The cost dial (`router_train.scoring.dial`, re-exported here where evaluate's curves and the docs name
it): `apply_dial`, `DialCalibration`, `calibrate`, `calibrate_policy`, `dial_for_budget`, ..."""

from router_train.scoring.dial import (
    BUDGET_TOL,
    CHECKPOINT_POINTS,
    MAX_CANDIDATES,
    CalibrationPoint,
    DialCalibration,
    RouterScores,
    ScoringPolicy,
    apply_dial,
    calibrate,
    calibrate_policy,
    dial_candidates,
    dial_for_budget,
    model_mean_costs,
    operating_point,
    outcome_matrices,
    point_for_dial,
    route_with_dial,
)

__all__ = [
    "BUDGET_TOL",
    "CHECKPOINT_POINTS",
    "MAX_CANDIDATES",
    "CalibrationPoint",
    "DialCalibration",
    "RouterScores",
    "ScoringPolicy",
    "apply_dial",
    "calibrate",
    "calibrate_policy",
    "dial_candidates",
    "dial_for_budget",
    "model_mean_costs",
    "operating_point",
    "outcome_matrices",
    "point_for_dial",
    "route_with_dial",
]
