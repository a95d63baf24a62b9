"""The local trainer end to end on a small synthetic table: learning, files, determinism, CLI."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from router_frontier_rl.split import select_tasks
from router_oracle.table import (
    ModelOutcome,
    OracleRule,
    OracleTable,
    Pool,
    PoolModel,
    RunOutcome,
    TaskRecord,
    write_table,
)
from router_train.cli import main
from router_train.local import trainer as trainer_module
from router_train.local.checkpoint import load_policy, read_checkpoint
from router_train.local.config import FeatureConfig, LocalTrainConfig, LocalTrainError
from router_train.local.features import feature_dim, featurize, fit_features
from router_train.local.step_metrics import StepMetrics
from router_train.local.trainer import train_local

MODELS = ["alpha", "beta", "gamma"]
# Each repository's issues use their own words and are solved only by "their" model, so the text alone
# determines the oracle: a router that learns anything must reach full held-out accuracy.
REPOS = {
    "org/widgets": ("alpha", "widget gizmo sprocket"),
    "org/parsers": ("beta", "token grammar lexer"),
    "org/plots": ("gamma", "axis figure legend"),
}


def _task(i: int, repo: str) -> TaskRecord:
    winner, words = REPOS[repo]
    per_model = {
        m: ModelOutcome(
            resolve_rate=1.0 if m == winner else 0.0,
            cost=0.5 + 0.1 * k,
            runs=[RunOutcome(run=f"run-{m}", resolved=m == winner, cost=0.5 + 0.1 * k)],
        )
        for k, m in enumerate(MODELS)
    }
    return TaskRecord(
        instance_id=f"{repo.split('/')[1]}__{i:03d}",
        repo=repo,
        difficulty="<15 min fix",
        problem_statement=f"Issue {i}: the {words} breaks when called twice ({i % 7} times).",
        per_model=per_model,
        oracle=winner,
        best=[winner],
        all_failed=False,
    )


def make_table(per_repo: int = 20) -> OracleTable:
    tasks = sorted((_task(i, r) for r in REPOS for i in range(per_repo)), key=lambda t: t.instance_id)
    pool = Pool(name="toy", models=[PoolModel(id=m, name=m.title(), runs=[f"run-{m}"]) for m in MODELS])
    return OracleTable(pool=pool, rule=OracleRule(), sources=[], command="test", tasks=tasks)


@pytest.fixture
def table_path(tmp_path):
    path = tmp_path / "table.json"
    write_table(make_table(), path)
    return path


def _cfg(table_path, out, **kw) -> LocalTrainConfig:
    return LocalTrainConfig(
        **{"table_path": table_path, "output_dir": out, "steps": 30, "tasks_per_step": 16, **kw}
    )


def test_learns_the_toy_table_and_writes_its_files(table_path, tmp_path):
    result = train_local(_cfg(table_path, tmp_path / "run"), progress=False)
    s = result.summary
    mine = s.row("local-grpo")
    assert mine.accuracy == 1.0 and mine.mean_reward == 1.0
    assert s.beats_random and s.row("random(expected)").mean_reward == pytest.approx(1 / 3, abs=1e-6)
    assert [r.name for r in s.rows] == [
        "local-grpo",
        "random(expected)",
        *(f"always:{m}" for m in MODELS),
        "oracle",
    ]
    lines = [json.loads(x) for x in result.metrics_path.read_text().splitlines()]
    for x in result.metrics_path.read_text().splitlines():
        assert StepMetrics.model_validate_json(x).to_line() == x + "\n"
    assert [x["step"] for x in lines] == list(range(1, 31))
    assert lines[-1]["reward"] > lines[0]["reward"]
    assert lines[-1]["entropy"] < lines[0]["entropy"]
    assert "heldout_reward" in lines[-1]
    # The last step's held-out check and the summary score the same final router the same way.
    held = {k: lines[-1][f"heldout_{k}"] for k in ("reward", "accuracy", "resolved", "mean_cost")}
    assert held == {
        "reward": mine.mean_reward,
        "accuracy": mine.accuracy,
        "resolved": mine.resolved_rate,
        "mean_cost": mine.mean_cost,
    }
    assert json.loads(result.summary_path.read_text()) == s.model_dump(mode="json")
    assert sorted(p.name for p in result.checkpoint_path.parent.iterdir()) == [
        "checkpoint.json",
        "metrics.jsonl",
        "summary.json",
    ]


def test_same_seed_same_bytes_other_seed_other_run(table_path, tmp_path):
    names = ("checkpoint.json", "metrics.jsonl", "summary.json")
    a = train_local(_cfg(table_path, tmp_path / "a"), progress=False)
    first = {n: (tmp_path / "a" / n).read_bytes() for n in names}
    b = train_local(_cfg(table_path, tmp_path / "a"), progress=False)  # the checkpoint records output_dir
    assert {n: (tmp_path / "a" / n).read_bytes() for n in names} == first
    assert b.summary == a.summary
    c = train_local(_cfg(table_path, tmp_path / "c", seed=1), progress=False)
    assert c.metrics_path.read_bytes() != first["metrics.jsonl"]


def test_checkpoint_round_trip(table_path, tmp_path):
    cfg = _cfg(table_path, tmp_path / "run")
    result = train_local(cfg, progress=False)
    policy = load_policy(result.checkpoint_path)
    ckpt = read_checkpoint(result.checkpoint_path)
    assert ckpt.pool_ids == MODELS and ckpt.train == cfg and ckpt.step == 30
    train_ids = {t.instance_id for t in select_tasks(make_table(), "train")}
    assert ckpt.train_task_ids == sorted(train_ids) and len(ckpt.table_sha256) == 64
    tasks = make_table().tasks
    probs = policy.probabilities(tasks)
    assert probs.shape == (len(tasks), 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert policy.route(tasks) == [t.oracle for t in tasks]
    assert policy.probabilities([]).shape == (0, 3)
    # An unseen repository and words: still a valid distribution.
    new = _task(999, "org/widgets").model_copy(update={"repo": "else/where", "problem_statement": "zzz"})
    assert policy.route([new])[0] in MODELS


def test_bad_checkpoint_names_the_file(tmp_path):
    bad = tmp_path / "checkpoint.json"
    bad.write_text('{"kind": "router-train-local"}')
    with pytest.raises(LocalTrainError, match=str(bad)):
        load_policy(bad)
    with pytest.raises(LocalTrainError, match="cannot read"):
        load_policy(tmp_path / "missing.json")


def test_rewards_come_from_the_env(table_path, tmp_path, monkeypatch):
    from router_frontier_rl.rewards import score_completion

    seen: list[tuple[str, str]] = []

    def spy(task, text, valid_ids):
        seen.append((task.instance_id, text))
        return score_completion(task, text, valid_ids)

    monkeypatch.setattr(trainer_module, "score_completion", spy)
    cfg = _cfg(table_path, tmp_path / "run", steps=3)
    result = train_local(cfg, progress=False)
    # Every (train task, model) route is scored once by the env; sampled routes look their scores up.
    train_ids = read_checkpoint(result.checkpoint_path).train_task_ids
    assert sorted(seen) == sorted((t, f"<route>{m}</route>") for t in train_ids for m in MODELS)
    lines = [json.loads(x) for x in result.metrics_path.read_text().splitlines()]
    # The toy table's oracle is the only model that resolves: per sample, routed_reward equals resolved.
    assert all(x["routed_reward"] == x["resolved_if_chosen"] for x in lines)
    assert any(0 < x["routed_reward"] < 1 for x in lines)


def test_features_fit_on_train_only():
    tasks = make_table().tasks
    train = tasks[:20]
    cfg = FeatureConfig(hash_bits=6, text="hashed", repo=True)
    state = fit_features(cfg, train)
    assert state.repos == sorted({t.repo for t in train})
    assert state.difficulties == []  # annotation metadata is off by default
    x = featurize(cfg, state, tasks)
    assert x.shape == (len(tasks), feature_dim(cfg, state))
    unseen = [t for t in tasks if t.repo not in state.repos]
    assert unseen
    assert featurize(cfg, state, unseen)[:, 64 : 64 + len(state.repos)].nnz == 0
    with_diff = FeatureConfig(hash_bits=6, difficulty=True)
    assert fit_features(with_diff, tasks).difficulties == ["<15 min fix"]
    # The default TF-IDF text: vocabulary and idf from the train tasks alone (words of >= 2 of them).
    tfidf = fit_features(FeatureConfig(), train)
    words = {w for t in train for w in re.findall(r"\b\w\w+\b", f"{t.repo} {t.problem_statement}".lower())}
    assert tfidf.vocabulary and set(tfidf.vocabulary) <= words and "lexer" in tfidf.vocabulary
    assert "sprocket" not in tfidf.vocabulary  # only in the widgets repo, which the first 20 tasks lack
    assert featurize(FeatureConfig(), tfidf, tasks).shape == (len(tasks), len(tfidf.vocabulary))


def test_cli_trains_and_prints_the_summary(table_path, tmp_path, capsys):
    out = tmp_path / "cli"
    rc = main(
        [
            "local",
            "--table",
            str(table_path),
            "--output-dir",
            str(out),
            "--steps",
            "20",
            "--tasks-per-step",
            "16",
            "--quiet",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "local-grpo" in printed and "random(expected)" in printed and "always:alpha" in printed
    assert (out / "checkpoint.json").is_file()
    assert json.loads((out / "summary.json").read_text())["rows"][0]["accuracy"] == 1.0


def test_cli_bad_table_exits_2_without_output(tmp_path, capsys):
    bad = tmp_path / "table.json"
    bad.write_text("{not json")
    out = tmp_path / "out"
    assert main(["local", "--table", str(bad), "--output-dir", str(out), "--quiet"]) == 2
    assert str(bad) in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SystemExit) as usage:  # the out-of-bounds number, before the table is read
        main(["local", "--table", str(bad), "--steps", "0", "--quiet"])
    assert usage.value.code == 2


def test_too_small_a_table_is_a_clear_error(tmp_path):
    path = tmp_path / "tiny.json"
    table = make_table(per_repo=1)
    write_table(table, path)
    with pytest.raises(LocalTrainError, match=r"tiny\.json"):
        train_local(_cfg(path, tmp_path / "out"), progress=False)
