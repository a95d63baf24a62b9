"""The oracle's headroom that `router_oracle.analysis.noise` reports is the one `router-train evaluate`
measures: the oracle's resolved rate minus the best random mix of single models at its cost, on the same
tasks; and `router-train evaluate` shows the estimate beside its oracle row (terminal, report.md/json,
plot)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bash_only import bash_only_table_path
from evaluate_tables import make_table

from router_frontier_rl.split import select_tasks
from router_oracle.analysis.noise import UNMEASURED, estimate_noise, headroom_sentence
from router_oracle.build import build_table
from router_oracle.table import write_table
from router_train.cli import main
from router_train.evaluate import (
    EvalReport,
    Source,
    dumps_report,
    evaluate,
    read_table,
    render_markdown,
    render_terminal,
    write_report,
)
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.plot import _draw
from router_train.evaluate.report import Evaluation
from router_train.scoring.metrics import single_model_points
from router_train.scoring.vs_mix import frontier_position


@pytest.mark.parametrize("pool", ["default", "bash-only", "multi_run"])
def test_noise_headroom_is_the_evaluate_yardstick(pool: str) -> None:
    table = build_table(pool)
    tasks = select_tasks(table, "eval")
    n = len(tasks)
    cost = math.fsum(t.per_model[t.oracle].cost for t in tasks) / n
    resolved = math.fsum(t.per_model[t.oracle].resolve_rate for t in tasks) / n
    position = frontier_position(cost, resolved, single_model_points(tasks, table.pool.ids))
    assert position.gap_vs_mix is not None
    est = estimate_noise(table, [t.instance_id for t in tasks])
    assert est.tasks == n == 100
    assert est.headroom_points == pytest.approx(100 * position.gap_vs_mix, abs=1e-3)
    assert est.noise is not None and est.headroom_points is not None
    assert 0 < est.noise.noise_points < est.headroom_points


# `router-train evaluate` shows the estimate beside the oracle row, per evaluation, on its own tasks.

BUNDLED = bash_only_table_path()  # the pool the vf traces were recorded on
VF_TRACES = Path(__file__).parent / "data" / "evaluate_vf_traces.jsonl"


def _oracle_gap(ev: Evaluation) -> float | None:
    (row,) = [r for r in ev.routers if r.name == "oracle"]
    return row.gap_vs_mix.mean


def _legend(report: EvalReport) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        _draw(ax, report)
        return ax.get_legend_handles_labels()[1]
    finally:
        plt.close(fig)


def test_evaluate_reports_the_noise_estimate_beside_the_oracle(tmp_path: Path) -> None:
    table, info = read_table(BUNDLED)
    report = evaluate(table, info, EvaluateConfig(local_routers=[]))  # the env's eval split: 100 tasks
    ev = report.main
    est = ev.oracle_noise
    ids = [t.instance_id for t in select_tasks(table, "eval")]
    assert est == estimate_noise(table, ids)  # the estimate on the evaluation's own tasks
    assert est.tasks == ev.n_tasks == 100
    gap = _oracle_gap(ev)
    assert gap is not None and est.headroom_points == pytest.approx(gap, abs=1e-3)
    assert est.noise is not None and est.upper is not None and est.headroom_points is not None
    assert 0 < est.noise.noise_points <= est.upper.noise_points < est.headroom_points
    sentence = headroom_sentence(est, show_mix=True)
    assert sentence.startswith(f"oracle {gap:+.1f} points above the mix")
    assert f"of which about {est.noise.noise_points:.1f}" in sentence
    # The same line in the terminal (right under the table) and in report.md; the numbers in report.json.
    lines = render_terminal(report).splitlines()
    at = next(i for i, line in enumerate(lines) if sentence in line)
    assert lines[at - 1].startswith(ev.routers[-1].name) and lines[at + 1].startswith("mix frontier")
    assert sentence[1:] in render_markdown(report)
    write_report(report, tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    noise = data["evaluations"][0]["oracle_noise"]
    assert noise["headroom_points"] == est.headroom_points
    assert noise["noise"]["noise_points"] == est.noise.noise_points and noise["unavailable"] is None
    assert dumps_report(evaluate(table, info, EvaluateConfig(local_routers=[]))) == dumps_report(
        report
    )  # byte-stable
    # The plot's second reference mark: the oracle less the noise estimate, with a legend entry.
    low = 100 * est.oracle_resolve_rate - est.noise.noise_points
    (mark,) = [lab for lab in _legend(report) if lab.startswith("oracle less rollout noise")]
    assert f"{low:.1f}%" in mark and f"about {est.noise.noise_points:.1f} of its {gap:+.1f} pts" in mark


def test_each_evaluation_gets_the_estimate_on_its_own_tasks() -> None:
    table, info = read_table(BUNDLED)
    # Under cross-validation traces covering 6 of the 500 tasks get their own comparison.
    report = evaluate(
        table,
        info,
        EvaluateConfig(folds=2, fold_seeds=[0], local_routers=[], traces=[Source(name="vf", path=VF_TRACES)]),
    )
    assert [ev.n_tasks for ev in report.evaluations] == [500, 6]
    terminal, md = render_terminal(report), render_markdown(report)
    for ev in report.evaluations:
        est = ev.oracle_noise
        assert est.tasks == ev.n_tasks
        gap = _oracle_gap(ev)
        assert gap is not None and est.headroom_points == pytest.approx(gap, abs=1e-3)
        assert est.noise is not None
        line = headroom_sentence(est, show_mix=True)
        assert line in terminal and line[1:] in md
    # Rates and headroom come from each evaluation's tasks, so the two estimates differ.
    whole, sub = (ev.oracle_noise for ev in report.evaluations)
    assert whole.noise is not None and sub.noise is not None
    assert (whole.oracle_resolve_rate, whole.headroom_points) != (
        sub.oracle_resolve_rate,
        sub.headroom_points,
    )
    assert whole.noise.noise_points == estimate_noise(table).noise.noise_points  # type: ignore[union-attr]


def test_a_table_with_no_second_run_says_the_noise_is_not_measured(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    write_table(make_table(n=40), path)  # one run per model, not from the bundled leaderboard
    out = tmp_path / "rep"
    # The noise line is the point, not local-grpo's fit: one 2-step local router instead.
    quick = ["--no-baselines", "--local", "quick=--steps 2 --tasks-per-step 8 --shift-folds 0"]
    argv = ["evaluate", "--table", str(path), "--folds", "2", "--fold-seeds", "0", *quick, "-o", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "report.json").read_text())
    noise = data["evaluations"][0]["oracle_noise"]
    assert noise["noise"] is None and noise["upper"] is None and noise["unavailable"] == UNMEASURED
    table, info = read_table(path)
    report = evaluate(table, info, EvaluateConfig(folds=2, fold_seeds=[0], local_routers=[]))
    gap = _oracle_gap(report.main)
    assert gap is not None
    line = f"oracle {gap:+.1f} points above the mix"
    (shown,) = [x for x in render_terminal(report).splitlines() if x.startswith(line)]
    assert shown.endswith("rollout noise not measured (no model run twice)")  # one line, no figure
    assert "expected from" not in shown
    md = (out / "report.md").read_text()
    assert f"O{line[1:]}" in md and "rollout noise not measured (no model run twice)." in md
    labels = _legend(report)
    assert any(lab.startswith("oracle:") for lab in labels)
    assert not any("rollout noise" in lab for lab in labels)  # no invented mark
