"""The OpenHands Index source: layout, quirks (null results, runs without cost), errors, the bundled
release, and the registry that threads every source kind through the CLI and the build."""

from __future__ import annotations

import importlib
import json
import re
import tarfile
from pathlib import Path

import pytest
from oracle_samples import write_tasks

import router_oracle.sources as sources
from router_oracle.build import build_table
from router_oracle.candidates import candidates_path, dumps_candidates, load_candidates
from router_oracle.candidates_build import build_candidates
from router_oracle.cli import main
from router_oracle.data_files import openhands_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.openhands import read_openhands, read_openhands_entries
from router_oracle.sources.registry import SOURCE_KINDS, SourceSpec
from router_oracle.table import Pool, PoolModel, is_non_commercial, license_summary

TASKS = ["astropy__astropy-12907", "django__django-11099", "sympy__sympy-20590"]


def _model(root: Path, rel: str, model: str, results: dict, *, version: str = "v1.0.0", **meta) -> None:
    d = root / rel
    (d / "instance_results").mkdir(parents=True)
    (d / "metadata.json").write_text(
        json.dumps({"agent_name": "X", "agent_version": version, "model": model, "input_price": 1.0,
                    "output_price": 2.0, "release_date": "2026-01-01", **meta})
    )  # fmt: skip
    (d / "scores.json").write_text(
        json.dumps([{"benchmark": "swe-bench", "score": 50.0, "agent_version": "v9.9"}])
    )
    (d / "instance_results" / "swe-bench.json").write_text(json.dumps(results))


def _layout(root: Path) -> Path:
    ok = {t: {"cost": 0.5 + i, "resolved": i % 2 == 0} for i, t in enumerate(TASKS)}
    _model(root, "results/Model-A", "Model-A", ok)
    _model(root, "results/Model-B", "model-b", {**ok, TASKS[1]: {"cost": 0.1, "resolved": None}})
    _model(root, "alternative_agents/acp-claude/Model-A", "Model-A", ok)
    _model(
        root,
        "alternative_agents/acp-codex/Model-A",
        "Model-A",
        {t: {"cost": 0.0, "resolved": True} for t in TASKS},
    )
    (root / "results/Empty").mkdir(parents=True)
    (root / "results/Empty/metadata.json").write_text(json.dumps({"model": "Empty"}))
    return root


def test_one_run_per_harness_version_and_model_with_its_metadata(tmp_path: Path) -> None:
    entries = {e.run: e for e in read_openhands_entries(_layout(tmp_path / "oh"))}
    # scores.json's swe-bench agent version (the one that produced the results) wins over metadata's
    assert sorted(entries) == [
        "claude-code-v9.9_Model-A",
        "codex-cli-v9.9_Model-A",
        "openhands-v9.9_Model-A",
        "openhands-v9.9_Model-B",
    ]
    a = entries["openhands-v9.9_Model-A"]
    assert (a.harness, a.agent_version, a.input_price, a.output_price, a.date) == (
        "openhands", "v9.9", 1.0, 2.0, "2026-01-01"
    )  # fmt: skip
    assert entries["claude-code-v9.9_Model-A"].harness == "claude-code"
    # a null result is missing, not a failure; a run of zero costs recorded no cost
    assert entries["openhands-v9.9_Model-B"].task_ids == frozenset(TASKS) - {TASKS[1]}
    assert not entries["codex-cli-v9.9_Model-A"].cost_measured


def test_rows_leave_nulls_out_and_the_archive_reads_as_the_directory(tmp_path: Path) -> None:
    root = _layout(tmp_path / "openhands-index-results")
    archive = tmp_path / "oh.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="openhands-index-results")
    runs = {"openhands-v9.9_Model-B"}
    from_dir, from_tar = read_openhands(root, runs=runs), read_openhands(archive, runs=runs)
    assert [(r.task_id, r.resolved, r.cost) for r in from_dir.rows] == [
        (r.task_id, r.resolved, r.cost) for r in from_tar.rows
    ]
    b = {r.task_id: r for r in from_dir.rows}
    assert (b[TASKS[1]].resolved, b[TASKS[1]].cost) == (None, 0.1)
    with pytest.raises(
        OracleInputError, match=r"codex-cli-v9\.9_Model-A.*records no cost.*cannot be a pool member"
    ):
        read_openhands(root, runs={"codex-cli-v9.9_Model-A"})


def test_a_pool_over_a_null_result_is_refused_or_built_without_that_task(tmp_path: Path) -> None:
    root = _layout(tmp_path / "oh")
    pool = Pool(
        name="p",
        models=[PoolModel(id="a", name="A", runs=["openhands-v9.9_Model-A"]),
                PoolModel(id="b", name="B", runs=["openhands-v9.9_Model-B"])],
    )  # fmt: skip
    tasks = write_tasks(tmp_path, TASKS)
    sources = [SourceSpec("openhands", str(root))]
    with pytest.raises(
        OracleInputError, match=f"run 'openhands-v9.9_Model-B': no resolved for 1 of 3 tasks \\({TASKS[1]}\\)"
    ):
        build_table(pool, sources=sources, tasks=tasks)
    table = build_table(pool, sources=sources, tasks=tasks, drop_missing=True)
    assert [t.instance_id for t in table.tasks] == [TASKS[0], TASKS[2]]
    assert table.command.endswith("--drop-missing")
    # a user's directory: its licence is not known to the project
    assert license_summary(table.sources) == "results not stated; task texts not stated"


