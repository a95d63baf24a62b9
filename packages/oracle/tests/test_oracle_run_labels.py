"""Which run a harness report or a trajectory directory is: `--run`, checked against what the file says.

Two models' runs, each a harness report named `<model>.<run_id>.json` (as the SWE-bench harness names
it) and a trajectory directory recording its model, as a user's own results would be laid out.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from oracle_samples import FIXTURES, write_tasks, write_trajectories

from router_oracle.build import build_table
from router_oracle.cli import main
from router_oracle.infra.errors import OracleInputError
from router_oracle.run_labels import ReportLabel, report_label
from router_oracle.sources.registry import SourceSpec
from router_oracle.table_check import load_table

REPORT = FIXTURES / "harness/google__gemini-3-pro-preview.gemini-3-pro-sample.json"
GEMINI, GPT = "google/gemini-3-pro-preview", "openai/gpt-5.2"
POOL = (
    'name = "g"\n'
    '[[models]]\nid = "gemini-3-pro"\nname = "Gemini 3 Pro"\nruns = ["g1"]\n'
    '[[models]]\nid = "gpt-5.2"\nname = "GPT-5.2"\nruns = ["o1.v2"]\n'
)


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/work: pool and tasks; tmp/data/{g1,o1}/: each run's report and trajectories (outside cwd)."""
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    monkeypatch.chdir(work)
    report = json.loads(REPORT.read_text())
    ids = report["submitted_ids"]
    write_tasks(work, ids)
    (work / "pool.toml").write_text(POOL)
    flipped = report | {"resolved_ids": report["unresolved_ids"], "unresolved_ids": report["resolved_ids"]}
    for run, model, doc, scale in (("g1", GEMINI, report, 10), ("o1.v2", GPT, flipped, 20)):
        d = data / run
        d.mkdir(parents=True)
        (d / f"{model.replace('/', '__')}.{run}.json").write_text(json.dumps(doc))
        write_trajectories(d / "trajs", {i: n / scale for n, i in enumerate(ids)}, model=model)
    return data


def _report(data: Path, run: str) -> str:
    return str(next((data / run).glob("*.json")))


def _build(*extra: str) -> int:
    return main(["build", "--pool", "pool.toml", "--tasks", "tasks.jsonl", *extra, "-o", "t.json"])


def _unlabelled(data: Path) -> list[str]:
    """Both runs' reports and trajectories, without any --run."""
    argv = []
    for run in ("g1", "o1.v2"):
        argv += ["--harness-report", _report(data, run)]
    for run in ("g1", "o1.v2"):
        argv += ["--trajectories", str(data / run / "trajs")]
    return argv


def test_report_label_reads_the_harness_file_name() -> None:
    runs = ["g1", "o1.v2", "v2"]
    # ids hold dots: the longest pool run the name ends in wins, the rest is the model
    path = "x/openai__gpt-5.2.o1.v2.json"
    assert report_label(path, runs) == ReportLabel(path, "openai/gpt-5.2", "o1.v2")
    assert report_label("g1.json", runs) == ReportLabel("g1.json", None, "g1")
    assert report_label("deepseek-report.json", runs) is None
    assert report_label("openai__gpt-5.2.o9.json", runs) is None  # not a run of the pool: says nothing


