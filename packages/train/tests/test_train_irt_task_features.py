"""Issue 39, item 4: the IRT router's task regressor reads `--task-features` beside the text. The features
are standardised on the train tasks and enter the prediction; a checkpoint fitted on them stores their
columns and needs them at routing time (one line without them, or for a task the file lacks);
`evaluate --irt --task-features` hands them to the IRT fitter."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.results_matrix import bundled_results_for
from router_oracle.table_check import load_table
from router_train.cli import main
from router_train.fitting import FitRequest, fitters_for
from router_train.irt.checkpoint import read_irt
from router_train.irt.fitter import IrtFitter
from router_train.irt.router import FittedIrtRouter, IrtConfig, IrtFit, fit_irt_router
from router_train.scoring.safe_point import SafePointFitter
from router_train.task_features import TaskFeaturesError, write_task_features

# One setting per grid: the tests check what the features do, not the search.
SMALL = IrtConfig(dims=(1,), alphas=(1.0,), temperatures=(1.0,), tolerances=(0.0,))


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    q = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))


@pytest.fixture(scope="module")
def data():  # type: ignore[no-untyped-def]
    table = load_table(bundled_table_path())
    _, matrix = bundled_results_for(table.pool)
    return table, matrix


def _features(path: Path, rows: Mapping[str, Sequence[float | None]], columns: list[str]) -> Path:
    write_task_features(path, columns, rows)
    return path


def test_a_feature_that_carries_the_outcome_lowers_held_out_log_loss(data, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    table, matrix = data
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)
    train, test = tasks[:350], tasks[350:]
    # Each task's share of runs that resolved it: what the text only hints at (its difficulty).
    share = matrix.resolved.mean(axis=1)
    rows = {t.instance_id: [float(share[matrix.rows([t.instance_id])[0]])] for t in tasks}
    path = _features(tmp_path / "difficulty.csv", rows, ["solved_share"])
    y = matrix.resolved[matrix.rows([t.instance_id for t in test])].astype(float)
    text = fit_irt_router(train, matrix, table.pool, config=SMALL)
    both = fit_irt_router(train, matrix, table.pool, config=SMALL, task_features=str(path))
    assert text.fit.task_features is None
    assert both.fit.task_features is not None and both.fit.task_features.columns == ["solved_share"]
    assert len(both.fit.x_mean) == len(text.fit.x_mean) + 1
    plain, featured = _log_loss(text.run_probabilities(test), y), _log_loss(both.run_probabilities(test), y)
    assert featured < plain - 0.05, (plain, featured)


def test_routing_reads_the_features_of_each_task_and_refuses_one_without(data, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    table, matrix = data
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)[:120]
    rng = np.random.default_rng(0)
    rows = {t.instance_id: [float(v) for v in rng.normal(size=2)] for t in tasks}
    path = _features(tmp_path / "f.csv", rows, ["a", "b"])
    router = fit_irt_router(tasks[:100], matrix, table.pool, config=SMALL, task_features=str(path))
    fit = IrtFit.model_validate(json.loads(router.fit.model_dump_json()))  # as a checkpoint reads it back
    assert not np.allclose(np.asarray(fit.w)[-2:], 0.0)  # the two feature rows were fitted
    # Another file, one held-out task's features changed: only that task's prediction moves.
    moved = dict(rows)
    target = tasks[110].instance_id
    moved[target] = [rows[target][0] + 5.0, rows[target][1] - 5.0]
    other = _features(tmp_path / "g.csv", moved, ["a", "b"])
    before = FittedIrtRouter.from_fit(fit).run_probabilities(tasks[100:])
    after = FittedIrtRouter.from_fit(fit, str(other)).run_probabilities(tasks[100:])
    changed = ~np.isclose(before, after).all(axis=1)
    assert [t.instance_id for t, c in zip(tasks[100:], changed, strict=True) if c] == [target]
    # A file without a routed task's row, or with a missing value: refused, naming the task.
    del moved[target]
    lacking = _features(tmp_path / "h.csv", moved, ["a", "b"])
    with pytest.raises(TaskFeaturesError, match=f"no row for task {target!r}"):
        FittedIrtRouter.from_fit(fit, str(lacking)).run_probabilities([tasks[110]])
    gap = _features(tmp_path / "i.csv", {**moved, target: [1.0, None]}, ["a", "b"])
    with pytest.raises(TaskFeaturesError, match=f"task {target!r} has no value for 'b'"):
        FittedIrtRouter.from_fit(fit, str(gap)).run_probabilities([tasks[110]])


def test_a_stored_fit_must_have_the_feature_rows_its_columns_say(data, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    table, matrix = data
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)[:60]
    rows = {t.instance_id: [float(i % 7)] for i, t in enumerate(tasks)}
    path = _features(tmp_path / "f.csv", rows, ["a"])
    doc = json.loads(
        fit_irt_router(tasks, matrix, table.pool, config=SMALL, task_features=str(path)).fit.model_dump_json()
    )
    doc["w"], doc["x_mean"] = doc["w"][:-1], doc["x_mean"][:-1]  # the feature's row dropped
    with pytest.raises(ValueError, match="task features"):
        IrtFit.model_validate(doc)
    doc["task_features"] = None  # ... consistent again as a text-only fit
    IrtFit.model_validate(doc)


def test_evaluate_hands_the_features_to_the_irt_fitter(data) -> None:  # type: ignore[no-untyped-def]
    table, _ = data
    request = FitRequest(table, table.tasks, {"irt": True}, task_features="bundled-issue")
    (fitter,) = fitters_for(request)
    assert isinstance(fitter, SafePointFitter) and isinstance(fitter.inner, IrtFitter)
    assert fitter.inner.task_features == "bundled-issue"
    request = FitRequest(table, table.tasks, {"irt": True}, task_features=None, safe_point=False)
    (plain,) = fitters_for(request)
    assert isinstance(plain, IrtFitter) and plain.task_features is None


def _table(path: Path, n: int) -> Path:
    doc = json.loads(bundled_table_path().read_text())
    doc["tasks"] = doc["tasks"][:n]
    path.write_text(json.dumps(doc))
    return path


def test_fit_irt_and_route_with_task_features(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table_path = _table(tmp_path / "t.json", 60)
    ids = [t.instance_id for t in load_table(table_path).tasks]
    rows = {i: [float(k % 5), float(k % 3)] for k, i in enumerate(ids)}
    feats = _features(tmp_path / "f.jsonl", rows, ["x", "y"])
    out = tmp_path / "irt"
    assert (
        main(
            [
                "fit",
                "irt",
                "--table",
                str(table_path),
                "--task-features",
                str(feats),
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    assert "task features: 2 columns of" in capsys.readouterr().out
    ckpt = out / "checkpoint.json"
    scaling = read_irt(ckpt).fit.task_features
    assert scaling is not None and scaling.columns == ["x", "y"]
    base = ["route", "--quiet", "--checkpoint", str(ckpt), "--table", str(table_path), "--instance", ids[0]]

    def refused(argv: list[str]) -> str:
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    assert "trained on 2 task-feature columns" in refused(base)
    assert main([*base, "--task-features", str(feats)]) == 0
    routed = json.loads(capsys.readouterr().out.splitlines()[0])
    assert routed["instance_id"] == ids[0] and routed["model"] in load_table(table_path).pool.ids
    lacking = _features(tmp_path / "g.jsonl", {i: v for i, v in rows.items() if i != ids[0]}, ["x", "y"])
    # At its native point the router reads every routed task's features (60 tasks may leave it at the
    # safe point "always the cheapest", which reads none).
    native = [*base, "--no-safe-point", "--task-features"]
    assert f"no row for task {ids[0]!r}" in refused([*native, str(lacking)])
    assert main([*native, str(feats)]) == 0
    # A fit refuses a file without every train task's row before it starts, writing nothing.
    bad = tmp_path / "bad"
    assert "no row for task" in refused(
        ["fit", "irt", "--table", str(table_path), "--task-features", str(lacking), "--output-dir", str(bad)]
    )
    assert not bad.exists()
