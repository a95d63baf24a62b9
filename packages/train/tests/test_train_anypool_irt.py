"""The any-pool router's IRT inputs (`FeatureConfig.irt` in `AnyPoolTrainConfig.features`,
`anypool.irt_inputs`): a held-out task's outcomes change nothing (fold spy), a model never trained with
gets its prediction from its train-task results (cold start), it trains, saves and routes (`route`
included), the flags parse, and without it nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from anypool_tables import synthetic_index

from router_oracle.candidates import CandidatesTable, write_candidates
from router_oracle.derive import CandidateIndex
from router_oracle.table import write_table
from router_train.anypool.checkpoint import (
    AnyPoolCheckpoint,
    checkpoint_of,
    load_any_pool_router,
    read_checkpoint,
)
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.irt_inputs import IRT_MODEL_FEATURES, fit_anypool_irt, model_probabilities
from router_train.anypool.model_features import MODEL_FEATURES
from router_train.anypool.policy import PoolView
from router_train.anypool.run import AnyPoolRunConfig, run_any_pool
from router_train.anypool.trainer import task_records, train_any_pool
from router_train.checkpoint_io import dumps_checkpoint
from router_train.cli import build_parser, main
from router_train.commands import local_anypool
from router_train.local.config import FeatureConfig
from router_train.local_options import config_from_args, config_from_options

IRT = AnyPoolTrainConfig(steps=30, pool_bank=12, tasks_per_step=24, features=FeatureConfig(irt=True))
MODELS = {f"strong-{k}": 1.0 + 0.2 * k for k in range(4)} | {f"weak-{k}": 0.1 + 0.05 * k for k in range(4)}
HELD = ["strong-1", "weak-3"]


def tiers(model: str, repo: str, kind: str) -> bool:
    return model.startswith("strong") or kind == "easy"


def _index(table: CandidatesTable | None = None) -> CandidateIndex:
    plain = synthetic_index(80, MODELS, tiers)
    return CandidateIndex(table, label=plain.label) if table is not None else plain


def _scrambled(index: CandidateIndex, task_ids: list[str], models: list[str] | None = None) -> CandidateIndex:
    """`index` with the outcomes and costs of `task_ids` redrawn (of every model, or of `models`)."""
    rng = np.random.default_rng(5)
    ids = set(task_ids)
    cols = [i for i, m in enumerate(index.candidates.ids) if models is None or m in models]
    tasks = []
    for t in index.candidates.tasks:
        if t.instance_id in ids:
            resolved, cost = list(t.resolved), list(t.cost)
            for c in cols:
                resolved[c] = bool(rng.random() < 0.5)
                cost[c] = float(rng.uniform(0.0, 4.0))
            t = t.model_copy(update={"resolved": resolved, "cost": cost})
        tasks.append(t)
    return _index(index.candidates.model_copy(update={"tasks": tasks}))


def test_fold_spy_held_out_outcomes_change_nothing() -> None:
    index = _index()
    train, test = index.task_ids[:60], index.task_ids[60:]
    models = [m for m in index.model_ids if m not in HELD]
    honest = train_any_pool(index, train, models, IRT).policy
    spied = train_any_pool(_scrambled(index, test), train, models, IRT).policy
    assert honest.irt == spied.irt
    assert honest.weights.tobytes() == spied.weights.tobytes()
    pool = ["strong-1", "weak-3", "weak-0"]
    records = index.records(index.pool(pool), test)
    view = PoolView.build(index, pool, train)
    assert honest.logits(records, view).tobytes() == spied.logits(records, view).tobytes()


def test_cold_start_model_gets_its_prediction_from_its_train_results() -> None:
    index = _index()
    train = index.task_ids[:60]
    state = fit_anypool_irt(index, train)
    assert state.pool.ids == index.model_ids  # held-out models too: every candidate's runs are fitted
    assert sorted(state.train_probabilities) == sorted(train)
    moved = fit_anypool_irt(_scrambled(index, train[:30], ["weak-3"]), train)
    col = index.model_ids.index("weak-3")
    new = task_records(index, index.task_ids[60:])
    before, after = model_probabilities(state, new), model_probabilities(moved, new)
    assert not np.allclose(before[:, col], after[:, col])  # its ability comes from its train results
    # Train tasks get the out-of-fold prediction, new ones the fit's prediction from their text.
    assert np.array_equal(
        model_probabilities(state, task_records(index, train[:5]))[0], state.train_probabilities[train[0]]
    )
    assert ((before > 0) & (before < 1)).all()


def test_trains_saves_and_routes_with_the_irt_columns(tmp_path: Path) -> None:
    index = _index()
    train, test = index.task_ids[:60], index.task_ids[60:]
    models = [m for m in index.model_ids if m not in HELD]
    result = train_any_pool(index, train, models, IRT)
    policy = result.policy
    assert policy.model_features == MODEL_FEATURES + IRT_MODEL_FEATURES
    assert policy.weights.shape[1] == len(MODEL_FEATURES) + 2 and np.any(policy.bias[-2:] != 0)
    ckpt = checkpoint_of(policy, IRT, index, train, models, HELD)
    path = tmp_path / "checkpoint.json"
    path.write_text(dumps_checkpoint(ckpt), encoding="utf-8")
    back = read_checkpoint(path)
    assert back == ckpt and back.irt is not None and back.model_features[-2:] == list(IRT_MODEL_FEATURES)
    router = load_any_pool_router(path, index)
    pool = ["strong-1", "weak-3", "weak-0"]
    records = index.records(index.pool(pool), test)
    view = PoolView.build(index, pool, train)
    assert router.route(records, pool) == policy.route(records, view)
    assert np.array_equal(router.policy.logits(records, view), policy.logits(records, view))
    # A checkpoint claiming IRT inputs without their fit, or a fit without the columns, is refused.
    data = json.loads(path.read_text())
    with pytest.raises(ValueError, match="IRT fit"):
        AnyPoolCheckpoint.model_validate({**data, "irt": None})
    plain = {**data, "features": FeatureConfig().model_dump(), "model_features": list(MODEL_FEATURES)}
    with pytest.raises(ValueError, match="IRT fit"):
        AnyPoolCheckpoint.model_validate(plain)
    with pytest.raises(AnyPoolError, match="other train tasks"):
        train_any_pool(index, train[:50], models, IRT, irt=ckpt.irt)
    with pytest.raises(AnyPoolError, match="do not ask for IRT"):
        train_any_pool(index, train, models, AnyPoolTrainConfig(steps=2), irt=ckpt.irt)


def test_without_irt_the_checkpoint_is_as_before(tmp_path: Path) -> None:
    index = _index()
    train = index.task_ids[:60]
    models = [m for m in index.model_ids if m not in HELD]
    policy = train_any_pool(index, train, models, AnyPoolTrainConfig(steps=5, pool_bank=4)).policy
    assert policy.irt is None and policy.model_features == MODEL_FEATURES
    data = json.loads(
        dumps_checkpoint(checkpoint_of(policy, AnyPoolTrainConfig(), index, train, models, HELD))
    )
    assert "irt" not in data and data["model_features"] == list(MODEL_FEATURES)
    assert data["features"]["irt"] is False


def test_flags_parse() -> None:
    sub = build_parser("local-anypool")
    args = sub.parse_args(["local-anypool", "--irt", "--steps", "3"])
    cfg = local_anypool.config_from_args(args)
    assert cfg.train.features == FeatureConfig(irt=True) and cfg.train.steps == 3
    plain = local_anypool.config_from_args(sub.parse_args(["local-anypool"]))
    assert plain.train == AnyPoolTrainConfig()
    local = build_parser("local")
    assert config_from_args(local.parse_args(["local", "--irt"])).features == FeatureConfig(irt=True)
    both = config_from_args(local.parse_args(["local", "--irt", "--difficulty"])).features
    assert both == FeatureConfig(irt=True, difficulty=True)
    assert config_from_args(local.parse_args(["local"])).features == FeatureConfig()
    assert config_from_options("--irt --steps 5").features.irt  # evaluate --local NAME='--irt'


@pytest.mark.e2e
def test_local_anypool_irt_checkpoint_routes_through_route(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bundled candidates, as `route` reads them: the checkpoint carries the IRT fit routing needs.
    out = tmp_path / "run"
    argv = ["local-anypool", "--irt", "--quiet", "--steps", "4", "--pool-bank", "8", "--tasks-per-step", "16"]
    assert main([*argv, "--held-out-models", "kimi-k2.5-high", "--output-dir", str(out)]) == 0
    ckpt = out / "checkpoint.json"
    assert read_checkpoint(ckpt).irt is not None
    ids = ["claude-sonnet-4.5", "gpt-5-mini", "kimi-k2.5-high"]
    pool = tmp_path / "pool.toml"
    pool.write_text(
        'name = "mine"\n'
        + "".join(f'[[models]]\nid = "{m}"\nname = "{m}"\nruns = ["run-{m}"]\n' for m in ids),
        encoding="utf-8",
    )
    instances = ["django__django-11099", "sympy__sympy-20590", "astropy__astropy-12907"]
    capsys.readouterr()
    argv = ["route", "--quiet", "--checkpoint", str(ckpt), "--pool", str(pool)]
    assert main([*argv, *(a for i in instances for a in ("--instance", i))]) == 0
    got = {d["instance_id"]: d["model"] for d in map(json.loads, capsys.readouterr().out.splitlines())}
    router = load_any_pool_router(ckpt)
    tasks = task_records(router.index, instances)
    assert got == dict(zip(instances, router.route(tasks, ids), strict=True))


def test_run_any_pool_with_irt_is_deterministic(tmp_path: Path) -> None:
    index = _index()
    cand, table = tmp_path / "candidates.json", tmp_path / "table.json"
    write_candidates(index.candidates, cand)
    write_table(index.table(["weak-0", "strong-0"]), table)
    cfg = AnyPoolRunConfig(
        candidates=str(cand), table_path=table, held_out_models=HELD, output_dir=tmp_path / "a", train=IRT
    )
    run_any_pool(cfg, progress=False)
    run_any_pool(cfg.model_copy(update={"output_dir": tmp_path / "b"}), progress=False)
    for name in ("checkpoint.json", "metrics.jsonl", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert read_checkpoint(tmp_path / "a" / "checkpoint.json").irt is not None