def test_runs_are_inferred_from_the_files(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _build(*_unlabelled(runs)) == 0, capsys.readouterr().err
    table = load_table("t.json")
    resolved = set(json.loads(REPORT.read_text())["resolved_ids"])
    for n, t in enumerate(table.tasks):
        assert t.per_model["gemini-3-pro"].resolve_rate == (t.instance_id in resolved)
        assert t.per_model["gpt-5.2"].resolve_rate == (t.instance_id not in resolved)
        assert (t.per_model["gemini-3-pro"].cost, t.per_model["gpt-5.2"].cost) == (n / 10, n / 20)
    # the same table as with every --run typed out
    explicit = build_table(
        "pool.toml",
        tasks="tasks.jsonl",
        output="t.json",
        sources=[
            SourceSpec("harness_report", str(_report(runs, "g1")), "g1"),
            SourceSpec("harness_report", str(_report(runs, "o1.v2")), "o1.v2"),
            SourceSpec("trajectories", str(runs / "g1/trajs"), "g1"),
            SourceSpec("trajectories", str(runs / "o1.v2/trajs"), "o1.v2"),
        ],
    )
    assert explicit == table


@pytest.mark.parametrize(
    ("swapped", "message"),
    [
        ("report", "--harness-report --run 'o1.v2' contradicts the file name, which says run 'g1'"),
        (
            "trajectories",
            "the trajectories record model 'google/gemini-3-pro-preview', but the harness report of run",
        ),
    ],
)
def test_a_run_the_file_contradicts_is_refused(
    runs: Path, capsys: pytest.CaptureFixture[str], swapped: str, message: str
) -> None:
    report_run, trajs_run = ("o1.v2", "g1") if swapped == "report" else ("g1", "o1.v2")
    argv = ["--harness-report", _report(runs, "g1"), "--run", report_run]
    argv += ["--harness-report", _report(runs, "o1.v2")]
    argv += ["--trajectories", str(runs / "g1/trajs"), "--run", trajs_run]
    assert _build(*argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not Path("t.json").exists()


def test_without_run_and_without_a_label_the_build_asks_for_run(runs: Path) -> None:
    plain = runs / "report.json"
    plain.write_text(Path(_report(runs, "g1")).read_text())
    with pytest.raises(OracleInputError, match=r"give --run RUN: the file name is not <model>\.<run>\.json"):
        build_table(
            "pool.toml", tasks="tasks.jsonl", sources=[SourceSpec("harness_report", str(plain), None)]
        )
    with pytest.raises(OracleInputError, match="give --run RUN: the trajectories record model"):
        build_table(
            "pool.toml",
            tasks="tasks.jsonl",
            sources=[SourceSpec("trajectories", str(runs / "g1/trajs"), None)],
        )


def test_a_directory_mixing_two_models_is_refused(runs: Path) -> None:
    mixed = runs / "o1.v2/trajs"
    one = next(mixed.rglob("*.traj.json"))
    doc = json.loads(one.read_text())
    doc["info"]["config"]["model"]["model_name"] = GEMINI
    one.write_text(json.dumps(doc))
    with pytest.raises(OracleInputError, match="one trajectory directory must hold one run of one model"):
        build_table(
            "pool.toml", tasks="tasks.jsonl", sources=[SourceSpec("trajectories", str(mixed), "o1.v2")]
        )


def test_provenance_tells_sources_apart_and_the_command_reruns_as_written(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inputs outside the working directory keep their whole path: several runs' `trajs` stay apart."""
    assert _build(*_unlabelled(runs)) == 0, capsys.readouterr().err
    first = Path("t.json").read_bytes()
    table = load_table("t.json")
    paths = [s.path for s in table.sources]
    assert len(set(paths)) == len(paths) == 5
    assert {(runs / "g1/trajs").as_posix(), (runs / "o1.v2/trajs").as_posix()} <= set(paths)
    argv = shlex.split(table.command)
    assert argv[:2] == ["router-oracle", "build"]
    where = argv.index(str(runs / "g1/trajs"))
    assert argv[where + 1 : where + 3] == ["--run", "g1"]  # inferred runs are written out
    Path("t.json").unlink()
    assert main(argv[1:]) == 0  # the recorded command, run as written
    assert Path("t.json").read_bytes() == first


def test_the_bundled_tasks_file_is_recorded_by_omitting_tasks(tmp_path: Path, monkeypatch) -> None:
    from router_oracle.data_files import leaderboard_path, tasks_path

    monkeypatch.chdir(tmp_path)
    table = build_table(
        "bash-only", tasks=tasks_path(), sources=[SourceSpec("leaderboard", str(leaderboard_path()))]
    )
    assert table.command == "router-oracle build --pool bash-only --leaderboard bundled --tie-cost measured"
