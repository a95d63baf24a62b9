"""`router-oracle build` / `stats`: outputs, exit codes, and no output file on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from oracle_samples import FIXTURES, write_tasks, write_trajectories

from router_oracle.analysis.stats import TableStats, compute_stats
from router_oracle.build import build_table
from router_oracle.cli import main
from router_oracle.table import dumps_table, write_table
from router_oracle.table_check import load_table


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_build_default_writes_the_same_table_as_the_api(in_tmp: Path, capsys) -> None:
    assert main(["build", "--pool", "bash-only", "-o", "table.json"]) == 0
    assert "wrote table.json: 500 tasks, pool bash-only" in capsys.readouterr().out
    text = (in_tmp / "table.json").read_text()
    assert text == dumps_table(build_table("bash-only", output="again.json")).replace(
        "again.json", "table.json"
    )
    assert load_table("table.json").command == (
        "router-oracle build --pool bash-only --leaderboard bundled --tie-cost measured -o table.json"
    )


def test_stats_text_and_json(in_tmp: Path, capsys) -> None:
    main(["build", "--pool", "bash-only", "-o", "t.json"])
    capsys.readouterr()
    assert main(["stats", "t.json"]) == 0
    text = capsys.readouterr().out
    assert "pool bash-only: 3 models, 500 tasks" in text
    assert "claude-opus-4.6    378.0  75.6%" in text and "oracle" in text and "all-fail tasks" in text
    assert main(["stats", "t.json", "--json"]) == 0
    first = capsys.readouterr().out
    main(["stats", "t.json", "--json"])
    assert capsys.readouterr().out == first
    stats = json.loads(first)
    assert [m["id"] for m in stats["models"]] == ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
    assert sum(m["oracle_count"] for m in stats["models"]) == stats["tasks"] == 500
    assert stats["oracle"]["resolved"] >= max(m["resolved"] for m in stats["models"])
    assert TableStats.model_validate_json(first) == compute_stats(load_table("t.json"))  # typed, complete


def test_stats_shows_the_noise_estimate_next_to_the_oracle(in_tmp: Path, capsys) -> None:
    main(["build", "--pool", "bash-only", "-o", "t.json"])
    capsys.readouterr()
    main(["stats", "t.json"])
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("oracle "))
    assert lines[at + 1] == (
        "  oracle +11.3 points above the mix (71.3% at the oracle's cost), of which about 5.7 "
        "(7.1 counting all run-to-run disagreement) expected from rollout noise alone"
    )
    text = "\n".join(lines)
    # the measured pairs, and where each pool model's disagreement comes from
    assert "12.2%      28 / 33             1.0%  78.4% vs 72.8% (+5.6)" in text
    assert "10.0%      19 / 31             2.4%  80.6% vs 76.8% (+3.8)" in text
    assert "20.0%      25 / 75            10.0%  75.0% vs 70.0% (+5.0)" in text
    assert "claude-sonnet-4.5 (bundled, closest resolve rate)" in text
    assert "5.7 (7.1) points of luck" in text
    main(["stats", "t.json", "--json"])
    noise = json.loads(capsys.readouterr().out)["noise"]
    assert noise["headroom_points"] == pytest.approx(11.299031)
    assert (noise["noise"]["noise_points"], noise["upper"]["noise_points"]) == (5.65, 7.1)
    # multi_run: the figures come from the pool's own runs
    main(["build", "--pool", "multi_run", "-o", "m.json"])
    main(["stats", "m.json"])
    text = capsys.readouterr().out
    assert "of which about 5.1 (5.8 counting all run-to-run disagreement)" in text
    assert text.count("(table, own runs)") == 3


def test_stats_help_states_the_noise_method(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["stats", "--help"])
    out = capsys.readouterr().out
    for needle in (
        "never (share 1-r-d), a coin flip (2d) or always (r-d)",
        "closest resolve rate",
        "share each task's difficulty",
        "Assumed:",
        "no model run twice, nor under another harness in the bundled data, get no estimate",
        "A table with no same-harness re-runs\nto draw on (e.g. the reference pool) uses it",
    ):
        assert needle in out


def test_harness_report_and_trajectories_build(in_tmp: Path, capsys) -> None:
    """The real harness-report sample gives resolved flags; trajectories (real format) give costs."""
    report = FIXTURES / "harness/google__gemini-3-pro-preview.gemini-3-pro-sample.json"
    ids = json.loads(report.read_text())["submitted_ids"]
    write_tasks(in_tmp, ids)
    write_trajectories(in_tmp / "trajs", {i: n / 10 for n, i in enumerate(ids)})
    (in_tmp / "pool.toml").write_text(
        'name = "g"\n[[models]]\nid = "gemini-3-pro"\nname = "Gemini 3 Pro"\nruns = ["g1"]\n'
        '[[models]]\nid = "cheap"\nname = "Cheap"\nruns = ["c1"]\n'
    )
    (in_tmp / "cheap.csv").write_text(
        "task_id,run,resolved,cost\n" + "".join(f"{i},c1,false,0.05\n" for i in ids)
    )
    argv = ["build", "--pool", "pool.toml", "--tasks", "tasks.jsonl",
            "--harness-report", str(report), "--run", "g1",
            "--trajectories", "trajs", "--run", "g1",
            "--long-table", "cheap.csv", "-o", "g.json"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    table = load_table("g.json")
    resolved = set(json.loads(report.read_text())["resolved_ids"])
    for n, t in enumerate(table.tasks):
        assert t.per_model["gemini-3-pro"].resolve_rate == (t.instance_id in resolved)
        assert t.per_model["gemini-3-pro"].cost == n / 10
        assert t.oracle == ("gemini-3-pro" if t.instance_id in resolved else "cheap")
    assert "--trajectories trajs --run g1" in table.command
    # user data, every model run once: no rollout noise is made up
    capsys.readouterr()
    assert main(["stats", "g.json"]) == 0
    text = capsys.readouterr().out
    assert "rollout noise not measured (no model run twice)" in text
    assert "rollout noise: not estimated: no model of this table has two runs" in text
    main(["stats", "g.json", "--json"])
    noise = json.loads(capsys.readouterr().out)["noise"]
    assert noise["noise"] is None and noise["upper"] is None and noise["measured"] == []
    # the trajectories alone lack resolved flags: a loud error naming the run and the sources
    (in_tmp / "pool.toml").write_text('name = "g"\n[[models]]\nid = "g"\nname = "G"\nruns = ["g1"]\n')
    assert main(["build", "--pool", "pool.toml", "--tasks", "tasks.jsonl",
                 "--trajectories", "trajs", "--run", "g1", "-o", "h.json"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "model 'g' run 'g1': no resolved for 7 of 7 tasks" in err and "sources with this run: trajs" in err
    assert not (in_tmp / "h.json").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "--run", "r1", "-o", "x.json"],
        ["build", "--harness-report", "a.json", "--run", "r1", "--run", "r2", "-o", "x.json"],
        ["build", "--tie-cost", "cheap", "-o", "x.json"],
        ["build"],
    ],
)
def test_usage_errors_exit_2(in_tmp: Path, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and not (in_tmp / "x.json").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pool", "nope"], "no bundled pool named 'nope'"),
        (["--long-table", "bad.csv"], "bad.csv: line 2: resolved must be true/false"),
        (["--pool", "empty.toml"], "empty.toml: empty pool"),
        (["--harness-report", "bad.csv", "--run", "r"], "is not a run of pool 'default'"),
    ],
)
def test_bad_input_exits_2_and_keeps_the_old_output(in_tmp: Path, capsys, extra, message) -> None:
    (in_tmp / "bad.csv").write_text("task_id,run,resolved\nastropy__astropy-12907,r,maybe\n")
    (in_tmp / "empty.toml").write_text('name = "e"\nmodels = []\n')
    (in_tmp / "out.json").write_text("previous")
    assert main(["build", *extra, "-o", "out.json"]) == 2
    assert message in capsys.readouterr().err
    assert (in_tmp / "out.json").read_text() == "previous"
    assert [p.name for p in in_tmp.iterdir() if p.name.startswith(".out.json")] == []


def test_stats_rejects_bad_tables(in_tmp: Path, capsys) -> None:
    (in_tmp / "junk.json").write_text("{}")
    assert main(["stats", "junk.json"]) == 2
    assert "junk.json: not a valid oracle table" in capsys.readouterr().err
    table = build_table("bash-only")
    task = table.tasks[0]
    wrong = next(i for i in table.pool.ids if i != task.oracle)
    tampered = table.model_copy(
        update={"tasks": [task.model_copy(update={"oracle": wrong}), *table.tasks[1:]]}
    )
    write_table(tampered, in_tmp / "tampered.json")
    assert main(["stats", "tampered.json"]) == 2
    assert "disagrees with the tie rule" in capsys.readouterr().err
    per_model = dict(task.per_model)
    per_model.pop(wrong)
    missing = table.model_copy(update={"tasks": [task.model_copy(update={"per_model": per_model})]})
    write_table(missing, in_tmp / "missing.json")
    assert main(["stats", "missing.json"]) == 2
    assert f"task {task.instance_id}: per_model lacks pool model(s) ['{wrong}']" in capsys.readouterr().err
    # a model's mean cost that JSON reads as infinity: an error naming the table, not a traceback
    mean_cost = re.compile(r'("resolve_rate": [^,]+,\s+"cost": )[^,]+')
    text, n = mean_cost.subn(r"\g<1>1e999", dumps_table(table), count=1)
    assert n == 1
    (in_tmp / "infinite.json").write_text(text)
    assert main(["stats", "infinite.json"]) == 2
    assert "infinite.json: not a valid oracle table" in capsys.readouterr().err


def test_unwritable_output_exits_2(in_tmp: Path, capsys) -> None:
    (in_tmp / "file").write_text("not a directory")
    assert main(["build", "-o", "file/table.json"]) == 2
    assert "router-oracle: error: " in capsys.readouterr().err
