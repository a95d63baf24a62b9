"""Building tables: the real default / multi-run tables, merging sources, determinism and errors."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle_samples import FIXTURES, leaderboard_results, write_tasks, write_trajectories

from router_oracle.analysis.stats import compute_stats
from router_oracle.build import build_table
from router_oracle.data_files import leaderboard_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.pool_file import load_pool
from router_oracle.sources.registry import SourceSpec
from router_oracle.table import OracleTable, Pool, PoolModel, dumps_table
from router_oracle.table_check import loads_table
from router_oracle.tie_rule import Candidate, pick_oracle

OPUS, GPT, KIMI = (
    "20260217_mini-v2.0.0_claude-4-6-opus",
    "20260217_mini-v2.0.0_gpt-5-2-high",
    "20260217_mini-v2.0.0_kimi-k2-5-high",
)


@pytest.fixture(scope="module")
def board() -> dict:
    return {e["folder"]: e for e in leaderboard_results()}


@pytest.fixture(scope="module")
def default_table() -> OracleTable:
    return build_table("bash-only")


# --- the real tables ---------------------------------------------------------------------------


def test_default_table_matches_the_leaderboard(default_table: OracleTable, board: dict) -> None:
    t = default_table
    assert [x.instance_id for x in t.tasks] == sorted(x.instance_id for x in t.tasks)
    assert len(t.tasks) == 500
    for model, run in zip(t.pool.models, [OPUS, GPT, KIMI], strict=True):
        entry = board[run]
        assert [m for m in t.tasks[0].per_model] == t.pool.ids
        resolved = sum(x.per_model[model.id].resolve_rate for x in t.tasks)
        assert resolved / 5 == pytest.approx(entry["resolved"])  # headline percent
        assert math.fsum(x.per_model[model.id].cost for x in t.tasks) == pytest.approx(
            entry["cost"], rel=1e-12
        )
    assert [s.kind for s in t.sources] == ["tasks", "leaderboard"]
    assert all(s.path.startswith("router_oracle/data/") for s in t.sources)
    assert t.command == "router-oracle build --pool bash-only --leaderboard bundled --tie-cost measured"


def test_every_pick_follows_the_rule(default_table: OracleTable) -> None:
    for x in default_table.tasks:
        pick = pick_oracle(Candidate(i, o.resolve_rate, o.cost) for i, o in x.per_model.items())
        assert (x.oracle, x.best) == (pick.oracle, pick.best)
        assert x.all_failed == all(o.resolve_rate == 0 for o in x.per_model.values())
    compute_stats(default_table)  # re-checks every pick too


def test_multi_run_table_aggregates_rollouts(board: dict) -> None:
    t = build_table("multi_run")
    pool = load_pool("multi_run")
    for x in t.tasks[:50]:
        for m in pool.models:
            out = x.per_model[m.id]
            assert [r.run for r in out.runs] == m.runs
            flags = [board[r]["per_instance_details"][x.instance_id]["resolved"] for r in m.runs]
            costs = [board[r]["per_instance_details"][x.instance_id]["cost"] for r in m.runs]
            assert out.resolve_rate == sum(flags) / len(flags) and out.resolve_rate in (0, 0.5, 1)
            assert out.cost == math.fsum(costs) / len(costs)


def test_build_is_fast_deterministic_and_round_trips(default_table: OracleTable, tmp_path: Path) -> None:
    start = time.perf_counter()
    again = build_table("bash-only")
    assert time.perf_counter() - start < 3.0
    text = dumps_table(default_table)
    assert dumps_table(again) == text
    assert loads_table(text) == default_table and dumps_table(loads_table(text)) == text
    out = tmp_path / "t.json"
    build_table("bash-only", output=out)
    build_table("bash-only", output=tmp_path / "u.json")
    assert out.read_bytes().replace(b"t.json", b"u.json") == (tmp_path / "u.json").read_bytes()


def test_price_tie_cost(tmp_path: Path) -> None:
    pool = load_pool("bash-only")
    prices = {"claude-opus-4.6": 0.55, "gpt-5.2-high": 0.47, "kimi-k2.5-high": 0.15}
    priced = Pool(
        name="priced",
        models=[PoolModel(id=m.id, name=m.name, runs=m.runs, price=prices[m.id]) for m in pool.models],
    )
    t = build_table(priced, tie_cost="price")
    assert t.rule.tie_cost == "price"
    for x in t.tasks:
        assert x.oracle == min(x.best, key=lambda i: (prices[i], i))
    with pytest.raises(OracleInputError, match="needs a `price` for every model"):
        build_table("bash-only", tie_cost="price")


# --- merging other sources ---------------------------------------------------------------------


def test_harness_report_plus_trajectories_reproduce_the_leaderboard_table(
    tmp_path: Path, board: dict, default_table: OracleTable
) -> None:
    """Kimi's results given as a harness report (resolved) + trajectories (cost) instead of the board."""
    details = board[KIMI]["per_instance_details"]
    ids = sorted(details)
    resolved = [i for i in ids if details[i]["resolved"]]
    report = {
        "total_instances": 500, "submitted_instances": 500, "completed_instances": 500,
        "resolved_instances": len(resolved), "unresolved_instances": 500 - len(resolved),
        "empty_patch_instances": 0, "error_instances": 0, "completed_ids": ids, "incomplete_ids": [],
        "empty_patch_ids": [], "submitted_ids": ids, "resolved_ids": resolved,
        "unresolved_ids": [i for i in ids if not details[i]["resolved"]], "error_ids": [],
        "schema_version": 2,
    }  # fmt: skip
    report_path = tmp_path / "moonshot__kimi-k2.5.local.json"
    report_path.write_text(json.dumps(report, indent=4))
    trajs = write_trajectories(tmp_path / "trajs", {i: details[i]["cost"] for i in ids})
    base = load_pool("bash-only")
    pool = Pool(
        name="local", models=[*base.models[:2], base.models[2].model_copy(update={"runs": ["local-kimi"]})]
    )
    t = build_table(
        pool,
        sources=[
            SourceSpec("leaderboard", "bundled"),
            SourceSpec("harness_report", str(report_path), "local-kimi"),
            SourceSpec("trajectories", str(trajs), "local-kimi"),
        ],
    )
    assert [s.kind for s in t.sources] == ["tasks", "leaderboard", "harness_report", "trajectories"]
    for a, b in zip(t.tasks, default_table.tasks, strict=True):
        assert (a.oracle, a.best, a.all_failed) == (b.oracle, b.best, b.all_failed)
        assert {k: (v.resolve_rate, v.cost) for k, v in a.per_model.items()} == {
            k: (v.resolve_rate, v.cost) for k, v in b.per_model.items()
        }


