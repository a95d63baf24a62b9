"""`--task-features`: the file format's strict reader and writer, the bundled judged features, their
standardisation on train tasks only, and their use by evaluate's learned routers."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest
from evaluate_tables import IDS, make_table

from router_oracle.table import OracleTable, write_table
from router_train.cli import main
from router_train.evaluate import evaluate
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.report import TableInfo
from router_train.local.config import FeatureConfig, LocalTrainConfig
from router_train.local.features import feature_dim, featurize, fit_features
from router_train.scoring.baselines import BALANCED_LOGREG_NAME, TfidfFeatures
from router_train.task_features import (
    BUNDLED,
    BUNDLED_FILE,
    ISSUE_COLUMNS,
    REPO_COLUMNS,
    FeatureScaling,
    TaskFeaturesError,
    load_task_features,
    read_task_features,
    write_task_features,
)

ROWS: dict[str, list[float | None]] = {"b__2": [1.0, 2.5], "a__1": [3.0, None], "c__3": [0.0, -1.0]}


@pytest.mark.parametrize("name", ["f.csv", "f.csv.gz", "f.jsonl", "f.jsonl.gz"])
def test_written_files_read_back_in_every_format(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write_task_features(path, ["x", "y"], ROWS)
    again = tmp_path / ("again-" + name)
    write_task_features(again, ["x", "y"], ROWS)
    assert path.read_bytes() == again.read_bytes()  # same rows, same bytes (gzip without a timestamp)
    table = read_task_features(path)
    assert table.columns == ("x", "y")
    assert sorted(table.values) == ["a__1", "b__2", "c__3"]
    np.testing.assert_array_equal(table.matrix(["c__3", "b__2"]), [[0.0, -1.0], [1.0, 2.5]])
    np.testing.assert_array_equal(table.matrix(["a__1"], ["x"]), [[3.0]])
    # a missing value (empty cell, null) reads, but a router asking for it refuses the task
    with pytest.raises(TaskFeaturesError, match=r"task 'a__1' has no value for 'y'"):
        table.matrix(["b__2", "a__1"])
    with pytest.raises(TaskFeaturesError, match=r"no row for task 'zz'"):
        table.matrix(["zz"])
    with pytest.raises(TaskFeaturesError, match=r"no column 'w'"):
        table.matrix(["b__2"], ["w"])


CSV_BAD = {
    "non-numeric": ("instance_id,x\na,1\nb,high\n", "row 3: x is 'high', not a number"),
    "nan": ("instance_id,x\na,nan\n", "row 2: x is 'nan', not a finite number"),
    "inf": ("instance_id,x\na,1\nb,-inf\n", "row 3: x is '-inf', not a finite number"),
    "duplicate id": ("instance_id,x\na,1\nb,2\na,3\n", "row 4: task 'a' appears twice"),
    "missing id": ("instance_id,x\na,1\n,2\n", "row 3: no instance_id"),
    "short row": ("instance_id,x,y\na,1\n", "row 2: 2 cells, the header has 3"),
    "no id column": ("task,x\na,1\n", "header: no 'instance_id' column"),
    "no feature column": ("instance_id\na\n", "header: needs named numeric columns"),
    "duplicate column": ("instance_id,x,x\na,1,2\n", "header: column 'x' appears twice"),
}
JSONL_BAD = {
    "bool": ('{"instance_id": "a", "x": true}\n', "row 1: x is True, not a number"),
    "string": ('{"instance_id": "a", "x": 1}\n{"instance_id": "b", "x": "2x"}\n', "row 2: x is '2x'"),
    "NaN": ('{"instance_id": "a", "x": NaN}\n', "row 1: x is nan, not a finite number"),
    "keys differ": ('{"instance_id": "a", "x": 1}\n{"instance_id": "b", "y": 1}\n', "row 2: keys differ"),
    "id not a string": ('{"instance_id": 7, "x": 1}\n', "row 1: no instance_id"),
    "not JSON": ('{"instance_id": "a", "x": 1}\n{oops\n', "row 2: not JSON"),
    "duplicate id": ('{"instance_id": "a", "x": 1}\n{"instance_id": "a", "x": 1}\n', "row 2: task 'a'"),
}


@pytest.mark.parametrize(
    ("suffix", "text", "message"),
    [
        *((".csv", t, m) for t, m in CSV_BAD.values()),
        *((".jsonl", t, m) for t, m in JSONL_BAD.values()),
    ],
    ids=[*(f"csv-{k}" for k in CSV_BAD), *(f"jsonl-{k}" for k in JSONL_BAD)],
)
def test_a_bad_row_is_one_line_naming_the_file_and_row(
    tmp_path: Path, suffix: str, text: str, message: str
) -> None:
    path = tmp_path / f"features{suffix}"
    path.write_text(text)
    with pytest.raises(TaskFeaturesError) as exc:
        read_task_features(path)
    line = str(exc.value)
    assert "\n" not in line and line.startswith(str(path)) and message in line, line


def test_unreadable_or_unknown_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(TaskFeaturesError, match=r"expected a \.csv or \.jsonl file .* bundled-issue"):
        load_task_features(str(tmp_path / "f.parquet"))
    with pytest.raises(TaskFeaturesError, match=r"nope\.csv: cannot read"):
        load_task_features(str(tmp_path / "nope.csv"))
    (tmp_path / "bad.csv.gz").write_bytes(b"not gzip")
    with pytest.raises(TaskFeaturesError, match=r"bad\.csv\.gz: cannot read"):
        load_task_features(str(tmp_path / "bad.csv.gz"))


def test_bundled_names_select_the_issue_repo_and_all_columns() -> None:
    with gzip.open(BUNDLED_FILE, "rt") as f:
        header = next(csv.reader(f))
    assert header == ["instance_id", *ISSUE_COLUMNS, *REPO_COLUMNS]
    for name, n in (("bundled-issue", 15), ("bundled-repo", 8), ("bundled", 23)):
        table = load_task_features(name)
        assert table.columns == BUNDLED[name] and len(table.columns) == n
        assert len(table.values) == 500
    x = load_task_features("bundled").matrix(["astropy__astropy-12907"])
    # the file's first row, verbatim
    assert x[0, :3].tolist() == [0.0, 5.0, 4.0] and x[0, -1] == 3.0
    assert (Path(BUNDLED_FILE).parent / "README.md").read_text().count("arXiv 2604.00594") >= 1


def _features_file(tmp_path: Path, table: OracleTable, value: dict[str, float]) -> Path:
    path = tmp_path / "features.jsonl"
    rows = {t.instance_id: [value[t.instance_id], 1.0] for t in table.tasks}
    write_task_features(path, ["signal", "constant"], rows)
    return path


def test_standardised_on_train_tasks_only(tmp_path: Path) -> None:
    table = make_table(n=20)
    train, test = table.tasks[:12], table.tasks[12:]
    # held-out tasks' values are huge: any statistic that saw them would move far from the train one
    value = {t.instance_id: float(i) for i, t in enumerate(train)} | {t.instance_id: 1e6 for t in test}
    path = str(_features_file(tmp_path, table, value))
    f = TfidfFeatures(train, task_features=path)
    assert f.scaling is not None
    assert f.scaling.mean == [pytest.approx(5.5), 1.0]
    assert f.scaling.scale == [pytest.approx(float(np.std(np.arange(12.0)))), 1.0]  # constant: 1
    x_test = f.transform(test).toarray()
    assert x_test.shape[1] == len(f.vocabulary) + 2
    np.testing.assert_allclose(x_test[:, -2], (1e6 - 5.5) / f.scaling.scale[0])
    np.testing.assert_array_equal(x_test[:, -1], 0.0)
    # the local router's features: the same rule, columns after the text
    cfg = FeatureConfig(task_features=path)
    state = fit_features(cfg, train)
    assert state.task_features == FeatureScaling.fit(load_task_features(path), [t.instance_id for t in train])
    x = featurize(cfg, state, test)
    assert x.shape[1] == feature_dim(cfg, state) == feature_dim(FeatureConfig(), state) + 2
    np.testing.assert_allclose(x.toarray()[:, -2], x_test[:, -2])


def _oracle_feature(table: OracleTable) -> dict[str, float]:
    """A column that names each task's oracle label: a router reading it can learn to route."""
    return {t.instance_id: float(IDS.index(t.oracle)) if t.oracle in IDS else -1.0 for t in table.tasks}


