"""Cross-validated evaluation and the leakage guard: no router is ever scored on a task it trained on."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from evaluate_tables import FAST_LOCAL, IDS, VF_TABLE, VF_TRACES, cv_report, make_table

from router_frontier_rl.split import select_tasks, stratified_folds
from router_oracle.table import TaskRecord, write_table
from router_train.cli import main
from router_train.evaluate import EvaluateError, Source, evaluate, read_table, write_report
from router_train.evaluate.config import EvaluateConfig
from router_train.local.config import LocalTrainConfig
from router_train.local.trainer import train_local
from router_train.scoring.decisions import Decisions, from_labels


@pytest.fixture(scope="module")
def table_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("t") / "table.json"
    write_table(make_table(n=80), path)
    return path


def test_folds_partition_every_task_stratified_and_seeded() -> None:
    tasks = make_table(n=80).tasks
    folds = stratified_folds(tasks, 5, seed=3)
    ids = [i for f in folds for i in f]
    assert sorted(ids) == sorted(t.instance_id for t in tasks)  # every task exactly once
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    label = {t.instance_id: t.oracle for t in tasks}
    for lab, n in Counter(label.values()).items():
        per_fold = [sum(label[i] == lab for i in f) for f in folds]
        assert max(per_fold) - min(per_fold) <= 1, (lab, n, per_fold)
    assert stratified_folds(list(reversed(tasks)), 5, seed=3) == folds  # order of the input is irrelevant
    assert stratified_folds(tasks, 5, seed=4) != folds
    with pytest.raises(ValueError, match="2 <= folds"):
        stratified_folds(tasks, 1)


class Spy:
    """A fitted router that records what it was trained on and what it routed; routes like the
    majority oracle label of its train tasks (a statistic of train tasks only)."""

    def __init__(self) -> None:
        self.calls: list[tuple[set[str], list[str]]] = []

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        self.calls.append(({t.instance_id for t in train}, [t.instance_id for t in test]))
        top = Counter(t.oracle for t in train).most_common(1)[0][0]
        return [from_labels("spy", "baseline", {t.instance_id: [top] for t in test})]


def test_no_task_is_routed_by_a_router_trained_on_it(table_file: Path) -> None:
    table, info = read_table(table_file)
    spy = Spy()
    report = evaluate(
        table,
        info,
        EvaluateConfig(folds=4, fold_seeds=[0, 7], local_routers=[], include_baselines=False),
        fitters=[spy],
    )
    assert len(spy.calls) == 8
    everything = {t.instance_id for t in table.tasks}
    routed_per_seed: list[Counter[str]] = [Counter(), Counter()]
    for k, (train, test) in enumerate(spy.calls):
        assert not train & set(test)  # never routes a task it was fitted on
        assert train | set(test) == everything  # trained on all the other folds
        routed_per_seed[k // 4].update(test)
    for routed in routed_per_seed:  # each task routed exactly once per fold seed
        assert set(routed) == everything and set(routed.values()) == {1}
    row = report.main.routers[0]
    assert row.name == "spy" and row.n_tasks == len(everything)
    assert len(row.gap_vs_mix.by_fold_seed) == 2 and row.metrics.n_decisions == 2 * len(everything)


def test_every_builtin_router_is_cross_validated() -> None:
    table = make_table(n=80)
    report = cv_report(1)  # of this table
    names = [r.name for r in report.main.routers]
    assert names[: len(IDS)] == [f"always:{m}" for m in IDS]
    assert {"oracle", "cheapest-on-train", "tfidf-logreg(balanced)", "tfidf-knn(k=10)", "local-grpo"} <= set(
        names
    )
    assert report.design.mode == "cross-validation" and report.design.fold_seeds == [0, 1]
    assert report.main.n_tasks == len(table.tasks) and report.main.n_train_tasks is None
    for r in report.main.routers:
        assert r.n_tasks == len(table.tasks) and not r.in_sample
        assert len(r.gap_vs_mix.by_fold_seed) == 2 and r.gap_vs_mix.sd is not None
        if r.gap_vs_mix.mean is not None:
            assert r.gap_vs_mix.low is not None and r.gap_vs_mix.high is not None
    assert any("fitted 8 times (4 folds x 2 fold seeds)" in n for n in report.notes)


def _always(model: str) -> object:
    def fit(train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return [from_labels(f"just-{model}", "baseline", {t.instance_id: [model] for t in test})]

    return fit


def test_a_router_equal_to_one_single_model_has_gap_zero(table_file: Path) -> None:
    table, info = read_table(table_file)
    # The cheapest model and the most resolving one are corners of the frontier on these tasks.
    report = evaluate(
        table,
        info,
        EvaluateConfig(folds=3, fold_seeds=[0, 1], local_routers=[]),
        fitters=[_always("small"), _always("big")],  # type: ignore[list-item]
    )
    rows = {r.name: r for r in report.main.routers}
    assert next(p.model for p in report.main.frontier) == "small"
    assert max(report.main.single_models, key=lambda p: p.resolved).model == "big"
    for name in ("just-small", "just-big", "always:small", "always:big"):
        gap = rows[name].gap_vs_mix
        assert gap.mean == 0.0 and gap.by_fold_seed == [0.0, 0.0] and gap.sd == 0.0, name
        assert gap.low is not None and gap.high is not None and gap.low <= 0.0 <= gap.high
    # The same model's metrics, whoever routes to it.
    assert rows["just-small"].metrics.resolved_rate == rows["always:small"].metrics.resolved_rate


def test_cross_validated_report_is_byte_identical_and_parallel_safe(tmp_path: Path) -> None:
    outs = []
    for k, jobs in enumerate((1, 2)):
        files = write_report(cv_report(jobs), tmp_path / str(k), plot=False)
        outs.append([f.read_bytes() for f in files])
    assert outs[0] == outs[1]
    data = json.loads(outs[0][0])
    assert data["version"] == 2 and data["design"]["folds"] == 4
    for r in data["evaluations"][0]["routers"]:  # the documented contract scripts read
        assert {"name", "n_tasks", "gap_vs_mix", "in_sample"} <= set(r)
        assert {"mean", "low", "high", "by_fold_seed", "sd"} == set(r["gap_vs_mix"])


@pytest.fixture(scope="module")
def other_split_checkpoint(table_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint trained on split seed 1's train split: most of split seed 0's eval tasks."""
    out = tmp_path_factory.mktemp("ckpt")
    cfg = LocalTrainConfig(table_path=table_file, output_dir=out, steps=5, split_seed=1)
    return train_local(cfg, progress=False).checkpoint_path


