"""`--budget` / `--quality` / `--dial` at routing time: a loaded router's dial calibration on its
training tasks, and the operating point it routes at (an objective's: `route.floor`).

Where the calibration comes from:
- `router-train local` (v3) and `router-train fit` (v2) checkpoints store it (computed when trained);
- older ones do not: it is computed here, exactly as training would have, when the training table is at
  hand (`--table`, the recorded path, or the bundled table) with the recorded sha256; else one line says
  to re-train / re-fit;
- an any-pool checkpoint has one per pool: computed at load on the checkpoint's train tasks in the
  candidates table, for the pool given.
A budget becomes the dial of the richest tabulated point within it (`scoring.dial.operating_point`), a
quality the cheapest point reaching it; the router routes there only where its inner estimate backs it,
else at the floor, the mix of single models at the objective (`route.floor`).
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
from router_train.route.floor import calibration_for, floor_point, objective_point
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.backing import backing
from router_train.scoring.dial import DialCalibration, point_for_dial
from router_train.scoring.floor import Objective
from router_train.scoring.safe_point import SafePoint

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
    """The point `spec.dial` asks for on `scorer`'s dial. A router without a dial (`calibrate` None) is
    refused."""
    assert spec.dial is not None
    calibration = calibration_for(scorer, "--dial", calibrate)
    return dial_point(scorer.pool, spec.dial, calibration, point_for_dial(calibration, spec.dial))


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
        return OperatingPoint(default_point=point.describe())  # native routes, and stderr says which
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
    """The operating point a checkpoint routes at for `spec`: at an objective (`--budget`, `--quality`)
    the router's dial point where its inner estimate backs it, else the floor (`route.floor`); at a
    `--dial` the dial where backed, else the floor at the dial's expected cost; without either, its
    stored safe default point (unless `--no-safe-point`), else native."""
    objective = spec.objective()
    if objective is not None:
        return objective_point(scorer, spec, objective, calibrate, safe)
    if spec.dial is not None:
        asked = replace(requested_point(scorer, spec, calibrate), chooser="router")
        return asked if safe is None or spec.no_safe_point else checked(scorer, spec, asked, safe)
    if safe is not None and not spec.no_safe_point:
        return safe_point(scorer, safe, calibrate)
    return NATIVE


def checked(scorer: Scorer, spec: CheckpointSpec, asked: OperatingPoint, safe: SafePoint) -> OperatingPoint:
    """`asked` (a `--dial`) where the fit's inner estimate at its dial backs it (`scoring.backing.backing`);
    else the floor at the dial's expected cost on the training tasks, saying so in every decision's
    reason and in one line at load."""
    assert asked.dial is not None and asked.bought is not None and asked.calibration is not None
    backed, words = backing(safe, asked.dial)
    if backed:
        return asked
    budget = Objective(budget=asked.bought.cost_per_task)
    return floor_point(scorer, asked.calibration, budget, f"--dial {spec.dial:g} refused: {words}", "--dial")


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
    if point.floor is not None:
        return out
    if point.calibration is not None and point.default_point is None:
        if budget is not None and (note := budget_note(point.calibration, budget)):
            out.append(note)
        out.append(operating_line(point))
    elif point.default_point is not None:
        out.append(f"default point: {point.default_point} (no --budget or --quality given)")
    return out