META = "results/Model-A/metadata.json"
RESULTS = "results/Model-A/instance_results/swe-bench.json"


@pytest.mark.parametrize(
    ("file", "text", "named"),
    [
        (META, "{", f"{META}: malformed JSON"),
        (
            RESULTS,
            '{"x": {"cost": -1, "resolved": true}}',
            rf"{RESULTS}: \['x'\].cost: cost must be finite and >= 0",
        ),
        (
            RESULTS,
            '{"x": {"cost": 1, "resolved": "yes"}}',
            r"\['x'\].resolved: resolved must be true or false",
        ),
        (META, '{"agent_version": "v1"}', "`model` must be a non-empty string"),
    ],
)
def test_a_malformed_file_is_one_line_naming_file_and_field(
    tmp_path: Path, file: str, text: str, named: str, capsys
) -> None:
    root = _layout(tmp_path / "oh")
    (root / file).write_text(text)
    with pytest.raises(OracleInputError, match=named):
        read_openhands_entries(root)
    out = tmp_path / "c.json"
    assert (
        main(
            [
                "candidates",
                "--openhands",
                str(root),
                "--tasks",
                str(write_tasks(tmp_path, TASKS)),
                "-o",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and not out.exists()


def test_not_a_layout_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(OracleInputError, match="not an OpenHands Index layout"):
        read_openhands_entries(tmp_path / "x")
    with pytest.raises(OracleInputError, match="no such OpenHands Index directory or archive"):
        read_openhands_entries(tmp_path / "nothing")


def test_candidates_keep_harnesses_apart_and_leave_out_runs_without_costs(tmp_path: Path) -> None:
    c = build_candidates(
        [SourceSpec("openhands", str(_layout(tmp_path / "oh")))], tasks=write_tasks(tmp_path, TASKS)
    )
    assert [(m.id, m.runs[0].harness) for m in c.models] == [
        ("model-a-claude-code", "claude-code"), ("model-a-openhands", "openhands"),
    ]  # fmt: skip
    assert {x.run: x.reason for x in c.excluded} == {
        "codex-cli-v9.9_Model-A": "no cost recorded (every task's cost is 0)",
        "openhands-v9.9_Model-B": f"per-task data misses 1 of 3 tasks (e.g. {TASKS[1]})",
    }


# --- the bundled release -----------------------------------------------------------------------


def test_the_default_pool_is_the_reference_pool_on_mit_outcomes() -> None:
    t = build_table("default")
    assert t.pool.ids == ["claude-opus-4.7", "gpt-5.5", "nemotron-3-super"]
    # the Index's headline resolve rates, from its per-task flags
    rates = [
        round(100 * sum(x.per_model[m].resolve_rate for x in t.tasks) / len(t.tasks), 1) for m in t.pool.ids
    ]
    assert rates == [81.6, 78.2, 62.0] and len(t.tasks) == 500
    assert [s.kind for s in t.sources] == ["tasks", "openhands"]
    assert t.command == "router-oracle build --pool default --openhands bundled --tie-cost measured"
    assert license_summary(t.sources) == "results MIT; task texts BSD-3-Clause"
    assert not is_non_commercial(t.sources)
    assert is_non_commercial(build_table("bash-only").sources)


def test_cross_harness_twins_cover_the_same_tasks_with_the_same_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for a, b in (("trio-bash-only", "trio-openhands"), ("claude-openhands", "claude-code")):
        ta, tb = build_table(a), build_table(b)
        assert ta.pool.ids == tb.pool.ids
        assert [x.instance_id for x in ta.tasks] == [x.instance_id for x in tb.tasks]
    oh = build_table("bash-only-openhands", drop_missing=True, output="oh.json")
    bo = build_table("bash-only", tasks="oh.json")
    assert oh.pool.ids == bo.pool.ids and len(oh.tasks) == 499
    assert [x.instance_id for x in oh.tasks] == [x.instance_id for x in bo.tasks]


def test_bundled_openhands_candidates_file_is_current() -> None:
    # Regenerate: router-oracle candidates --openhands bundled
    #   -o packages/oracle/src/router_oracle/data/candidates-openhands.json
    path = candidates_path("openhands")
    fresh = build_candidates([SourceSpec("openhands", "bundled")], output=path)
    assert path.read_text(encoding="utf-8") == dumps_candidates(fresh)
    assert load_candidates("openhands") == fresh
    ids = {m.id for m in fresh.models}
    assert {"claude-opus-4.7-openhands", "claude-opus-4.7-claude-code", "gpt-5.5-openhands"} <= ids
    assert len(read_openhands_entries(openhands_path())) == 43


def test_every_source_kind_is_a_flag_of_build_and_candidates_reads_the_many_run_ones(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    build_help = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["candidates", "--help"])
    candidates_help = capsys.readouterr().out
    for kind in SOURCE_KINDS:
        assert kind.flag in build_help
        assert (kind.flag in candidates_help) == (not kind.takes_run)


def test_the_sources_package_lists_every_source_kind_and_each_is_one_module() -> None:
    """A new source is one module of `router_oracle.sources` and one registry entry, and the package's
    docstring lists it (issue 45, item 2: it had left `openhands` out)."""
    listed = re.findall(r"^- `([a-z_]+)`:", sources.__doc__ or "", flags=re.MULTILINE)
    assert listed == [k.kind for k in SOURCE_KINDS]
    for kind in SOURCE_KINDS:
        module = importlib.import_module(f"router_oracle.sources.{kind.kind}")
        assert module.__name__.endswith(kind.kind)
