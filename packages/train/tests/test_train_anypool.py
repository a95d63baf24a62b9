"""The any-pool router: learns from capability entries, routes models it never trained with, writes
deterministic files, and its CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from anypool_tables import synthetic_index

from router_frontier_rl.pool_draw import draw_pool
from router_oracle.candidates import write_candidates
from router_oracle.derive import CandidateIndex
from router_oracle.table import write_table
from router_train.anypool.checkpoint import load_any_pool_router, read_checkpoint
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.policy import PoolView
from router_train.anypool.run import AnyPoolRunConfig, run_any_pool
from router_train.anypool.trainer import train_any_pool
from router_train.cli import main
from router_train.local.config import FeatureConfig

FAST = AnyPoolTrainConfig(steps=80, pool_bank=24, tasks_per_step=32)

# Strong models resolve every task and cost a lot; weak ones resolve only tasks whose issue says "typo".
TIERS = {f"strong-{k}": 1.0 + 0.2 * k for k in range(5)} | {f"weak-{k}": 0.1 + 0.05 * k for k in range(5)}
TIER_HELD = ["strong-2", "weak-2"]


def tiers(model: str, repo: str, kind: str) -> bool:
    return model.startswith("strong") or kind == "easy"


# Specialists: alpha-* resolve only tasks of org/alpha, beta-* only those of org/beta.
SPECIALISTS = {f"alpha-{k}": 0.2 + 0.1 * k for k in range(4)} | {
    f"beta-{k}": 0.25 + 0.1 * k for k in range(4)
}
SPECIALIST_HELD = ["alpha-1", "beta-3"]


def specialists(model: str, repo: str, kind: str) -> bool:
    return model.split("-")[0] == repo.split("/")[1]


def held_out_accuracy(
    index: CandidateIndex, policy, train: list[str], test: list[str], held: list[str], size: int = 3
) -> tuple[float, float, int]:
    """Accuracy on `test` tasks, each with a pool holding a held-out model; and on the tasks whose
    oracle is a held-out model (with their count)."""
    hits, held_hits, held_n = 0, 0, 0
    views: dict[tuple[str, ...], PoolView] = {}  # a pool's view on the train tasks, built once
    for tid in test:
        ids = draw_pool(index.model_ids, size, seed=1, key=tid, required_from=held)
        record = index.records(index.pool(ids), [tid])[0]
        if tuple(ids) not in views:
            views[tuple(ids)] = PoolView.build(index, ids, train)
        route = policy.route([record], views[tuple(ids)])[0]
        hits += route == record.oracle
        if record.oracle in held:
            held_n += 1
            held_hits += route == record.oracle
    return hits / len(test), held_hits / max(held_n, 1), held_n


def split(index: CandidateIndex, n_train: int) -> tuple[list[str], list[str]]:
    ids = index.task_ids
    return ids[:n_train], ids[n_train:]


# --- it learns, and generalises to models it never saw -----------------------------------------


def test_a_word_of_the_issue_decides_and_unseen_models_are_routed_by_their_capabilities() -> None:
    index = synthetic_index(240, TIERS, tiers)
    train, test = split(index, 160)
    models = [m for m in index.model_ids if m not in TIER_HELD]
    result = train_any_pool(index, train, models, FAST)
    acc, held_acc, held_n = held_out_accuracy(index, result.policy, train, test, TIER_HELD)
    # "segfault" issues need the cheapest strong model, "typo" issues the cheapest model: only the
    # interaction of the issue text with the capability entries tells them apart.
    assert held_n >= 15
    assert acc >= 0.9 and held_acc >= 0.9
    assert result.metrics[-1].reward > result.metrics[0].reward + 0.3
    # Without the issue text the same policy cannot tell which tasks need a strong model.
    blind = train_any_pool(
        index, train, models, FAST.model_copy(update={"features": FeatureConfig(text="off")})
    )
    blind_acc, _, _ = held_out_accuracy(index, blind.policy, train, test, TIER_HELD)
    assert blind_acc < acc - 0.2


def test_per_repository_rates_route_an_unseen_specialist() -> None:
    index = synthetic_index(300, SPECIALISTS, specialists)
    train, test = split(index, 180)
    models = [m for m in index.model_ids if m not in SPECIALIST_HELD]
    result = train_any_pool(index, train, models, FAST)
    acc, held_acc, held_n = held_out_accuracy(index, result.policy, train, test, SPECIALIST_HELD)
    assert held_n >= 15
    assert acc >= 0.9 and held_acc >= 0.9
    # Every model resolves half the tasks overall: only its per-repository rate separates them, so a
    # uniform router is right about a third of the time.
    assert result.metrics[0].chose_oracle < 0.5


def test_any_pool_size_and_determinism() -> None:
    index = synthetic_index(120, TIERS, tiers)
    train, test = split(index, 80)
    models = [m for m in index.model_ids if m not in TIER_HELD]
    cfg = FAST.model_copy(update={"steps": 20})
    first = train_any_pool(index, train, models, cfg)
    again = train_any_pool(index, train, models, cfg)
    assert np.array_equal(first.policy.weights, again.policy.weights)
    assert np.array_equal(first.policy.bias, again.policy.bias)
    assert first.metrics == again.metrics
    other = train_any_pool(index, train, models, cfg.model_copy(update={"seed": 1}))
    assert not np.array_equal(first.policy.weights, other.policy.weights)
    records = index.records(index.pool(index.model_ids[:1]), test)
    for size in (2, 7, 10):  # pool sizes never trained on, unseen models included
        view = PoolView.build(index, index.model_ids[:size], train)
        probs = first.policy.probabilities(records, view)
        assert probs.shape == (len(test), size) and np.allclose(probs.sum(axis=1), 1.0)


def test_bad_training_inputs() -> None:
    index = synthetic_index(40, TIERS, tiers)
    train = index.task_ids[:20]
    with pytest.raises(AnyPoolError, match=r"pool_sizes \[2, 3, 4, 5\] need at least 5 models, got 3"):
        train_any_pool(index, train, index.model_ids[:3], FAST)
    with pytest.raises(ValueError, match="unknown candidate model"):
        train_any_pool(index, train, ["nope", *index.model_ids[:5]], FAST)
    with pytest.raises(ValueError, match="task 'x' is not in the candidates table"):
        train_any_pool(index, ["x"], index.model_ids, FAST)
    with pytest.raises(AnyPoolError, match="non-empty and unique"):
        train_any_pool(index, [train[0], train[0]], index.model_ids, FAST)


# --- the run: files, checkpoint, CLI -----------------------------------------------------------


@pytest.fixture
def synthetic_files(tmp_path: Path) -> tuple[Path, Path]:
    index = synthetic_index(150, TIERS, tiers)
    cand, table = tmp_path / "candidates.json", tmp_path / "table.json"
    write_candidates(index.candidates, cand)
    # The reference table only fixes the tasks and their split (stratified by its oracle labels).
    write_table(index.table(["weak-0", "strong-0"]), table)
    return cand, table


def test_run_writes_deterministic_files_and_a_loadable_router(synthetic_files, tmp_path: Path) -> None:
    cand, table = synthetic_files
    cfg = AnyPoolRunConfig(
        candidates=str(cand),
        table_path=table,
        held_out_models=TIER_HELD,
        output_dir=tmp_path / "a",
        train=FAST.model_copy(update={"steps": 40}),
    )
    result = run_any_pool(cfg, progress=False)
    run_any_pool(cfg.model_copy(update={"output_dir": tmp_path / "b"}), progress=False)
    for name in ("checkpoint.json", "metrics.jsonl", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    summary = result.summary
    assert summary.n_tasks == 30 and summary.held_out_models == TIER_HELD
    assert summary.row("oracle").accuracy == 1.0
    assert summary.row("local-anypool").mean_reward > summary.row("random(expected)").mean_reward + 0.3
    assert json.loads(result.summary_path.read_text()) == summary.model_dump(mode="json")
    assert len(result.metrics_path.read_text().splitlines()) == 40
    ckpt = read_checkpoint(result.checkpoint_path)
    assert ckpt.held_out_models == TIER_HELD and not set(ckpt.train_models) & set(TIER_HELD)
    # a path outside the working directory is recorded whole, so two sources never share a name
    assert len(ckpt.train_task_ids) == 120 and ckpt.candidates == str(cand)
    index = CandidateIndex.load(str(cand))
    router = load_any_pool_router(result.checkpoint_path, index)
    tasks = index.records(index.pool(["strong-2", "weak-2", "weak-4"]), index.task_ids[:10])
    routes = router.route(tasks, ["strong-2", "weak-2", "weak-4"])
    assert all(r in {"strong-2", "weak-2", "weak-4"} for r in routes)
    assert routes == [
        "weak-2" if t.per_model["weak-2"].resolve_rate else "strong-2" for t in tasks
    ]  # cheapest model that resolves: unseen models, routed by their entries
    with pytest.raises(AnyPoolError, match="trained on candidates table"):
        load_any_pool_router(result.checkpoint_path, CandidateIndex.load("bundled"))


def test_cli_trains_and_bad_input_exits_2(synthetic_files, tmp_path: Path, capsys) -> None:
    cand, table = synthetic_files
    base = ["local-anypool", "--candidates", str(cand), "--table", str(table), "--quiet"]
    out = tmp_path / "out"
    argv = [*base, "--held-out-models", ",".join(TIER_HELD), "--steps", "10", "--pool-bank", "8"]
    assert main([*argv, "--output-dir", str(out)]) == 0
    text = capsys.readouterr().out
    assert "held-out tasks: 30, each with its own pool of 3 models holding a held-out model" in text
    assert "local-anypool" in text and "trained 10 steps on 120 train tasks, pools from 8 models" in text
    assert read_checkpoint(out / "checkpoint.json").train.pool_bank == 8
    bad = tmp_path / "bad"
    assert main([*base, "--held-out-models", "nope", "--output-dir", str(bad)]) == 2
    assert "held_out_models ['nope'] are not candidate models" in capsys.readouterr().err
    assert main([*base, "--train-pool-sizes", "1,3", "--output-dir", str(bad)]) == 2
    assert "every pool size must be at least 2" in capsys.readouterr().err
    assert main([*base, "--candidates", str(tmp_path / "missing.json"), "--output-dir", str(bad)]) == 2
    assert "missing.json: cannot read candidates table" in capsys.readouterr().err
    assert not bad.exists()


def test_bundled_candidates_beat_random_on_held_out_models(tmp_path: Path) -> None:
    # Real data: the env's train split, two frontier models never in a training pool.
    cfg = AnyPoolRunConfig(
        held_out_models=["minimax-m2.5-high", "gemini-3-flash-preview-high"],
        output_dir=tmp_path,
        train=AnyPoolTrainConfig(steps=60, pool_bank=32),
    )
    summary = run_any_pool(cfg, progress=False).summary
    mine, rand = summary.row("local-anypool"), summary.row("random(expected)")
    assert summary.n_tasks == 100 and summary.held_out_oracle_share > 0.3
    assert mine.mean_reward > rand.mean_reward + 0.2
    assert mine.held_out_oracle_accuracy is not None and mine.held_out_oracle_accuracy > 0.6


def test_cli_refuses_an_output_dir_whose_files_would_replace_an_input(
    synthetic_files, tmp_path: Path, capsys
) -> None:
    cand, table = synthetic_files
    out = tmp_path / "out"
    out.mkdir()
    inside = out / "summary.json"  # the candidates table, where the summary would go
    inside.write_bytes(cand.read_bytes())
    argv = ["local-anypool", "--candidates", str(inside), "--table", str(table), "--quiet", "--steps", "2"]
    assert main([*argv, "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{inside}: is also an input (--candidates {inside}); write the output somewhere else" in err
    assert inside.read_bytes() == cand.read_bytes() and [p.name for p in out.iterdir()] == ["summary.json"]