def _blank_text(table: OracleTable) -> OracleTable:
    tasks = [t.model_copy(update={"problem_statement": "an issue", "repo": "o/r"}) for t in table.tasks]
    return table.model_copy(update={"tasks": tasks})


def test_evaluate_routers_learn_from_task_features(tmp_path: Path) -> None:
    table = _blank_text(make_table(n=80))
    info = TableInfo(file="t.json", sha256="0" * 64, pool=table.pool.ids, n_tasks=len(table.tasks))
    path = str(_features_file(tmp_path, table, _oracle_feature(table)))
    local = [("local-grpo", LocalTrainConfig(steps=40, tasks_per_step=16, shift_folds=0))]
    kw = {"folds": 4, "fold_seeds": [0], "local_routers": local}
    plain = evaluate(table, info, EvaluateConfig(**kw))  # type: ignore[arg-type]
    with_features = evaluate(table, info, EvaluateConfig(task_features=path, **kw))  # type: ignore[arg-type]

    def accuracy(report: object, name: str) -> float:
        row = next(r for r in report.main.routers if r.name == name)  # type: ignore[attr-defined]
        return float(row.metrics.accuracy)

    # the text says nothing: without the column the classifier cannot pick the oracle label
    assert accuracy(with_features, BALANCED_LOGREG_NAME) > accuracy(plain, BALANCED_LOGREG_NAME) + 0.3
    assert accuracy(with_features, "local-grpo") > accuracy(plain, "local-grpo")
    assert any("task features" in n and "2 columns" in n for n in with_features.notes)
    # kNN's similarity stays on the text
    knn = "tfidf-knn(k=10)"
    assert accuracy(with_features, knn) == accuracy(plain, knn)


