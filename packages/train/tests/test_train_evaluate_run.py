"""Evaluation end to end: baselines, vf-eval traces, checkpoints, report files and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evaluate_tables import FAST_LOCAL, IDS, VF_TABLE, VF_TRACES, make_table

from router_frontier_rl.split import select_tasks
from router_oracle.table import write_table
from router_train.cli import main
from router_train.evaluate import (
    EvaluateError,
    Source,
    evaluate,
    read_table,
    read_traces,
    write_report,
)
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.traces import last_reply
from router_train.local.checkpoint import load_policy
from router_train.local.config import LocalTrainConfig
from router_train.local.trainer import train_local
from router_train.scoring import baselines
from router_train.scoring.metrics import compute_metrics


@pytest.fixture(scope="module")
def table_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("t") / "table.json"
    write_table(make_table(), path)
    return path


def rows_by_name(report):  # type: ignore[no-untyped-def]
    return {r.name: r for r in report.main.routers}


def test_baselines_are_sane(table_file: Path) -> None:
    table, info = read_table(table_file)
    report = evaluate(table, info, EvaluateConfig(seed=3, local_routers=FAST_LOCAL))
    rows = rows_by_name(report)
    tasks = select_tasks(table, "eval")
    main = report.main
    assert main.n_tasks == len(tasks) and main.n_train_tasks == len(table.tasks) - len(tasks)
    assert report.design.mode == "split" and report.design.split == "eval"
    oracle = rows["oracle"].metrics
    assert (
        oracle.accuracy == 1.0 and oracle.kappa == 1.0 and oracle.tvd == 0.0 and oracle.unparseable_rate == 0
    )
    for m in IDS:
        got = rows[f"always:{m}"].metrics
        assert got.resolved_rate == pytest.approx(
            sum(t.per_model[m].resolve_rate for t in tasks) / len(tasks)
        )
        assert got.mean_cost == pytest.approx(sum(t.per_model[m].cost for t in tasks) / len(tasks), abs=1e-6)
        assert oracle.resolved_rate >= got.resolved_rate
    assert rows["cheapest-on-train"].metrics.label_distribution == {"small": 1.0}  # cheapest on train
    assert "cheapest-on-train routed to small" in report.notes
    assert rows["local-grpo"].kind == "local" and not rows["local-grpo"].in_sample
    expected = rows["random(expected)"].metrics
    assert expected.accuracy == pytest.approx(1 / 3, abs=1e-6)
    assert expected.resolved_rate == pytest.approx(
        sum(rows[f"always:{m}"].metrics.resolved_rate for m in IDS) / 3, abs=1e-6
    )
    assert {"tfidf-logreg", "tfidf-logreg(balanced)", "tfidf-knn(k=10)", "random(seed=3)"} <= set(rows)
    assert [p.model for p in report.main.single_models] == IDS


def test_random_baseline_is_seeded(table_file: Path) -> None:
    table, _ = read_table(table_file)
    tasks = select_tasks(table, "eval")
    a = baselines.uniform_random(tasks, IDS, 5)
    assert a == baselines.uniform_random(list(reversed(tasks)), IDS, 5)  # order of tasks does not matter
    assert a != baselines.uniform_random(tasks, IDS, 6)


@pytest.mark.parametrize("fit", [baselines.tfidf_logreg, baselines.tfidf_knn])
def test_classifiers_never_see_the_evaluated_labels(table_file: Path, fit) -> None:  # type: ignore[no-untyped-def]
    table, _ = read_table(table_file)
    train, tasks = select_tasks(table, "train"), select_tasks(table, "eval")
    # Rewriting every evaluated task's oracle label (and outcomes) must not move a single prediction.
    flipped = [
        t.model_copy(update={"oracle": IDS[(IDS.index(t.oracle) + 1) % 3], "per_model": {}}) for t in tasks
    ]
    args = (0,) if fit is baselines.tfidf_logreg else ()
    assert fit(train, tasks, *args).choices == fit(train, flipped, *args).choices
    # And the train split's labels do matter (the classifier is fitted on them).
    relabelled = [t.model_copy(update={"oracle": "big"}) for t in train]
    assert set(fit(relabelled, tasks, *args).choices[tasks[0].instance_id]) == {"big"}
    assert not {t.instance_id for t in train} & {t.instance_id for t in tasks}


def test_last_reply_follows_verifiers() -> None:
    def node(role: str, content, sampled: bool) -> dict:  # type: ignore[no-untyped-def]
        return {"message": {"role": role, "content": content}, "sampled": sampled}

    few_shot = node("assistant", "<route>big</route>", False)  # prompt-supplied, not the model's
    assert last_reply({"nodes": [node("user", "q", False), few_shot]}) is None
    trace = {
        "nodes": [few_shot, node("assistant", " a ", True), node("assistant", "<route>mid</route> ", True)]
    }
    assert last_reply(trace) == "<route>mid</route>"
    parts = [{"type": "text", "text": "<route>"}, {"type": "image_url", "image_url": {"url": "x"}}]
    assert last_reply(
        {"nodes": [node("assistant", [*parts, {"type": "text", "text": "small</route>"}], True)]}
    ) == ("<route>\nsmall</route>")
    assert last_reply({"root_reply": " <route>big</route>\n", "nodes": []}) == "<route>big</route>"


def test_real_vf_eval_traces() -> None:
    table, _ = read_table(VF_TABLE)
    ids = {t.instance_id for t in table.tasks}
    d = read_traces(VF_TRACES, table.pool.ids, ids, name="stub")
    assert set(d.choices) == ids and set(d.samples.values()) == {2}
    # The stub answered "<route>all of them</route>" 3 times out of 12: those decisions are unparseable.
    assert sum(2 * c.get("<unparseable>", 0.0) for c in d.choices.values()) == 3
    m = compute_metrics(d, table.tasks)
    # Our scoring of the parsed replies reproduces what the environment recorded during the run.
    assert m.mean_reward == pytest.approx(d.recorded["reward/routed_reward"], abs=1e-6)
    assert m.resolved_rate == pytest.approx(d.recorded["reward/resolved_if_chosen"], abs=1e-6)
    assert m.mean_cost == pytest.approx(d.recorded["reward/cost_if_chosen"], abs=1e-6)
    assert m.accuracy == pytest.approx(d.recorded["reward/chose_oracle"], abs=1e-6)
    assert 1 - m.unparseable_rate == pytest.approx(d.recorded["reward/parsed_valid_route"], abs=1e-6)


def test_traces_of_other_tasks_and_bad_files(tmp_path: Path) -> None:
    table, _ = read_table(VF_TABLE)
    with pytest.raises(EvaluateError, match="none of its episodes"):
        read_traces(VF_TRACES, table.pool.ids, {"not-a-task"})
    bad = tmp_path / "traces.jsonl"
    bad.write_text(VF_TRACES.read_text().splitlines()[0] + "\n{oops\n")
    with pytest.raises(EvaluateError, match=r"traces\.jsonl:2: not JSON"):
        read_traces(bad, table.pool.ids, {t.instance_id for t in table.tasks})
    bad.write_text("")
    with pytest.raises(EvaluateError, match="no episodes"):
        read_traces(bad, table.pool.ids, set())
    with pytest.raises(EvaluateError, match="cannot read"):
        read_traces(tmp_path / "missing.jsonl", table.pool.ids, set())
    bad.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(EvaluateError, match=r"traces\.jsonl: traces file is not UTF-8"):
        read_traces(bad, table.pool.ids, set())


def test_failed_episode_counts_as_unparseable(tmp_path: Path) -> None:
    table, _ = read_table(VF_TABLE)
    episode = json.loads(VF_TRACES.read_text().splitlines()[0])
    episode["traces"] = []
    path = tmp_path / "run" / "traces.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(episode) + "\n")
    d = read_traces(path, table.pool.ids, {t.instance_id for t in table.tasks})
    assert d.name == "run" and list(d.choices.values()) == [{"<unparseable>": 1.0}]


def test_report_files_are_deterministic(table_file: Path, tmp_path: Path) -> None:
    outs = []
    for k in range(2):
        table, info = read_table(table_file)
        report = evaluate(table, info, EvaluateConfig(seed=7, local_routers=FAST_LOCAL))
        files = write_report(report, tmp_path / f"out{k}")
        assert [f.name for f in files] == ["report.json", "report.md", "cost_vs_resolved.png"]
        outs.append({f.name: f.read_bytes() for f in files})
    assert outs[0] == outs[1]
    assert outs[0]["cost_vs_resolved.png"].startswith(b"\x89PNG")
    data = json.loads(outs[0]["report.json"])
    assert data["version"] == 2 and data["table"]["file"] == "table.json"
    assert "| oracle |" in outs[0]["report.md"].decode()


def test_checkpoint_source(table_file: Path, tmp_path: Path) -> None:
    run = train_local(
        LocalTrainConfig(table_path=table_file, output_dir=tmp_path / "run", steps=5), progress=False
    )
    table, info = read_table(table_file)
    source = Source(name="ckpt", path=run.checkpoint_path)
    report = evaluate(table, info, EvaluateConfig(checkpoints=[source], local_routers=[]))
    row = rows_by_name(report)["ckpt"]
    assert row.kind == "checkpoint" and row.source == "checkpoint.json" and not row.in_sample
    tasks = select_tasks(table, "eval")
    routes = load_policy(run.checkpoint_path).route(sorted(tasks, key=lambda t: t.instance_id))
    assert row.metrics.label_distribution == {
        m: pytest.approx(routes.count(m) / len(routes)) for m in sorted(set(routes))
    }


def test_missing_checkpoint_is_a_clear_error(table_file: Path, tmp_path: Path) -> None:
    table, info = read_table(table_file)
    with pytest.raises(EvaluateError, match="cannot load checkpoint"):
        evaluate(
            table,
            info,
            EvaluateConfig(checkpoints=[Source(name="x", path=tmp_path / "nope.json")], local_routers=[]),
        )


def test_bad_split_names_the_table(table_file: Path) -> None:
    table, info = read_table(table_file)
    with pytest.raises(EvaluateError, match=r"table\.json: cannot split the table: eval_fraction"):
        evaluate(table, info, EvaluateConfig(eval_fraction=1.5))


def test_cli_writes_the_report_and_prints_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "rep"
    argv = [
        "evaluate",
        "--table",
        str(VF_TABLE),
        "--split",
        "all",
        "--traces",
        f"stub={VF_TRACES}",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "stub" in printed and "vs random mix" in printed and "oracle" in printed
    assert {p.name for p in out.iterdir()} == {"report.json", "report.md", "cost_vs_resolved.png"}
    report = json.loads((out / "report.json").read_text())
    rows = {r["name"]: r for r in report["evaluations"][0]["routers"]}
    # Split `all` holds the train split: the learned routers are in-sample there, the fixed ones not.
    assert rows["tfidf-logreg"]["in_sample"] and not rows["oracle"]["in_sample"]
    assert "tfidf-logreg (in-sample)" in printed


def test_cli_split_options_reach_the_report(table_file: Path, tmp_path: Path) -> None:
    # One 2-step local router only: the split options are the point, not the default local-grpo's fit.
    quick = ["--no-baselines", "--local", "quick=--steps 2 --tasks-per-step 8 --shift-folds 0"]
    argv = ["evaluate", "--table", str(table_file), *quick, "--no-plot", "-o"]
    assert main([*argv, str(tmp_path / "default")]) == 0
    assert main([*argv, str(tmp_path / "given"), "--eval-fraction", "0.3", "--split-seed", "2"]) == 0
    reports = {n: json.loads((tmp_path / n / "report.json").read_text()) for n in ("default", "given")}
    splits = {n: r["design"] for n, r in reports.items()}
    assert (splits["default"]["eval_fraction"], splits["default"]["split_seed"]) == (0.2, 0)
    assert (splits["given"]["eval_fraction"], splits["given"]["split_seed"]) == (0.3, 2)


def test_cli_bad_input_exits_2_and_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["evaluate", "--table", str(tmp_path / "none.json"), "-o", str(out)]) == 2
    assert "none.json" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["evaluate", "--table", str(VF_TABLE), "--traces", str(bad), "-o", str(out)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert main(["evaluate", "--table", str(VF_TABLE), "--no-baselines", "-o", str(out)]) == 2
    assert not out.exists()


def _edited_traces(tmp_path: Path, edit: Any) -> Path:
    lines = []
    for line in VF_TRACES.read_text().splitlines():
        episode = json.loads(line)
        edit(episode)
        lines.append(json.dumps(episode))
    path = tmp_path / "run" / "traces.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_traces_recorded_on_another_pool_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def other_pool(episode: dict[str, Any]) -> None:
        for data in [episode["task"]["data"], *(t["task"]["data"] for t in episode["traces"])]:
            data["valid_ids"] = ["gpt-5-mini", "o3"]

    traces = _edited_traces(tmp_path, other_pool)
    out = tmp_path / "rep"
    assert main(["evaluate", "--table", str(VF_TABLE), "--traces", str(traces), "-o", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"{traces}:1: recorded on another pool (gpt-5-mini, o3)" in lines[0], lines
    assert "give the --table the traces were recorded with" in lines[0] and not out.exists()


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("content", 5, "malformed trace: node 1: `content` is int, not text or a list of parts"),
        ("nodes", {"a": 1}, "malformed trace: `nodes` is dict, not a list"),
        ("score", "high", "malformed trace: reward 'routed_reward' has no numeric `score`"),
        ("sampled", "yes", "malformed trace: node 1: `sampled` is str, not true/false"),
        ("valid_ids", "o3", "malformed task row: `valid_ids` is str, not a list of model ids"),
    ],
)
def test_malformed_trace_records_are_refused_not_counted(
    tmp_path: Path, field: str, value: Any, problem: str
) -> None:
    table, _ = read_table(VF_TABLE)

    def damage(episode: dict[str, Any]) -> None:
        trace = episode["traces"][0]
        if field == "nodes":
            trace["nodes"] = value
        elif field == "score":
            trace["rewards"]["routed_reward"]["score"] = value
        elif field == "valid_ids":
            trace["task"]["data"]["valid_ids"] = value
        else:
            node = trace["nodes"][1]
            (node["message"] if field == "content" else node)[field] = value

    traces = _edited_traces(tmp_path, damage)
    with pytest.raises(EvaluateError) as exc:
        read_traces(traces, table.pool.ids, {t.instance_id for t in table.tasks})
    assert str(exc.value) == f"{traces}:1: {problem}"


def test_a_report_that_would_replace_an_input_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    traces = out / "report.json"  # a traces file that happens to be where the report goes
    traces.write_bytes(VF_TRACES.read_bytes())
    argv = ["evaluate", "--table", str(VF_TABLE), "--no-baselines", "--traces", str(traces), "-o", str(out)]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"router-train evaluate: error: {traces}: is also an input (--traces {traces}); "
        "write the output somewhere else"
    ], lines
    assert traces.read_bytes() == VF_TRACES.read_bytes() and sorted(p.name for p in out.iterdir()) == [
        "report.json"
    ]
