"""Candidates tables: the grouping rule, the bundled file, derived pools equal built ones, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracle_samples import leaderboard_results, write_tasks

from router_oracle.build import build_table
from router_oracle.candidates import (
    CandidatesError,
    bundled_candidates_path,
    dumps_candidates,
    load_candidates,
    loads_candidates,
)
from router_oracle.candidates_build import build_candidates
from router_oracle.cli import main
from router_oracle.derive import CandidateIndex, derive_table
from router_oracle.infra.errors import OracleInputError
from router_oracle.leaderboard_models import base_model, reasoning_effort
from router_oracle.sources.registry import SourceSpec
from router_oracle.sources.run_entry import MINI_SWE_AGENT, RunEntry
from router_oracle.table import Pool, TableError, dumps_table
from router_oracle.table_check import load_table

BROKEN = "20250720_mini-v0.0.0-claude-3-7-sonnet-20250219"


@pytest.fixture(scope="module")
def index() -> CandidateIndex:
    return CandidateIndex.load("bundled")


def entry(tag: str | None, name: str, run: str = "r") -> RunEntry:
    return RunEntry(
        run=run,
        name=name,
        tags=(f"Model: {tag}",) if tag else (),
        harness=MINI_SWE_AGENT,
        agent_version=None,
        date=None,
        headline_resolved=None,
        resolved_count=None,
        task_ids=None,
    )


# --- the grouping rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "name", "base", "effort"),
    [
        ("gpt-5.2-2025-12-11", "GPT-5.2 (2025-12-11) (high reasoning)", "gpt-5.2", "high"),
        ("gpt-5-2", "GPT-5-2 (high reasoning)", "gpt-5.2", "high"),
        ("gpt-5.2-2025-12-11", "GPT-5.2 (2025-12-11)", "gpt-5.2", None),
        ("claude-4-5-opus", "Claude 4.5 Opus (high reasoning)", "claude-opus-4.5", "high"),
        ("claude-opus-4-5-20251101", "Claude 4.5 Opus medium (20251101)", "claude-opus-4.5", "medium"),
        ("claude-opus-4-6", "Claude Opus 4.6", "claude-opus-4.6", None),
        ("claude-4-opus-20250514", "Claude 4 Opus (20250514)", "claude-opus-4", None),
        ("o3-20250416", "o3 (2025-04-16)", "o3", None),
        (
            "Qwen3-Coder-480B-A35B-Instruct",
            "Qwen3-Coder 480B/A35B Instruct",
            "qwen3-coder-480b-a35b-instruct",
            None,
        ),
        ("devstral-small-2512", "Devstral small (2512)", "devstral-small-2512", None),
        (None, "My Model 2 (low reasoning)", "my-model-2", "low"),
        ("Kimi-K2-Thinking", "Kimi K2 Thinking", "kimi-k2-thinking", None),
    ],
)
def test_base_model_and_effort(tag: str | None, name: str, base: str, effort: str | None) -> None:
    e = entry(tag, name)
    assert (base_model(e), reasoning_effort(e)) == (base, effort)


def test_bundled_candidates_group_the_leaderboard() -> None:
    c = load_candidates()
    with_data = [e for e in leaderboard_results() if e.get("per_instance_details")]
    assert len(with_data) == 40
    # 40 runs with per-task data, one with broken flags left out, GPT-5.2 (high) has two runs
    assert len(c.runs) == 39 and len(c.models) == 38 and len(c.tasks) == 500
    assert BROKEN not in c.runs
    reasons = {x.run: x.reason for x in c.excluded}
    assert reasons[BROKEN].startswith("broken per-task resolved flags: 51 of 500 tasks (10.2%)")
    assert sum(r.startswith("no per-task data") for r in reasons.values()) == 6
    assert [r.run for r in c.model("gpt-5.2-high").runs] == [
        "20251211_mini-v1.17.2_gpt-5.2-2025-12-11-high",
        "20260217_mini-v2.0.0_gpt-5-2-high",
    ]
    assert {"claude-opus-4.6", "kimi-k2.5-high", "gpt-5.2", "minimax-m2.5-high"} <= set(c.ids)
    assert c.model("claude-opus-4.5-medium").base_model == c.model("claude-opus-4.5-high").base_model
    assert c.model("glm-4.6").provider == c.model("glm-5-high").provider == "zai"  # "Z.ai" and "Z-AI"
    # every number is the leaderboard's own
    board = {e["folder"]: e["per_instance_details"] for e in with_data}
    for t in c.tasks[::50]:
        for k, run in enumerate(c.runs):
            assert (t.resolved[k], t.cost[k]) == (
                board[run][t.instance_id]["resolved"],
                board[run][t.instance_id]["cost"],
            )


def test_bundled_candidates_file_is_current_and_canonical() -> None:
    # Regenerate: router-oracle candidates -o packages/oracle/src/router_oracle/data/candidates.json
    fresh = build_candidates(output=bundled_candidates_path())
    text = bundled_candidates_path().read_text(encoding="utf-8")
    assert text == dumps_candidates(fresh)
    assert loads_candidates(text) == fresh
    assert (
        fresh.command
        == "router-oracle candidates --leaderboard bundled -o router_oracle/data/candidates.json"
    )
    assert [s.kind for s in fresh.sources] == ["tasks", "leaderboard"]


# --- derived tables equal built ones -----------------------------------------------------------


def _check_derived_equals_built(index: CandidateIndex, ids: list[str]) -> None:
    derived = index.table(ids, pool_name="p")
    pool = Pool(
        name="p",
        description=derived.pool.description,
        models=[index.candidates.model(i).pool_model() for i in ids],
    )
    built = build_table(pool, sources=[SourceSpec("leaderboard", "bundled")])
    assert derived.pool == built.pool and derived.rule == built.rule
    assert derived.tasks == built.tasks
    assert derived.sources[0].kind == "candidates" and derived.sources[1:] == built.sources


IDS = load_candidates().ids


@settings(max_examples=12, deadline=None)
@given(st.lists(st.sampled_from(IDS), min_size=2, max_size=6, unique=True))
@example(["gpt-5.2-high", "claude-opus-4.6", "kimi-k2.5-high"])  # a two-run model
@example(["minimax-m2.5-high", "gpt-5-mini"])
def test_random_subset_derives_the_table_built_for_that_pool(index: CandidateIndex, ids: list[str]) -> None:
    _check_derived_equals_built(index, ids)  # the bundled index, loaded once for every example


def test_a_pool_of_one_model_is_refused() -> None:
    with pytest.raises(TableError, match="has 1 model"):
        CandidateIndex.load("bundled").table(["minimax-m2.5-high"])


def test_derived_table_round_trips_and_is_deterministic(index: CandidateIndex, tmp_path: Path) -> None:
    ids = ["o3", "glm-5-high", "gpt-5-mini"]
    table = index.table(ids)
    assert dumps_table(table) == dumps_table(derive_table("bundled", ids))
    assert table.command == "router-oracle build --from-candidates bundled --models o3,glm-5-high,gpt-5-mini"
    assert table.pool.ids == ids  # pool order as given
    in_memory = derive_table(load_candidates(), ids)
    assert in_memory.tasks == table.tasks and in_memory.sources[0].sha256 == table.sources[0].sha256
    assert "--from-candidates '(in memory)'" in in_memory.command
    # the digest recorded is the bundled file's own
    from router_oracle.infra.file_hash import sha256_file

    assert table.sources[0].sha256 == sha256_file(bundled_candidates_path())
    assert table.sources[0].path == "router_oracle/data/candidates.json"


def test_pool_errors(index: CandidateIndex) -> None:
    with pytest.raises(CandidatesError, match=r"bundled: unknown candidate model.*nope"):
        index.pool(["o3", "nope"])
    with pytest.raises(CandidatesError, match="listed twice"):
        index.pool(["o3", "o3"])
    with pytest.raises(CandidatesError, match="at least one model"):
        index.pool([])
    with pytest.raises(CandidatesError, match="task 'x' is not in the candidates table"):
        index.records(index.pool(["o3"]), ["x"])


# --- files and bad input -----------------------------------------------------------------------


def test_bad_candidates_files_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(CandidatesError, match=r"junk\.json: not a valid candidates table"):
        load_candidates(tmp_path / "junk.json")
    with pytest.raises(CandidatesError, match=r"missing\.json: cannot read"):
        load_candidates(tmp_path / "missing.json")
    doc = json.loads(bundled_candidates_path().read_text())
    doc["tasks"][3]["cost"] = doc["tasks"][3]["cost"][:-1]
    (tmp_path / "short.json").write_text(json.dumps(doc))
    with pytest.raises(CandidatesError, match=r"(?s)short\.json.*expected 39 resolved flags and costs"):
        load_candidates(tmp_path / "short.json")
    doc = json.loads(bundled_candidates_path().read_text())
    doc["tasks"][0]["cost"][0] = -1.0
    (tmp_path / "neg.json").write_text(json.dumps(doc))
    with pytest.raises(CandidatesError, match=r"(?s)neg\.json.*finite and >= 0"):
        load_candidates(tmp_path / "neg.json")


def _board(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "board.json"
    path.write_text(json.dumps({"name": "test", "results": entries}))
    return path


def _entry(run: str, tag: str, name: str, resolved: list[bool] | None, headline: float | None = None) -> dict:
    ids = ["astropy__astropy-12907", "django__django-11099"]
    details = (
        None
        if resolved is None
        else {
            i: {"resolved": r, "cost": 0.5 + k} for k, (i, r) in enumerate(zip(ids, resolved, strict=False))
        }
    )
    return {
        "folder": run,
        "name": name,
        "tags": [f"Model: {tag}", "Org: Acme"],
        "resolved": headline,
        "per_instance_details": details,
    }


def test_build_from_a_small_leaderboard(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, ["astropy__astropy-12907", "django__django-11099"])
    board = _board(
        tmp_path,
        [
            _entry("2025_a1", "acme-1-5-20250101", "Acme 1.5 (high reasoning)", [True, False], 50.0),
            _entry("2026_a2", "acme-1.5", "Acme 1.5 (2026-01-01) (high reasoning)", [True, True], 100.0),
            _entry("2026_a3", "acme-1.5", "Acme 1.5", [False, False], 0.0),
            _entry("2026_none", "acme-2", "Acme 2", None, 70.0),
            _entry("2026_broken", "acme-3", "Acme 3", [False, False], 60.0),
            _entry("2026_short", "acme-4", "Acme 4", [True], 50.0),
        ],
    )
    c = build_candidates([SourceSpec("leaderboard", str(board))], tasks=tasks)
    assert c.ids == ["acme-1.5", "acme-1.5-high"]
    high = c.model("acme-1.5-high")
    assert [r.run for r in high.runs] == ["2025_a1", "2026_a2"] and high.name == "Acme 1.5 (high reasoning)"
    assert high.provider == "acme" and high.effort == "high" and high.base_model == "acme-1.5"
    assert {x.run: x.reason.split(":")[0] for x in c.excluded} == {
        "2026_none": "no per-task data (per_instance_details is null)",
        "2026_broken": "broken per-task resolved flags",
        "2026_short": "per-task data misses 1 of 2 tasks (e.g. django__django-11099)",
    }
    table = derive_table(c, ["acme-1.5-high", "acme-1.5"])
    astropy = table.task("astropy__astropy-12907")
    assert astropy.per_model["acme-1.5-high"].resolve_rate == 1.0 and astropy.oracle == "acme-1.5-high"
    django = table.task("django__django-11099")
    assert django.per_model["acme-1.5-high"].resolve_rate == 0.5 and django.oracle == "acme-1.5-high"
    assert django.per_model["acme-1.5-high"].cost == 1.5


def test_id_clash_and_empty_leaderboards_are_errors(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, ["astropy__astropy-12907", "django__django-11099"])
    clash = _board(
        tmp_path,
        [
            _entry("a", "acme-high", "Acme H", [True, True]),
            _entry("b", "acme", "Acme (high reasoning)", [True, True]),
        ],
    )
    with pytest.raises(OracleInputError, match=r"share the id\(s\) \['acme-high'\]"):
        build_candidates([SourceSpec("leaderboard", str(clash))], tasks=tasks)
    empty = _board(tmp_path, [_entry("a", "acme", "Acme", None)])
    with pytest.raises(OracleInputError, match="no run has per-task data"):
        build_candidates([SourceSpec("leaderboard", str(empty))], tasks=tasks)


# --- the CLI -----------------------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_candidates_models_and_derive(in_tmp: Path, capsys) -> None:
    assert main(["candidates", "-o", "c.json"]) == 0
    out = capsys.readouterr().out
    assert "wrote c.json: 38 models from 39 runs, 500 tasks; 7 runs left out" in out
    assert f"left out {BROKEN}: broken per-task resolved flags" in out
    assert (in_tmp / "c.json").read_text() == dumps_candidates(build_candidates(output="c.json"))
    assert main(["models", "--candidates", "c.json"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("38 candidate models from 39 runs, 500 tasks (7 runs left out)")
    assert "minimax-m2.5-high" in listing and "75.8%" in listing and "36.64" in listing
    argv = ["build", "--from-candidates", "c.json", "--models", "kimi-k2.5-high,o3", "--pool-name", "two"]
    assert main([*argv, "-o", "t.json"]) == 0
    assert "wrote t.json: 500 tasks, pool two (kimi-k2.5-high, o3)" in capsys.readouterr().out
    table = load_table("t.json")
    assert table.command == shlex_join([*["router-oracle", *argv], "-o", "t.json"])
    assert table.tasks == derive_table("bundled", ["kimi-k2.5-high", "o3"]).tasks


def shlex_join(parts: list[str]) -> str:
    import shlex

    return shlex.join(parts)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from-candidates", "bundled"], "--from-candidates needs --models"),
        (["--from-candidates", "bundled", "--models", "o3", "--pool", "default"], "drop ['--pool']"),
        (["--from-candidates", "bundled", "--models", "o3", "--tie-cost", "price"], "drop --tie-cost"),
        (["--models", "o3"], "--models and --pool-name go with --from-candidates"),
    ],
)
def test_cli_derive_usage_errors(in_tmp: Path, capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["build", *argv, "-o", "x.json"])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert not (in_tmp / "x.json").exists()


def test_cli_derive_bad_input_exits_2(in_tmp: Path, capsys) -> None:
    assert main(["build", "--from-candidates", "bundled", "--models", "o3,nope", "-o", "x.json"]) == 2
    assert "bundled: unknown candidate model(s) nope" in capsys.readouterr().err
    (in_tmp / "junk.json").write_text("[]")
    assert main(["build", "--from-candidates", "junk.json", "--models", "o3", "-o", "x.json"]) == 2
    assert "junk.json: not a valid candidates table" in capsys.readouterr().err
    assert main(["models", "--candidates", "junk.json"]) == 2
    assert not (in_tmp / "x.json").exists()


def test_an_oracle_table_given_as_candidates_is_one_line(in_tmp: Path, capsys) -> None:
    # shaped like an oracle table: hundreds of wrong task rows (pydantic's text ran to 9,019 lines)
    row = {"oracle": "o3", "per_model": {"o3": {"resolved": True}}}
    rows = [{"instance_id": f"a__b-{i}", **row} for i in range(500)]
    table = in_tmp / "oracle_table.json"
    table.write_text(json.dumps({"schema_version": 1, "pool": {"name": "p", "models": []}, "tasks": rows}))
    for argv in (
        ["build", "--from-candidates", str(table), "--models", "o3", "-o", "x.json"],
        ["models", "--candidates", str(table)],
    ):
        assert main(argv) == 2
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1, captured.err[:2000]
        assert lines[0].startswith(f"router-oracle: error: {table}: not a valid candidates table")
        assert "pydantic.dev" not in lines[0] and "more error" in lines[0]
    assert not (in_tmp / "x.json").exists()


def test_a_run_listed_twice_is_one_line_naming_the_file(in_tmp: Path, capsys) -> None:
    """Issue 41 item 5: `candidates` names the file (and the entry) of a duplicated run, as `build` does."""
    doc = {"name": "b", "results": [*leaderboard_results()[:4], leaderboard_results()[3]]}
    (in_tmp / "dup.json").write_text(json.dumps(doc))
    run = doc["results"][3]["folder"]
    assert main(["candidates", "--leaderboard", "dup.json", "-o", "c.json"]) == 2
    assert (
        capsys.readouterr().err
        == f"router-oracle: error: dup.json: results[4]: duplicate run {run!r} (also results[3])\n"
    )
    assert main(["candidates", "--leaderboard", "bundled", "--leaderboard", "bundled", "-o", "c.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("router-oracle: error: bundled: run ") and "is also in bundled" in err
    assert not (in_tmp / "c.json").exists()
