"""Bundled data: present, intact, attributed; pool files valid against the data."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from oracle_samples import leaderboard_results

from router_oracle.data_files import (
    DATA_DIR,
    display_path,
    leaderboard_path,
    pool_names,
    pool_path,
    tasks_path,
)
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.file_hash import sha256_file
from router_oracle.pool_file import load_pool

LEADERBOARD_SHA = "66c8f54e51ae20103dc00b29031a926ff502951a49f472a9c9c31b728025c924"
TASKS_SHA = "54d6c2841d443d976c7a5a24761c3d3faf5e440ed1a7c242b0e7663d1fbb01b3"


def test_bundled_files_are_the_unchanged_shared_data() -> None:
    assert sha256_file(leaderboard_path()) == LEADERBOARD_SHA
    assert sha256_file(tasks_path()) == TASKS_SHA


def test_tasks_file_has_500_sorted_tasks_without_gold_patches() -> None:
    with gzip.open(tasks_path(), "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    ids = [r["instance_id"] for r in rows]
    assert len(ids) == 500 and ids == sorted(ids)
    assert not any("patch" in r for r in rows)


def test_attribution_readme_names_sources_and_licenses() -> None:
    text = (DATA_DIR / "README.md").read_text(encoding="utf-8")
    for needle in (
        "CC BY-NC 4.0",
        "SWE-bench leaderboard, swe-bench.com",
        "non-commercial",
        "BSD-3-Clause",
        "MIT",
    ):
        assert needle in text


def test_pool_names_and_paths() -> None:
    assert {"default", "multi_run"} <= set(pool_names())
    assert pool_path("default").name == "default.toml"
    with pytest.raises(OracleInputError, match="no bundled pool named 'nope'"):
        pool_path("nope")


def test_display_path_is_machine_independent_and_tells_files_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert display_path(leaderboard_path()) == f"router_oracle/data/{leaderboard_path().name}"
    assert display_path("runs/report.json") == "runs/report.json"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert display_path(tmp_path / "sub" / "x.json") == "sub/x.json"
    outside = Path(os.path.abspath(os.sep)) / "elsewhere" / "x.json"
    # outside the working directory the path stays whole: `a/trajs` and `b/trajs` are not both `trajs`
    assert display_path(outside) == outside.as_posix()


def test_default_pool_is_the_reference_pool() -> None:
    pool = load_pool("bash-only")
    assert pool.ids == ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
    assert [m.runs for m in pool.models] == [
        ["20260217_mini-v2.0.0_claude-4-6-opus"],
        ["20260217_mini-v2.0.0_gpt-5-2-high"],
        ["20260217_mini-v2.0.0_kimi-k2-5-high"],
    ]


@pytest.mark.parametrize("name", ["bash-only", "multi_run"])
def test_every_bundled_pool_run_has_full_per_task_data(name: str) -> None:
    board = {e["folder"]: e.get("per_instance_details") for e in leaderboard_results()}
    pool = load_pool(name)
    for model in pool.models:
        for run in model.runs:
            assert board[run] is not None and len(board[run]) == 500
    if name == "multi_run":
        assert all(len(m.runs) >= 2 for m in pool.models)
