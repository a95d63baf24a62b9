"""`--budget` / `--dial` at routing time: a loaded router's dial calibration on its training tasks, and
the operating point it routes at.

Where the calibration comes from:
- `router-train local` (v3) and `router-train fit` (v2) checkpoints store it (computed when trained);
- older ones do not: it is computed here, exactly as training would have, when the training table is at
  hand (`--table`, the recorded path, or the bundled table) with the recorded sha256; else one line says
  to re-train / re-fit;
- an any-pool checkpoint has one per pool: computed at load on the checkpoint's train tasks in the
  candidates table, for the pool given.
A budget becomes the dial of the richest tabulated point within it (`scoring.dial.operating_point`);
below the cheapest point the router routes at the cheapest point and `budget_note` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.infra.file_hash import sha256_file
from router_oracle.table import TaskRecord
from router_oracle.table_check import load_table
from router_train.route.deploy import NATIVE, OperatingPoint, Scorer, dial_point
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.dial import (
    CalibrationPoint,
    DialCalibration,
    operating_point,
    point_for_dial,
)
from router_train.scoring.safe_point import SafePoint, dial_estimate, dial_margin, honoured

BUNDLED_TABLE_LABEL = "router_frontier_rl/data/oracle_table.json"
"""How a checkpoint records the env's bundled table (`local.trainer.BUNDLED_TABLE_NAME`)."""

Calibrator = Callable[[], DialCalibration]
"""Builds (or reads) a router's calibration; raises `RouteError` when it cannot."""


def training_tasks(
    checkpoint: Path, spec: CheckpointSpec, table_label: str, table_sha256: str, train_task_ids: Sequence[str]
) -> list[TaskRecord]:
    """The tasks a fixed-pool checkpoint learned from, read back from its table (checked by sha256): for
    a checkpoint stored without a calibration."""
    tried: list[Path] = []
    if spec.table is not None:
        tried.append(spec.table)
    elif table_label == BUNDLED_TABLE_LABEL:
        tried.append(bundled_table_path())
    else:
        tried.append(Path(table_label))
    for path in tried:
        if path.is_file() and sha256_file(path) == table_sha256:
            by_id = {t.instance_id: t for t in load_table(path).tasks}
            missing = [i for i in train_task_ids if i not in by_id]
            if not missing:
                return [by_id[i] for i in train_task_ids]
    raise RouteError(
        f"{checkpoint}: stores no dial calibration (an older checkpoint) and its training table "
        f"{table_label} (sha256 {table_sha256[:16]}...) is not at hand: re-train / re-fit to calibrate, "
        "or give --table"
    )


def budget_note(calibration: DialCalibration, budget: float) -> str | None:
    """A line when `budget` is below the cheapest point of the table (the router then routes there)."""
    cheapest = min(p.cost_per_task for p in calibration.points)
    if budget < cheapest:
        return (
            f"note: budget ${budget:.3f}/task is below the router's cheapest point on its training tasks "
            f"(${cheapest:.3f}/task): routing at the cheapest point"
        )
    return None


def requested_point(scorer: Scorer, spec: CheckpointSpec, calibrate: Calibrator | None) -> OperatingPoint:
    """The point `spec.budget` or `spec.dial` (one of them is set) asks for on `scorer`'s dial. A router
    without a dial (`calibrate` None) is refused."""
    flag = "--budget" if spec.budget is not None else "--dial"
    if calibrate is None:
        raise RouteError(f"{flag}: {scorer.name} has no per-model scores to put a cost dial on")
    calibration = calibrate()
    if not calibration.points:
        raise RouteError(f"{flag}: {scorer.name}: empty dial calibration")
    point: CalibrationPoint
    if spec.budget is not None:
        point = operating_point(calibration, spec.budget)
        dial = point.dial
    else:
        assert spec.dial is not None
        dial = spec.dial
        point = point_for_dial(calibration, dial)
    return dial_point(scorer.pool, dial, calibration, point)


def operating_line(point: OperatingPoint) -> str:
    """`operating point: dial D, expected $C/task, resolved R% on the N training tasks`."""
    p, calibration = point.bought, point.calibration
    assert p is not None and point.dial is not None and calibration is not None
    return (
        f"operating point: dial {point.dial:.6g}, expected ${p.cost_per_task:.3f}/task, "
        f"resolved {100 * p.resolved:.1f}% on the {calibration.n_tasks} training tasks"
    )