def test_long_table_only_build(tmp_path: Path) -> None:
    tasks = write_tasks(
        tmp_path, ["astropy__astropy-12907", "astropy__astropy-13033", "astropy__astropy-13236"]
    )
    t_csv = build_table(
        "bash-only", sources=[SourceSpec("long_table", str(FIXTURES / "long_table.csv"))], tasks=tasks
    )
    t_jsonl = build_table(
        "bash-only", sources=[SourceSpec("long_table", str(FIXTURES / "long_table.jsonl"))], tasks=tasks
    )
    assert [x.oracle for x in t_csv.tasks] == [x.oracle for x in t_jsonl.tasks]
    assert [x.model_dump()["per_model"] for x in t_csv.tasks] == [
        x.model_dump()["per_model"] for x in t_jsonl.tasks
    ]
    # astropy-12907: all resolved, GPT cheapest; the other two: all failed, Kimi cheapest
    assert [x.oracle for x in t_csv.tasks] == ["gpt-5.2-high", "kimi-k2.5-high", "kimi-k2.5-high"]
    assert [x.all_failed for x in t_csv.tasks] == [False, True, True]


# --- errors -----------------------------------------------------------------------------------


def test_unknown_task_id(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, ["astropy__astropy-12907", "astropy__astropy-13033"])
    with pytest.raises(OracleInputError, match="unknown task id 'astropy__astropy-13236'") as exc:
        build_table(
            "bash-only", sources=[SourceSpec("long_table", str(FIXTURES / "long_table.csv"))], tasks=tasks
        )
    assert "long_table.csv: line 8" in str(exc.value)


def test_model_missing_tasks(tmp_path: Path) -> None:
    tasks = write_tasks(
        tmp_path, ["astropy__astropy-12907", "astropy__astropy-13033", "astropy__astropy-13236"]
    )
    lines = (FIXTURES / "long_table.csv").read_text().splitlines()
    partial = tmp_path / "partial.csv"
    partial.write_text(
        "\n".join(line for line in lines if not line.startswith("astropy__astropy-13236,kimi"))
    )
    with pytest.raises(
        OracleInputError, match=r"model 'kimi-k2.5-high' run .*: no resolved for 1 of 3 tasks"
    ):
        build_table("bash-only", sources=[SourceSpec("long_table", str(partial))], tasks=tasks)


def test_cost_missing_when_only_a_harness_report_is_given(tmp_path: Path) -> None:
    report = FIXTURES / "harness" / "google__gemini-3-pro-preview.gemini-3-pro-sample.json"
    ids = json.loads(report.read_text())["submitted_ids"]
    pool = Pool(name="g", models=[PoolModel(id="gemini-3-pro", name="Gemini 3 Pro", runs=["g1"])])
    with pytest.raises(
        OracleInputError, match=r"no cost for 7 of 7 tasks .*sources with this run: .*gemini-3-pro"
    ):
        build_table(
            pool, sources=[SourceSpec("harness_report", str(report), "g1")], tasks=write_tasks(tmp_path, ids)
        )


