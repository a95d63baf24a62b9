"""The cost dial and the cross-validated cost-quality curves of `router-train evaluate --folds`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evaluate_tables import FAST_LOCAL, IDS, cv_report, make_table

from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.evaluate import curves, evaluate, write_report
from router_train.evaluate import dial as dial_module
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.design import fold_partitions
from router_train.evaluate.dial import (
    RouterScores,
    apply_dial,
    calibrate,
    calibrate_policy,
    dial_for_budget,
    model_mean_costs,
    operating_point,
    outcome_matrices,
    point_for_dial,
    route_with_dial,
)
from router_train.evaluate.fitted import LocalFitter
from router_train.evaluate.report import TableInfo
from router_train.scoring.decisions import Decisions, from_labels


def _info(table: Any) -> TableInfo:
    return TableInfo(file="t.json", sha256="0" * 64, pool=table.pool.ids, n_tasks=len(table.tasks))


def test_the_dial_moves_cost_monotonically() -> None:
    rng = np.random.default_rng(0)
    tasks = make_table(80).tasks
    scores = rng.normal(size=(len(tasks), len(IDS)))
    price = model_mean_costs(tasks, IDS)
    _, cost = outcome_matrices(tasks, IDS)
    dials = np.linspace(-20, 20, 401)
    picks = apply_dial(scores, price, dials)  # (dials, tasks)
    # Per task, a higher dial never picks a model with a higher mean price; so the mean cost falls.
    chosen_price = price[picks]
    assert (np.diff(chosen_price, axis=0) <= 1e-12).all()
    mean_cost = cost[np.arange(len(tasks)), picks].mean(axis=1)
    assert mean_cost[0] == pytest.approx(
        cost[:, int(np.argmax(price))].mean()
    )  # dearest model at the low end
    assert mean_cost[-1] == pytest.approx(cost[:, int(np.argmin(price))].mean())  # cheapest at the high end
    # The measured cost of the same routes (each task's own cost, not the model's mean) follows closely.
    assert (np.diff(mean_cost) <= 0.02 * (mean_cost[0] - mean_cost[-1])).all()
    cal = calibrate(scores, tasks, IDS)
    costs = [p.cost_per_task for p in cal.points]
    assert len(cal.points) > 10 and costs[0] > costs[-1]
    assert [p.dial for p in cal.points] == sorted(p.dial for p in cal.points)


def test_the_dial_of_tasks_without_outcomes_needs_them_given() -> None:
    # Logged tasks (a refit's) are `TaskInput`s: no measured outcome to calibrate on unless given.
    tasks = make_table(12).tasks
    scores = np.random.default_rng(0).normal(size=(len(tasks), len(IDS)))
    inputs = [
        TaskInput(instance_id=t.instance_id, repo=t.repo, problem_statement=t.problem_statement)
        for t in tasks
    ]
    with pytest.raises(ValueError, match="tasks without measured outcomes need `outcomes` given"):
        calibrate(scores, inputs, IDS)
    given = calibrate(scores, inputs, IDS, outcomes=outcome_matrices(tasks, IDS))
    assert given == calibrate(scores, tasks, IDS)


def _budgets_land(scores: np.ndarray, train: Sequence[TaskRecord], tolerance: float | None) -> None:
    _, cost = outcome_matrices(train, IDS)
    price = cost.mean(axis=0)
    cal = calibrate(scores, train, IDS)
    cheapest, dearest = float(price.min()), float(price.max())
    steps = [a.cost_per_task - b.cost_per_task for a, b in zip(cal.points, cal.points[1:], strict=False)]
    for budget in np.linspace(cheapest, dearest, 9):
        d = dial_for_budget(cal, float(budget))
        routed = cost[np.arange(len(train)), apply_dial(scores, price, d)].mean()
        assert routed <= budget + 1e-6  # never over the budget on its own training tasks
        # and as close to it as the router's own steps allow (a tolerance when its scores vary per task)
        assert budget - routed <= (tolerance * (dearest - cheapest) if tolerance else max(steps) + 1e-6)
        assert point_for_dial(cal, d).cost_per_task == pytest.approx(routed, abs=1e-6)
    # The table thinned for a checkpoint keeps both ends.
    thin = calibrate(scores, train, IDS, max_points=20)
    assert len(thin.points) <= 20
    assert thin.points[0] == cal.points[0] and thin.points[-1] == cal.points[-1]


def test_a_budget_lands_on_its_training_tasks() -> None:
    train = make_table(200).tasks
    _budgets_land(np.random.default_rng(1).normal(size=(len(train), len(IDS))), train, 0.02)
    # The local GRPO policy's own logits (few steps: coarse, so within its own steps).
    fit = LocalFitter("local-grpo", FAST_LOCAL[0][1], IDS)
    _, (scores,) = fit.fit_scored(train, train[:5], 0)
    _budgets_land(scores.train, train, None)


def test_a_policy_routes_at_a_budget_with_its_stored_calibration() -> None:
    from router_train.local.trainer import fit_policy

    train = make_table(120).tasks
    policy = fit_policy(FAST_LOCAL[0][1], train, IDS).policy
    cal = calibrate_policy(policy, train)
    stored = type(cal).model_validate_json(cal.model_dump_json())  # what a checkpoint reads back
    _, cost = outcome_matrices(train, IDS)
    by_id = {t.instance_id: i for i, t in enumerate(train)}
    for budget in (0.2, 0.4, 0.6):
        d = dial_for_budget(stored, budget)
        routes = route_with_dial(policy, train, stored, d)
        spent = float(
            np.mean([cost[by_id[t.instance_id], IDS.index(r)] for t, r in zip(train, routes, strict=True)])
        )
        assert spent <= budget + 1e-6
        assert spent == pytest.approx(operating_point(stored, budget).cost_per_task, abs=1e-5)


def test_a_router_equal_to_one_model_recovers_nothing() -> None:
    tasks = make_table(60).tasks
    resolved, cost = outcome_matrices(tasks, IDS)
    weak, strong = IDS.index("small"), IDS.index("big")
    points = 11
    # Always the cheapest model, at every point of the dial.
    r = np.tile(resolved[:, weak], (points, 1))
    c = np.tile(cost[:, weak], (points, 1))
    metrics, pgr = curves.measure_curve(r, c, resolved.T, cost.T, weak, strong, seed=0)
    assert all(p.mean == 0.0 for p in pgr)
    assert metrics.apgr.mean == 0.0 and metrics.cpt50.mean is None and metrics.cpt80.mean is None
    # Always the strongest: PGR 1 at its cost; the curve from the dial's cheap end is the straight line.
    r = np.tile(resolved[:, strong], (points, 1))
    c = np.tile(cost[:, strong], (points, 1))
    metrics, pgr = curves.measure_curve(r, c, resolved.T, cost.T, weak, strong, seed=0)
    assert all(p.mean == 1.0 for p in pgr)
    assert metrics.apgr.mean == pytest.approx(0.5, abs=1e-3)
    assert metrics.apgr.low is not None and metrics.apgr.high is not None


class OracleScores:
    """A cheating router that scores each model by its measured resolve rate on the task."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return self.fit_scored(train, test, seed)[0]

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        tr, te = outcome_matrices(train, IDS)[0], outcome_matrices(test, IDS)[0]
        picks: dict[str, list[str | None]] = {t.instance_id: [t.oracle] for t in test}
        return [from_labels("perfect", "local", picks)], [RouterScores("perfect", list(IDS), tr, te)]