SAFE_CHEAPEST_REASON = "safe default point: always the cheapest model on the training tasks"
"""Every decision's `reason` at a safe default point that fell back to the cheapest model."""


def safe_point(scorer: Scorer, point: SafePoint, calibrate: Calibrator | None) -> OperatingPoint:
    """A checkpoint's safe default point (`scoring.safe_point`, chosen on its training tasks): its native
    route, its dial at the stored value, or every task to the stored cheapest model."""
    if point.choice == "router":
        return NATIVE
    if point.choice == "cheapest":
        assert point.model is not None
        if point.model not in scorer.pool:
            raise RouteError(f"{scorer.name}: safe_point.model {point.model!r} is not a pool model")
        return OperatingPoint(model=point.model, reason=SAFE_CHEAPEST_REASON, default_point=point.describe())
    assert point.dial is not None
    if calibrate is None:
        raise RouteError(f"{scorer.name}: its safe default point is a dial, but it has no cost dial")
    calibration = calibrate()
    bought = point_for_dial(calibration, point.dial)
    return dial_point(scorer.pool, point.dial, calibration, bought, default_point=point.describe())


def point_for(
    scorer: Scorer, spec: CheckpointSpec, calibrate: Calibrator | None, safe: SafePoint | None
) -> OperatingPoint:
    """The operating point a checkpoint routes at for `spec`: the budget or dial asked for where the fit's
    inner estimate there beats the mix by the margin (`checked`), else its stored safe default point
    (unless `--no-safe-point`), else native."""
    if spec.budget is not None or spec.dial is not None:
        asked = requested_point(scorer, spec, calibrate)
        return asked if safe is None or spec.no_safe_point else checked(scorer, spec, asked, safe, calibrate)
    if safe is not None and not spec.no_safe_point:
        return safe_point(scorer, safe, calibrate)
    return NATIVE


def checked(
    scorer: Scorer, spec: CheckpointSpec, asked: OperatingPoint, safe: SafePoint, calibrate: Calibrator | None
) -> OperatingPoint:
    """`asked` where the fit's inner estimate at its dial beats the mix by more than the margin
    (`scoring.safe_point.dial_estimate`); else the safe default point, saying so in every decision's
    reason and in one line at load. A checkpoint without dial estimates (older) routes where asked."""
    assert asked.dial is not None
    estimate = dial_estimate(safe, asked.dial)
    margin = dial_margin(safe)
    if estimate is None or honoured(estimate, margin):
        return asked
    flag = f"--budget {spec.budget:g}" if spec.budget is not None else f"--dial {spec.dial:g}"
    fallback = safe_point(scorer, safe, calibrate)
    reason = (
        f"{flag} refused: the fit's inner estimate there ({estimate.name}) is {100 * estimate.gap:+.2f} "
        f"points vs the mix, not above +{100 * margin:g}: routing at the safe default point "
        f"({safe.describe()}; --no-safe-point routes where asked)"
    )
    return replace(fallback, reason=reason, note=reason)


def stored_point(
    scorer: Scorer, point: SafePoint | None, calibration: DialCalibration | None
) -> OperatingPoint:
    """`safe_point` with a checkpoint's stored calibration (`evaluate --checkpoint` judges a saved router
    at the point `route` routes it at); native when it stores no point."""
    if point is None:
        return NATIVE
    return safe_point(scorer, point, None if calibration is None else lambda: calibration)


def point_lines(point: OperatingPoint, budget: float | None) -> list[str]:
    """What `route` and `serve` say on stderr at load about the point they route at (`budget`: the
    `--budget` asked for, for the note when it is below the cheapest tabulated point)."""
    out = []
    if point.note is not None:
        out.append(point.note)
    if point.calibration is not None and point.default_point is None:
        if budget is not None and (note := budget_note(point.calibration, budget)):
            out.append(note)
        out.append(operating_line(point))
    elif point.default_point is not None:
        out.append(f"default point: {point.default_point}")
    return out