def test_duplicate_rows(tmp_path: Path) -> None:
    with pytest.raises(OracleInputError, match="duplicate row: resolved for 'astropy__astropy-12907'"):
        build_table(
            "bash-only",
            sources=[
                SourceSpec("leaderboard", "bundled"),
                SourceSpec("leaderboard", str(leaderboard_path())),
            ],
        )
    dup = tmp_path / "dup.jsonl"
    line = (FIXTURES / "long_table.jsonl").read_text().splitlines()[0]
    dup.write_text(line + "\n" + line + "\n")
    with pytest.raises(
        OracleInputError, match=r"dup.jsonl: line 2: duplicate row: .* already given by .*line 1"
    ):
        build_table(
            "bash-only",
            sources=[SourceSpec("long_table", str(dup))],
            tasks=write_tasks(tmp_path, ["astropy__astropy-12907"]),
        )


def test_long_table_model_must_own_the_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        f"instance_id,model,run,resolved,cost\nastropy__astropy-12907,kimi-k2.5-high,{OPUS},true,1\n"
    )
    with pytest.raises(OracleInputError, match="does not own run"):
        build_table(
            "bash-only",
            sources=[SourceSpec("long_table", str(bad))],
            tasks=write_tasks(tmp_path, ["astropy__astropy-12907"]),
        )


def test_pool_run_that_no_source_has(tmp_path: Path) -> None:
    pool = tmp_path / "pool.toml"
    pool.write_text('name = "p"\n[[models]]\nid = "ghost"\nname = "Ghost"\nruns = ["20990101_no-such-run"]\n')
    with pytest.raises(OracleInputError, match="no bundled source holds any of its runs"):
        build_table(pool)
    with pytest.raises(OracleInputError, match="names run '20990101_no-such-run' that no source has"):
        build_table(pool, sources=[SourceSpec("leaderboard", "bundled")])


def test_explicit_run_must_be_in_the_pool() -> None:
    report = FIXTURES / "harness" / "older-summary.json"
    with pytest.raises(OracleInputError, match="--run 'typo' is not a run of pool 'bash-only'"):
        build_table("bash-only", sources=[SourceSpec("harness_report", str(report), "typo")])


def test_bad_tasks_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    for text, message in [
        ("{oops\n", "line 1: malformed JSON"),
        ('{"instance_id": "a"}\n', "line 1: not a task row"),
        ("", "no tasks"),
        ('{"instance_id": "a", "repo": "o/r", "problem_statement": "p"}\n' * 2, "line 2: duplicate task"),
    ]:
        path.write_text(text)
        with pytest.raises(OracleInputError, match=message):
            build_table("bash-only", tasks=path)


# --- determinism on random inputs --------------------------------------------------------------

RUNS = {"m-a": ["ra1", "ra2"], "m-b": ["rb"], "m-c": ["rc1", "rc2", "rc3"]}
TASKS = ["astropy__astropy-12907", "astropy__astropy-13033", "astropy__astropy-13236", "django__django-11099"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.booleans(), st.floats(min_value=0, max_value=5, allow_nan=False)),
        min_size=len(TASKS) * 6,
        max_size=len(TASKS) * 6,
    ),
    st.permutations(list(RUNS)),
)
def test_random_long_tables_rebuild_byte_identical_and_round_trip(tmp_path_factory, values, order) -> None:
    tmp = tmp_path_factory.mktemp("rand")
    tasks = write_tasks(tmp, TASKS)
    cells = iter(values)
    lines = [
        json.dumps({"task_id": t, "run": r, "resolved": res, "cost": cost})
        for t in TASKS
        for runs in RUNS.values()
        for r in runs
        for res, cost in [next(cells)]
    ]
    table_file = tmp / "long.jsonl"
    table_file.write_text("\n".join(lines) + "\n")
    pool = Pool(name="rand", models=[PoolModel(id=m, name=m.upper(), runs=RUNS[m]) for m in order])
    first = build_table(pool, sources=[SourceSpec("long_table", str(table_file))], tasks=tasks)
    second = build_table(pool, sources=[SourceSpec("long_table", str(table_file))], tasks=tasks)
    assert dumps_table(first) == dumps_table(second)
    assert loads_table(dumps_table(first)) == first
    # pool order never changes a pick
    canonical = Pool(name="rand", models=[PoolModel(id=m, name=m.upper(), runs=RUNS[m]) for m in RUNS])
    other = build_table(canonical, sources=[SourceSpec("long_table", str(table_file))], tasks=tasks)
    assert [(x.oracle, x.best) for x in first.tasks] == [(x.oracle, x.best) for x in other.tasks]