def test_a_perfect_router_has_the_oracles_apgr(monkeypatch: pytest.MonkeyPatch) -> None:
    table = make_table(120)
    calls: list[set[str]] = []
    real = curves.fold_dials

    def spy(scores: RouterScores, train: Sequence[TaskRecord], *a: Any, **kw: Any) -> Any:
        calls.append({t.instance_id for t in train})
        return real(scores, train, *a, **kw)

    monkeypatch.setattr(curves, "fold_dials", spy)
    report = evaluate(
        table,
        _info(table),
        EvaluateConfig(folds=4, fold_seeds=(0, 1), local_routers=[], include_baselines=False),
        fitters=[OracleScores()],
    )
    ev = report.main
    assert ev.curves is not None
    oracle = next(r for r in ev.curves.references if r.name == "oracle")
    (row,) = ev.routers
    assert row.curve_metrics is not None and oracle.metrics.apgr.mean is not None
    apgr = row.curve_metrics.apgr.mean
    assert apgr is not None and apgr == pytest.approx(oracle.metrics.apgr.mean, abs=0.1) and apgr > 0.8
    random_line = next(r for r in ev.curves.references if r.name == "random-line")
    assert random_line.metrics.apgr.mean == pytest.approx(0.5, abs=1e-3)
    # No dial was chosen with the fold it is scored on: one choice per fit, on exactly its train tasks.
    parts = fold_partitions(table, "t.json", 4, (0, 1))
    assert len(calls) == len(parts)
    for p, ids in zip(parts, calls, strict=True):
        assert ids == {t.instance_id for t in p.train}
        assert not ids & {t.instance_id for t in p.test}