def test_guard_refuses_a_checkpoint_scored_on_its_training_tasks(
    table_file: Path, other_split_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table, info = read_table(table_file)
    eval_ids = {t.instance_id for t in select_tasks(table, "eval", split_seed=0)}
    trained = {t.instance_id for t in select_tasks(table, "train", split_seed=1)}
    overlap = len(eval_ids & trained)
    assert overlap > 0
    src = Source(name="leaky", path=other_split_checkpoint)
    with pytest.raises(
        EvaluateError, match=rf"trained on {overlap} of the {len(eval_ids)} tasks of split eval"
    ):
        evaluate(table, info, EvaluateConfig(checkpoints=[src], local_routers=[]))
    out = tmp_path / "rep"
    argv = ["evaluate", "--table", str(table_file), "--checkpoint", f"leaky={other_split_checkpoint}", "-o"]
    assert main([*argv, str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"trained on {overlap} of the" in err and "--allow-in-sample" in err
    assert not out.exists()
    # Allowed explicitly: scored, and marked in-sample in every output.
    assert main([*argv, str(out), "--allow-in-sample", "--no-baselines"]) == 0
    printed = capsys.readouterr().out
    assert "leaky (in-sample)" in printed
    report = json.loads((out / "report.json").read_text())
    (row,) = report["evaluations"][0]["routers"]
    assert row["name"] == "leaky" and row["in_sample"] is True
    assert "leaky (in-sample)" in (out / "report.md").read_text()
    # Its own held-out split is fine.
    assert main([*argv[:-1], "--split-seed", "1", "-o", str(tmp_path / "ok"), "--no-baselines"]) == 0


def test_cross_validation_scores_a_checkpoint_on_its_unseen_tasks_only(
    table_file: Path, other_split_checkpoint: Path
) -> None:
    table, info = read_table(table_file)
    src = Source(name="ckpt", path=other_split_checkpoint)
    report = evaluate(
        table, info, EvaluateConfig(folds=4, fold_seeds=[0], checkpoints=[src], local_routers=FAST_LOCAL)
    )
    held = {t.instance_id for t in select_tasks(table, "eval", split_seed=1)}
    assert len(report.evaluations) == 2
    sub = report.evaluations[1]
    assert sub.n_tasks == len(held) and "ckpt" in sub.name
    rows = {r.name: r for r in sub.routers}
    assert not rows["ckpt"].in_sample and rows["ckpt"].n_tasks == len(held)
    # The cross-validated routers are compared with it on exactly those tasks.
    assert rows["tfidf-logreg(balanced)"].n_tasks == len(held)
    assert rows["oracle"].metrics.resolved_tasks == pytest.approx(
        sum(t.per_model[t.oracle].resolve_rate for t in table.tasks if t.instance_id in held)
    )
    assert any(f"scored on the {len(held)} tasks it never trained on" in n for n in report.notes)


def _traces_with_split(tmp_path: Path, split: str | None, repeat: int = 0) -> Path:
    lines = []
    for line in VF_TRACES.read_text().splitlines():
        ep = json.loads(line)
        for data in [ep["task"]["data"], *(t["task"]["data"] for t in ep["traces"] if "task" in t)]:
            if split is not None:
                data["split"] = split
            data["repeat"] = repeat
        lines.append(json.dumps(ep))
    path = tmp_path / f"{split}-{repeat}" / "traces.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path


def test_guard_refuses_traces_served_from_the_train_split(tmp_path: Path) -> None:
    table, info = read_table(VF_TABLE)
    for bad in (_traces_with_split(tmp_path, "train"), _traces_with_split(tmp_path, None, repeat=1)):
        with pytest.raises(EvaluateError, match="served from the env's train split"):
            evaluate(
                table,
                info,
                EvaluateConfig(traces=[Source(name="r", path=bad)], split="all", include_baselines=False),
            )
    ok = evaluate(
        table,
        info,
        EvaluateConfig(
            traces=[Source(name="r", path=_traces_with_split(tmp_path, "eval"))],
            split="all",
            include_baselines=False,
        ),
    )
    assert not ok.main.routers[0].in_sample
    allowed = evaluate(
        table,
        info,
        EvaluateConfig(
            traces=[Source(name="r", path=_traces_with_split(tmp_path, "train", 2))],
            allow_in_sample=True,
            split="all",
            include_baselines=False,
        ),
    )
    assert allowed.main.routers[0].in_sample


def test_traces_under_cross_validation_are_compared_on_the_tasks_they_cover(tmp_path: Path) -> None:
    table, info = read_table(VF_TABLE)  # 6 tasks; the traces cover all 6
    path = _traces_with_split(tmp_path, "eval")
    report = evaluate(
        table,
        info,
        EvaluateConfig(folds=2, traces=[Source(name="stub", path=path)], local_routers=FAST_LOCAL),
    )
    assert len(report.evaluations) == 1  # it covers every task: one table
    assert report.main.routers[-1].name == "stub" and report.main.routers[-1].n_tasks == 6
    # Keep only the episodes of 4 tasks: the stub gets its own comparison on those 4.
    keep = sorted(t.instance_id for t in table.tasks)[:4]
    lines = [x for x in path.read_text().splitlines() if json.loads(x)["task"]["data"]["id"] in keep]
    part = tmp_path / "part" / "traces.jsonl"
    part.parent.mkdir()
    part.write_text("\n".join(lines) + "\n")
    report = evaluate(
        table,
        info,
        EvaluateConfig(folds=2, traces=[Source(name="stub4", path=part)], local_routers=FAST_LOCAL),
    )
    assert [e.n_tasks for e in report.evaluations] == [6, 4]
    sub = report.evaluations[1]
    assert sub.name == "the 4 tasks of stub4" and {r.n_tasks for r in sub.routers} == {4}
    assert "stub4" not in {r.name for r in report.main.routers}


def test_cli_folds_and_local_options(
    table_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cv"
    argv = ["evaluate", "--table", str(table_file), "--folds", "3", "--fold-seeds", "0,1", "--no-plot"]
    local = ["--local", "tiny=--steps 5 --tasks-per-step 8 --upsample"]
    assert main([*argv, *local, "--no-baselines", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3-fold cross-validation" in printed and "tiny" in printed
    report = json.loads((out / "report.json").read_text())
    assert [r["name"] for r in report["evaluations"][0]["routers"]] == ["tiny"]
    bad_cases = [
        ["--local", "x=--steps 0"],
        ["--local", "x=--output-dir here"],  # the fold decides what it trains on, not the options
        ["--split", "train"],
        ["--split-seed", "2"],
    ]
    for extra in bad_cases:
        assert main([*argv, *extra, "-o", str(tmp_path / "bad")]) == 2, extra
        assert capsys.readouterr().err.startswith("router-train evaluate: error:")
    assert not (tmp_path / "bad").exists()
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error, exit 2
        main([*argv, "--local", "no-equals-sign", "-o", str(tmp_path / "bad")])
    assert exc.value.code == 2
    assert main(["evaluate", "--table", str(table_file), "--fold-seeds", "1", "-o", str(tmp_path / "b")]) == 2
