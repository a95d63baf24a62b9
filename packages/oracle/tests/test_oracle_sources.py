"""Each importer on real samples of its upstream format, and its error cases."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from oracle_samples import FIXTURES, TRAJ, leaderboard_results

from router_oracle.data_files import leaderboard_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.harness_report import read_harness_report
from router_oracle.sources.leaderboard import read_leaderboard
from router_oracle.sources.long_table import read_long_table
from router_oracle.sources.trajectories import read_trajectories

GEMINI = "20251118_mini-v1.15.0_gemini-3-pro-preview-20251118"
KIMI = "20260217_mini-v2.0.0_kimi-k2-5-high"


@pytest.fixture(scope="module")
def board() -> dict:
    return {"results": leaderboard_results()}


def details(board: dict, run: str) -> dict:
    return next(e for e in board["results"] if e["folder"] == run)["per_instance_details"]


def write_board(tmp_path: Path, entries: list[dict], name: str = "board.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"name": "bash-only", "results": entries}))
    return path


# --- leaderboard -------------------------------------------------------------------------------


def test_leaderboard_bundled_all_runs(board: dict) -> None:
    src = read_leaderboard(leaderboard_path())
    with_details = [e for e in board["results"] if e.get("per_instance_details")]
    assert len(with_details) == 40
    assert len(src.rows) == 40 * 500
    assert src.source.kind == "leaderboard"
    assert src.source.path == "router_oracle/data/swebench-bash-only-leaderboard-2026-02-26.json.gz"


def test_leaderboard_filtered_rows_match_the_data(board: dict) -> None:
    src = read_leaderboard(leaderboard_path(), runs={KIMI})
    assert {r.run for r in src.rows} == {KIMI} and len(src.rows) == 500
    d = details(board, KIMI)
    for row in src.rows:
        assert row.resolved == d[row.task_id]["resolved"] and row.cost == d[row.task_id]["cost"]
    assert sum(r.resolved is True for r in src.rows) == 354  # headline 70.8 %


def test_leaderboard_plain_json_and_quirky_zero_cost(tmp_path: Path, board: dict) -> None:
    flash = next(e for e in board["results"] if e["folder"] == "20260217_mini-v2.0.0_gemini-3-flash-high")
    rows = read_leaderboard(write_board(tmp_path, [flash])).rows
    assert len(rows) == 500 and any(r.cost == 0.0 for r in rows)  # known $0 quirk is valid


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"resolved": "yes"}, "resolved must be true or false"),
        ({"resolved": 1}, "resolved must be true or false"),
        ({"cost": -0.5}, "cost must be finite and >= 0"),
        ({"cost": float("nan")}, "cost must be finite and >= 0"),
        ({"cost": "0.3"}, "cost must be a number"),
    ],
)
def test_leaderboard_bad_values_name_file_and_row(tmp_path: Path, board: dict, patch, message) -> None:
    entry = dict(next(e for e in board["results"] if e["folder"] == KIMI))
    entry["per_instance_details"] = dict(entry["per_instance_details"])
    entry["per_instance_details"]["django__django-11099"] = {
        "api_calls": 3,
        "cost": 0.1,
        "resolved": True,
    } | patch
    path = write_board(tmp_path, [entry])
    with pytest.raises(OracleInputError, match=message) as exc:
        read_leaderboard(path)
    assert str(path) in str(exc.value) and "django__django-11099" in str(exc.value)


def test_leaderboard_structure_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(OracleInputError, match="malformed JSON"):
        read_leaderboard(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(OracleInputError, match="not a leaderboard"):
        read_leaderboard(bad)
    entry = {"folder": "r1", "per_instance_details": {"a__a-1": {"resolved": True, "cost": 1.0}}}
    with pytest.raises(OracleInputError, match="duplicate run 'r1'"):
        read_leaderboard(write_board(tmp_path, [entry, entry]))
    gz = tmp_path / "broken.json.gz"
    gz.write_bytes(b"not gzip")
    with pytest.raises(OracleInputError, match="cannot read"):
        read_leaderboard(gz)


# --- harness run report ------------------------------------------------------------------------


def test_harness_report_real_format_matches_leaderboard(board: dict) -> None:
    path = FIXTURES / "harness" / "google__gemini-3-pro-preview.gemini-3-pro-sample.json"
    src = read_harness_report(path, run=GEMINI)
    d = details(board, GEMINI)
    assert len(src.rows) == 7 and src.source.kind == "harness_report"
    for row in src.rows:
        assert row.cost is None and row.run == GEMINI
        assert row.resolved == d[row.task_id]["resolved"]


def test_harness_report_errors_count_unresolved_and_incomplete_give_no_row() -> None:
    src = read_harness_report(FIXTURES / "harness" / "older-summary.json", run="r")
    assert {r.task_id: r.resolved for r in src.rows} == {
        "sympy__sympy-15599": False,
        "sympy__sympy-12419": False,
        "sympy__sympy-18698": False,
    }


def test_harness_report_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "m.run.json"
    path.write_text(json.dumps({"resolved_ids": ["a__a-1"], "unresolved_ids": ["a__a-1"]}))
    with pytest.raises(OracleInputError, match=r"unresolved_ids\[0\]: duplicate row"):
        read_harness_report(path, run="r")
    path.write_text(json.dumps({"resolved_ids": []}))
    with pytest.raises(OracleInputError, match="not a SWE-bench harness run report"):
        read_harness_report(path, run="r")
    path.write_text(json.dumps({"resolved_ids": [3], "unresolved_ids": []}))
    with pytest.raises(OracleInputError, match=r"resolved_ids\[0\]: task id must be"):
        read_harness_report(path, run="r")
    path.write_text("{")
    with pytest.raises(OracleInputError, match="malformed JSON"):
        read_harness_report(path, run="r")


# --- mini-SWE-agent trajectories ----------------------------------------------------------------


def test_trajectories_real_files_give_the_leaderboard_costs(board: dict) -> None:
    src = read_trajectories(FIXTURES / "trajs" / "gemini-3-pro", run=GEMINI)
    d = details(board, GEMINI)
    assert sorted(r.task_id for r in src.rows) == ["astropy__astropy-12907", "django__django-11099"]
    for row in src.rows:
        assert row.resolved is None and row.cost == d[row.task_id]["cost"]
    assert src.source.kind == "trajectories" and len(src.source.sha256) == 64


def test_trajectories_flat_layout_and_digest(tmp_path: Path) -> None:
    shutil.copy(TRAJ, tmp_path / "django__django-11099.traj")
    doc = json.loads(TRAJ.read_text())
    del doc["instance_id"]  # then the file name gives the id
    (tmp_path / "astropy__astropy-12907.traj.json").write_text(json.dumps(doc | {"info": doc["info"]}))
    first = read_trajectories(tmp_path, run="r")
    assert sorted(r.task_id for r in first.rows) == ["astropy__astropy-12907", "django__django-11099"]
    doc["info"]["model_stats"]["instance_cost"] = 0.5
    (tmp_path / "astropy__astropy-12907.traj.json").write_text(json.dumps(doc))
    second = read_trajectories(tmp_path, run="r")
    assert second.source.sha256 != first.source.sha256


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(instance_id="django__django-1"), "does not match the file name"),
        (lambda d: d["info"].pop("model_stats"), r"no `info.model_stats.instance_cost`"),
        (lambda d: d["info"]["model_stats"].update(instance_cost=-1), "cost must be finite and >= 0"),
        (lambda d: d["info"]["model_stats"].update(instance_cost=None), "cost must be a number"),
        (lambda d: d.pop("info"), "not a mini-SWE-agent trajectory"),
    ],
)
def test_trajectories_bad_files(tmp_path: Path, mutate, message) -> None:
    doc = json.loads(TRAJ.read_text())
    mutate(doc)
    (tmp_path / "django__django-11099").mkdir()
    bad = tmp_path / "django__django-11099" / "django__django-11099.traj.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(OracleInputError, match=message) as exc:
        read_trajectories(tmp_path, run="r")
    assert str(bad) in str(exc.value)


def test_trajectories_empty_or_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(OracleInputError, match="no trajectory files"):
        read_trajectories(tmp_path, run="r")
    with pytest.raises(OracleInputError, match="no such trajectory directory"):
        read_trajectories(tmp_path / "nope", run="r")
    (tmp_path / "x.traj.json").write_text("{oops")
    with pytest.raises(OracleInputError, match="malformed JSON"):
        read_trajectories(tmp_path, run="r")


# --- long table -------------------------------------------------------------------------------


def test_long_table_csv_and_jsonl_agree_with_each_other_and_the_leaderboard(board: dict) -> None:
    csv_rows = read_long_table(FIXTURES / "long_table.csv").rows
    jsonl_rows = read_long_table(FIXTURES / "long_table.jsonl").rows
    assert len(csv_rows) == len(jsonl_rows) == 9
    key = [(r.task_id, r.run, r.resolved, r.cost) for r in csv_rows]
    assert key == [(r.task_id, r.run, r.resolved, r.cost) for r in jsonl_rows]
    for task_id, run, resolved, cost in key:
        assert details(board, run)[task_id] | {"api_calls": 0} == {
            "resolved": resolved,
            "cost": cost,
            "api_calls": 0,
        }
    assert csv_rows[0].model == "claude-opus-4.6" and jsonl_rows[0].model is None


def test_long_table_partial_columns_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("task_id,model,resolved\na__a-1,m1,TRUE\na__a-2,m1,0\n")
    rows = read_long_table(path).rows
    assert [(r.run, r.resolved, r.cost) for r in rows] == [("m1", True, None), ("m1", False, None)]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.csv", "task_id,run,resolved\na__a-1,r,yes\n", r"line 2: resolved must be true/false"),
        ("t.csv", "task_id,run,cost\na__a-1,r,nan\n", r"line 2: cost must be finite and >= 0"),
        ("t.csv", "task_id,run,cost\na__a-1,r,-1\n", "cost must be finite and >= 0"),
        ("t.csv", "task_id,run,cost\na__a-1,r,cheap\n", "cost must be a number"),
        ("t.csv", "task_id,run,cost\na__a-1,r,1,2\n", "malformed CSV"),
        ("t.csv", "run,cost\nr,1\n", "exactly one of `task_id` / `instance_id`"),
        ("t.csv", "task_id,instance_id,run,cost\na,a,r,1\n", "exactly one of"),
        ("t.csv", "task_id,cost\na__a-1,1\n", r"run \(or model\)"),
        ("t.csv", "task_id,run\na__a-1,r\n", "needs a `resolved` or a `cost` column"),
        ("t.csv", "task_id,run,resolved,cost\na__a-1,r,,\n", "neither resolved nor cost"),
        ("t.csv", "", "empty CSV"),
        ("t.jsonl", '{"task_id": "a__a-1", "run": "r", "resolved": 1}\n', "resolved must be true or false"),
        ("t.jsonl", '{"task_id": "a__a-1", "run": "r", "cost": NaN}\n', "cost must be finite"),
        ("t.jsonl", '{"task_id": "a__a-1", "run": "r", "cost": 1}\n{oops\n', "line 2: malformed JSON"),
        ("t.jsonl", "[1]\n", "expected a JSON object per line"),
        ("t.txt", "x", "unknown long-table format"),
    ],
)
def test_long_table_errors_name_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(OracleInputError, match=message) as exc:
        read_long_table(path)
    assert str(path) in str(exc.value)
