"""report.json's `cross_harness` (`evaluate --test-table`, `--calibrate`): routers fitted on one harness's
outcomes (the table, TRAIN) judged on another's (TEST), and how far re-estimating a few figures on the
user's own harness brings them back. Absent from report.json without `--test-table`."""

from __future__ import annotations

from pydantic import Field

from router_oracle.frontier import ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_train.scoring.decisions import SourceKind
from router_train.scoring.vs_mix import Gap


class HarnessGap(FrozenModel):
    """One router's gap vs the mix on its own harness and on the other one, the same decisions."""

    name: str
    """Row label (as in the first evaluation)."""
    kind: SourceKind
    """baseline or local (fitted by evaluate)."""
    in_harness: Gap
    """Fitted on TRAIN's train-fold outcomes, judged on TRAIN's held-out outcomes (the first evaluation's
    `gap_vs_mix`), in points."""
    cross_harness: Gap
    """The same decisions judged on TEST's outcomes of the same tasks, against TEST's single models and
    mix frontier, in points."""
    cross_resolved: float
    """Resolved rate on TEST's outcomes."""
    cross_cost: float
    """Mean cost per task on TEST's outcomes, USD."""


class CalibratedRouter(FrozenModel):
    """One router at one calibration size, on the tasks left to score."""

    name: str
    """Row label."""
    gap_vs_mix: Gap
    """Re-estimated on the calibration tasks, then judged on TEST's outcomes of the rest (points)."""
    uncalibrated: Gap
    """The same router without re-estimation, on exactly the same scored tasks and fold seeds (points;
    the same bootstrap resamples, so the two are paired)."""
    resolved: float
    """Resolved rate of the calibrated routes (TEST outcomes)."""
    cost_per_task: float
    """Mean cost per task of the calibrated routes (TEST outcomes), USD."""


class CalibrationStep(FrozenModel):
    """`--calibrate N` for one N."""

    n: int
    """Calibration tasks per fit: the first N held-out tasks of each fold (in the fold seed's seeded-hash
    order, `router_frontier_rl.split.seeded_order`), whose TEST outcomes re-estimate the router's figures
    and which are then not scored."""
    n_scored: int
    """Tasks scored: those that are no calibration task under at least one fold seed (each pooled over the
    fold seeds where it is scored)."""
    oracle_gap: Gap
    """TEST's oracle on the scored tasks (the headroom there)."""
    routers: list[CalibratedRouter]
    """Every learned router that can be re-estimated, in the report's row order."""


class CrossHarness(FrozenModel):
    """`evaluate --test-table TEST`: the learned routers fitted per fold on the table's (TRAIN's) outcomes of
    the train-fold tasks, judged on TEST's outcomes of the held-out tasks."""

    test_table: str
    """File name of TEST."""
    test_sha256: str
    """Hex sha256 of TEST's bytes."""
    n_tasks: int
    """Tasks judged (every task of both tables)."""
    label_agreement: float
    """Share of tasks whose oracle label is the same in both tables."""
    single_models: list[ModelPoint]
    """Each pool model on TEST's outcomes, in pool order."""
    frontier: list[ModelPoint]
    """TEST's random-mix frontier corners, cheapest first."""
    oracle_gap: Gap
    """TEST's oracle above TEST's mix (points): the cross-harness headroom."""
    routers: list[HarnessGap]
    """Every router fitted by evaluate, in-harness and cross-harness, in the report's row order."""
    calibration: list[CalibrationStep] = Field(default_factory=list)
    """`--calibrate N,...`: one step per N, ascending."""
