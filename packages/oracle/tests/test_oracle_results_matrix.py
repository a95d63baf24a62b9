"""The results matrix (`router_oracle.results_matrix`): the bundled candidates table as arrays, and the
one-line refusals of malformed input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from router_oracle.candidates import load_candidates
from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import ResultsMatrix, ResultsMatrixError, load_results_matrix, matrix_of


@pytest.fixture(scope="module")
def bundled() -> ResultsMatrix:
    return load_results_matrix()


def test_bundled_matrix_holds_every_run_and_task(bundled: ResultsMatrix) -> None:
    table = load_candidates()
    assert bundled.resolved.shape == (500, len(table.runs)) == bundled.cost.shape
    assert bundled.run_ids == tuple(table.runs)
    assert list(bundled.task_ids) == sorted(bundled.task_ids)
    assert bundled.origin == "bundled"
    # Each run's column is what the candidates index aggregates into its model's outcomes.
    index = CandidateIndex(table)
    j = bundled.run_ids.index("20260217_mini-v2.0.0_claude-4-6-opus")
    assert bundled.run_models[j] == "claude-opus-4.6"
    out = index.outcomes("claude-opus-4.6")
    assert [out[t].resolve_rate for t in bundled.task_ids] == bundled.resolved[:, j].astype(float).tolist()
    assert [out[t].cost for t in bundled.task_ids] == bundled.cost[:, j].tolist()


def test_rows_and_columns_follow_the_order_asked(bundled: ResultsMatrix) -> None:
    ids = [bundled.task_ids[3], bundled.task_ids[0]]
    assert bundled.rows(ids).tolist() == [3, 0]
    assert bundled.columns([bundled.run_ids[2]]).tolist() == [2]
    with pytest.raises(
        ResultsMatrixError, match=r"^bundled: task 'nope__nope-1' is not in the results matrix"
    ):
        bundled.rows(["nope__nope-1"])
    with pytest.raises(ResultsMatrixError, match="run 'no-run' is not in"):
        bundled.columns(["no-run"])


def _small(**change: object) -> ResultsMatrix:
    fields: dict[str, object] = {
        "task_ids": ("a", "b"),
        "run_ids": ("r1", "r2"),
        "run_models": ("m1", "m2"),
        "resolved": np.array([[True, False], [False, False]]),
        "cost": np.array([[0.1, 0.2], [0.3, 0.4]]),
        "origin": "x.json",
    }
    fields.update(change)
    return ResultsMatrix(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cost": np.array([[0.1, np.nan], [0.3, 0.4]])}, "x.json: cost of run 'r2' on task 'a' is nan"),
        ({"cost": np.array([[0.1, 0.2], [-1.0, 0.4]])}, "x.json: cost of run 'r1' on task 'b' is -1.0"),
        ({"task_ids": ("a", "a")}, "x.json: duplicate task id 'a'"),
        ({"run_ids": ("r1", "r1")}, "x.json: duplicate run id 'r1'"),
        ({"run_models": ("m1",)}, "x.json: 1 run models for 2 runs"),
        ({"cost": np.array([[0.1, 0.2]])}, r"x.json: cost has shape \(1, 2\), expected \(2, 2\)"),
        ({"resolved": np.array([[1, 0], [0, 0]])}, "x.json: resolved must be booleans"),
        ({"task_ids": (), "resolved": np.zeros((0, 2), bool), "cost": np.zeros((0, 2))}, "empty"),
    ],
)
def test_malformed_matrices_are_refused_in_one_line(change: dict[str, object], message: str) -> None:
    with pytest.raises(ResultsMatrixError, match=message) as info:
        _small(**change)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_task_missing_some_runs_is_refused() -> None:
    table = load_candidates()
    first = table.tasks[0]
    # model_construct skips validation: an ingested table that lost a cell reaches the matrix check.
    short = first.model_construct(**{**first.__dict__, "resolved": first.resolved[:-1]})
    broken = table.model_construct(**{**table.__dict__, "tasks": [short, *table.tasks[1:]]})
    with pytest.raises(ResultsMatrixError, match=f"ingested.json: task {first.instance_id!r} lacks outcomes"):
        matrix_of(broken, origin="ingested.json")


def test_unreadable_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "cands.json"
    bad.write_text('{"kind": "candidates"}')
    with pytest.raises(ResultsMatrixError, match=r"cands\.json") as info:
        load_results_matrix(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(ResultsMatrixError, match=r"missing\.json"):
        load_results_matrix(tmp_path / "missing.json")