def test_cli_refuses_a_task_without_features_before_fitting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = make_table(n=24)
    table_file = tmp_path / "table.json"
    write_table(table, table_file)
    rows = {t.instance_id: [1.0] for t in table.tasks[1:]}
    partial = tmp_path / "partial.csv"
    write_task_features(partial, ["x"], rows)
    argv = ["evaluate", "--table", str(table_file), "--folds", "3", "--fold-seeds", "0", "--no-plot"]
    out = tmp_path / "out"
    assert main([*argv, "--task-features", str(partial), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"no row for task {table.tasks[0].instance_id!r}" in err, err
    assert not out.exists()
    # a local router's own --task-features goes through the same reader
    local = ["--local", f"f=--steps 2 --tasks-per-step 8 --task-features {tmp_path / 'none.csv'}"]
    assert main([*argv, "--no-baselines", *local, "-o", str(out)]) == 2
    assert "none.csv: cannot read" in capsys.readouterr().err


def test_jsonl_is_one_object_per_line() -> None:
    from router_train.task_features import dumps_task_features

    text = dumps_task_features(["x"], {"b": [2.0], "a": [None]}, jsonl=True)
    assert [json.loads(line) for line in io.StringIO(text)] == [
        {"instance_id": "a", "x": None},
        {"instance_id": "b", "x": 2.0},
    ]


def test_a_saved_logreg_on_task_features_needs_them_to_route(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _blank_text(make_table(n=40))
    table_file = tmp_path / "table.json"
    write_table(table, table_file)
    features = _features_file(tmp_path, table, _oracle_feature(table))
    fit_dir = tmp_path / "fit"
    argv = ["fit", BALANCED_LOGREG_NAME, "--output-dir", str(fit_dir), "--table", str(table_file)]
    assert main([*argv, "--task-features", str(features)]) == 0
    ckpt = json.loads((fit_dir / "checkpoint.json").read_text())
    assert ckpt["task_features"]["columns"] == ["signal", "constant"]
    assert len(ckpt["fit"]["coef"][0]) == len(ckpt["vocabulary"]) + 2
    assert (
        main(["fit", "tfidf-knn", "--output-dir", str(tmp_path / "k"), "--task-features", str(features)]) == 2
    )
    assert "--task-features: only for tfidf-logreg" in capsys.readouterr().err

    tasks = tmp_path / "tasks.jsonl"
    rows = [
        {"instance_id": t.instance_id, "repo": t.repo, "problem_statement": t.problem_statement}
        for t in table.tasks
    ]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    route = ["route", "--quiet", "--checkpoint", str(fit_dir / "checkpoint.json"), "--tasks", str(tasks)]
    assert main(route) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.count("\n") == 0 and "trained on 2 task-feature columns" in err and "--task-features FILE" in err
    )
    out = tmp_path / "routes.jsonl"
    assert main([*route, "--task-features", str(features), "-o", str(out)]) == 0
    routed = {d["instance_id"]: d["model"] for d in map(json.loads, out.read_text().splitlines())}
    # the features decide: the fit learned the column that names the oracle label
    agree = sum(routed[t.instance_id] == t.oracle for t in table.tasks)
    assert agree >= 0.9 * len(table.tasks)
    partial = tmp_path / "partial.csv"
    write_task_features(partial, ["signal", "constant"], {t.instance_id: [0.0, 1.0] for t in table.tasks[1:]})
    assert main([*route, "--task-features", str(partial)]) == 2
    assert f"no row for task {table.tasks[0].instance_id!r}" in capsys.readouterr().err
    other = tmp_path / "other.csv"
    write_task_features(other, ["x"], {t.instance_id: [0.0] for t in table.tasks})
    assert main([*route, "--task-features", str(other)]) == 2
    assert "no column 'signal'" in capsys.readouterr().err


def test_a_local_checkpoint_on_task_features_needs_them_to_route(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from router_train.local.trainer import train_local

    out = tmp_path / "local"
    cfg = LocalTrainConfig(
        output_dir=out, steps=3, tasks_per_step=16, features=FeatureConfig(task_features="bundled-issue")
    )
    train_local(cfg, progress=False)
    ckpt_file = next(out.glob("**/checkpoint*.json"))
    state = json.loads(ckpt_file.read_text())["feature_state"]["task_features"]
    assert state["columns"] == list(ISSUE_COLUMNS) and state["source"] == "bundled-issue"
    route = ["route", "--quiet", "--checkpoint", str(ckpt_file), "--instance", "astropy__astropy-12907"]
    assert main(route) == 2
    assert "trained on 15 task-feature columns (from bundled-issue)" in capsys.readouterr().err
    assert main([*route, "--task-features", "bundled-issue"]) == 0
    capsys.readouterr()
    assert main([*route, "--task-features", "bundled-repo"]) == 2  # not the columns it was trained on
    assert "no column 'solution_hint'" in capsys.readouterr().err
