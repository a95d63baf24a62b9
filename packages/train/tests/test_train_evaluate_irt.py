"""`router-train evaluate --irt`: the IRT router is a fitted row like the baselines, routing exactly as
the saved `router-train fit irt` router of the same train tasks does, and its calibration is reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bash_only import bash_only_table_path

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import select_tasks
from router_train.cli import main
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.report import render_markdown, render_terminal
from router_train.evaluate.run import evaluate, read_table
from router_train.route import CheckpointSpec, load_router
from router_train.scoring.dial import outcome_matrices


def test_split_mode_irt_row_matches_the_saved_router_and_reports_calibration(
    irt_checkpoint: Path,
) -> None:
    table, info = read_table(bash_only_table_path())  # the shared IRT checkpoint's table
    report = evaluate(table, info, EvaluateConfig(include_baselines=False, irt=True))
    ev = report.main
    (row,) = ev.routers
    assert row.name == "irt" and not row.in_sample and ev.n_tasks == 100
    # The saved router fitted on the same train split routes the eval tasks to the same models.
    eval_tasks = select_tasks(table, "eval", 0.2, 0)
    saved = load_router(CheckpointSpec(checkpoint=irt_checkpoint))
    models = [d.model for d in saved.route_many(list(eval_tasks))]
    shares = {m: v for m, v in row.metrics.label_distribution.items() if v > 0}
    assert shares == pytest.approx({m: models.count(m) / len(models) for m in set(models)}, abs=1e-6)
    # Calibration: one line per pool model, on the 100 routed tasks, observed = their measured rates.
    (cal,) = ev.calibration
    assert cal.router == "irt" and [m.model for m in cal.models] == table.pool.ids
    resolved = outcome_matrices(eval_tasks, table.pool.ids)[0]
    for j, m in enumerate(cal.models):
        assert m.n == 100 and m.observed == pytest.approx(float(np.mean(resolved[:, j])), abs=1e-6)
        assert 0 < m.brier < 0.25 and 0 <= m.ece < 0.5
    assert "### Calibration of the predicted resolve probability" in render_markdown(report, None)
    assert "irt: calibration of its predicted resolve probability" in render_terminal(report)


def test_without_irt_no_calibration_is_reported() -> None:
    table, info = read_table(bundled_table_path())
    report = evaluate(table, info, EvaluateConfig(folds=2, fold_seeds=(0,), local_routers=[]))
    assert report.main.calibration == [] and "irt" not in [r.name for r in report.main.routers]
    assert "Calibration" not in render_markdown(report, None)


def test_evaluate_cli_takes_irt(tmp_path: Path) -> None:
    out = tmp_path / "r"
    # The flag's wiring, on a 100-task train split (the IRT row on the default split is the test above's):
    # a third of the full split's fit (18 s of CPU, not 55).
    argv = ["evaluate", "--irt", "--no-baselines", "--no-plot", "--eval-fraction", "0.8", "-o", str(out)]
    assert main(argv) == 0
    text = (out / "report.json").read_text()
    assert '"router": "irt"' in text and '"brier"' in text