def test_curves_in_report_json_and_the_plot(tmp_path: Path) -> None:
    report = cv_report(1)  # make_table(80), 4 folds x 2 fold seeds, shared with the folds tests
    files = write_report(report, tmp_path)
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG" and len(files) == 4
    data = json.loads((tmp_path / "report.json").read_text())
    rows = {r["name"]: r for r in data["evaluations"][0]["routers"]}
    for name in ("local-grpo", "tfidf-logreg", "tfidf-logreg(balanced)", "tfidf-knn(k=10)"):
        curve = rows[name]["curve"]
        assert len(curve) >= 9
        assert set(curve[0]) >= {"dial", "target_cost", "cost_per_task", "resolved", "gap_vs_mix"}
        assert set(rows[name]["curve_metrics"]) == {"apgr", "cpt50", "cpt80", "area_vs_mix", "overspend"}
        # Each point: what a fit's inner estimate says of a budget there, and the overspend.
        assert {p["fits"] for p in curve} == {8} and all(0 <= p["refused_fits"] <= 8 for p in curve)
        assert all(p["overspend"] is None or p["overspend"] >= 0 for p in curve)
        assert set(rows[name]["curve_metrics"]["apgr"]) == {"mean", "low", "high"}
        targets = [p["target_cost"] for p in curve]
        assert targets == sorted(targets)
        assert curve[0]["cost_per_task"] == pytest.approx(
            min(p["cost"] for p in data["evaluations"][0]["single_models"])
        )
    for name in ("always:big", "oracle", "cheapest-on-train"):
        assert rows[name]["curve"] is None and rows[name]["curve_metrics"] is None
    assert [r["name"] for r in data["evaluations"][0]["curves"]["references"]] == [
        "oracle",
        "mix-frontier",
        "random-line",
    ]
    md = (tmp_path / "report.md").read_text()
    assert "Cost dial curves" in md and "APGR" in md and "curves.png" in md
    assert "dial points refused" in md and "extra $/task" in md
    # Each objective's served outcome (router where backed, else the floor) vs the mix there (issue 53).
    served = data["evaluations"][0]["objectives"]
    assert set(served) == {
        "(floor)",
        "local-grpo",
        "tfidf-logreg",
        "tfidf-logreg(balanced)",
        "tfidf-knn(k=10)",
    }
    for points in served.values():
        assert len(points) == 13 and all(p["fits"] == 8 and 0 <= p["router_fits"] <= 8 for p in points)
        spend = [p["cost_per_task"] for p in points if p["budget"] is not None]
        assert len(spend) == 10
    floor_spend = [p["cost_per_task"] for p in served["(floor)"] if p["budget"] is not None]
    assert floor_spend == sorted(floor_spend)  # the floor alone: monotone in the budget
    assert "### Objectives: router or floor" in md
    # The same inputs give the same bytes (the fits in forked workers here).
    again = cv_report(2)
    assert json.dumps(again.model_dump(mode="json")) == json.dumps(report.model_dump(mode="json"))


def test_no_curves_outside_cross_validation(tmp_path: Path) -> None:
    table = make_table(60)
    report = evaluate(table, _info(table), EvaluateConfig(local_routers=[]))
    files = write_report(report, tmp_path)
    assert [f.name for f in files] == ["report.json", "report.md", "cost_vs_resolved.png"]
    assert report.main.curves is None and all(r.curve is None for r in report.main.routers)


def test_dial_module_spy_target_is_the_module_function() -> None:
    # fold_dials calls the calibration through the module, so a spy or a replacement there takes effect.
    assert curves.dial_module is dial_module


def test_evaluate_anypool_reports_apgr_per_pool_size() -> None:
    from test_train_evaluate_anypool import plain_report

    report = plain_report(1)  # the protocol on the synthetic candidates, shared with its own tests
    for p in report.pools:
        assert set(p.curves) == {"local-anypool", "local-grpo"}
        for m in p.curves.values():
            assert m.apgr.mean is None or m.apgr.low is not None
    overall = {a.router: a for a in report.apgr if a.pool_size is None}
    assert set(overall) >= {"local-grpo"} and len(overall) == 2
    for name, a in overall.items():
        per_pool = [p.curves[name].apgr.mean for p in report.pools if name in p.curves]
        assert a.by_pool == [x for x in per_pool if x is not None]
        assert a.mean == pytest.approx(sum(a.by_pool) / len(a.by_pool), abs=1e-4)
    sizes = {a.pool_size for a in report.apgr}
    assert None in sizes and sizes - {None} == {len(p.pool.ids) for p in report.pools}
    from router_train.evaluate_anypool.report import render_markdown, render_terminal

    assert "APGR of" in render_terminal(report) and "APGR of" in render_markdown(report, None)
