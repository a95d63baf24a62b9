"""Every registered router kind (`route.kinds.KINDS`) routes, takes a cost dial and is judged by
`router-train evaluate --checkpoint`, and every kind's fitters (its entry of `fitting.FITS`) fit and route
held-out tasks: the tests are parametrized over the registry, so a kind added later is covered as soon as
`CHECKPOINTS` says how to make a small checkpoint of it (a test fails until then)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from bash_only import BASH_ONLY, bash_only_table_path
from pydantic import TypeAdapter
from test_train_evaluate_anypool import synthetic

from router_frontier_rl.split import select_tasks
from router_oracle.results_matrix import matrix_of
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table
from router_train.anypool.trainer import train_any_pool
from router_train.cli import main
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.run import Source, evaluate, read_table
from router_train.evaluate_anypool.fits import FIXED_NAMES
from router_train.fitting import (
    FITS,
    Fit,
    FitRequest,
    PartitionRequest,
    ReferenceRequest,
    anypool_training,
    fitters_for,
    partition_fits,
    reference_rows,
    references_for,
)
from router_train.fitting import fit as fit_module
from router_train.irt.fitter import IrtFitter
from router_train.irt.router import IrtConfig, fit_irt_router
from router_train.local.config import LocalTrainConfig
from router_train.local.fitter import LocalFitter
from router_train.route import CheckpointSpec, TaskInput, load_router
from router_train.route.kinds import KINDS, Checkpoint, kind_of
from router_train.route.kinds import kind as kind_module
from router_train.scoring.baseline_fitter import BalancedLogregFitter, BaselineFitter
from router_train.scoring.decisions import EvaluateError
from router_train.scoring.safe_point import SafePointFitter

CHECKPOINTS: dict[str, str] = {
    "router-train-local": "grpo_checkpoint",
    "router-train-local-anypool": "anypool_checkpoint",
    "router-train-baseline": "balanced_logreg_checkpoint",
    "router-train-irt": "irt_checkpoint",
}
"""Kind -> the shared fixture (train_fixtures) of a small checkpoint of it, trained on the bash-only table's
train split."""

POOL = Path(BASH_ONLY)
"""The bundled pool every fixed-pool checkpoint above learned (its models are candidates, so the any-pool
kind routes it too)."""


@pytest.fixture(scope="module", params=sorted(KINDS))
def checkpoint(request: pytest.FixtureRequest) -> Path:
    kind = request.param
    assert kind in CHECKPOINTS, f"registered kind {kind} has no test checkpoint: add it to CHECKPOINTS"
    path: Path = request.getfixturevalue(CHECKPOINTS[kind])
    return path


@pytest.fixture(scope="module")
def eval_tasks() -> list[TaskInput]:
    return list(select_tasks(load_table(bash_only_table_path()), "eval"))


def test_the_registry_keeps_the_on_disk_kinds_and_the_union_has_every_kind() -> None:
    # Existing checkpoint files carry these strings: renaming one would stop them loading.
    assert list(KINDS) == [
        "router-train-local",
        "router-train-local-anypool",
        "router-train-baseline",
        "router-train-irt",
    ]
    assert [k.name for k in KINDS.values()] == ["local", "local-anypool", "baseline", "irt"]
    members = TypeAdapter(Checkpoint).json_schema()["discriminator"]["mapping"]
    assert sorted(members) == sorted(KINDS)


def test_both_registries_hold_every_kind_in_the_same_order() -> None:
    # A kind is a line on each side: what routes it (`route.kinds.KINDS`) and what fits it (`fitting.FITS`).
    assert list(FITS) == list(KINDS)
    assert all(FITS[k].kind is KINDS[k] for k in KINDS)


def test_a_checkpoint_is_read_as_its_kind(checkpoint: Path) -> None:
    kind = kind_of(checkpoint)
    parsed = TypeAdapter(Checkpoint).validate_json(checkpoint.read_text())
    assert type(parsed) is kind.checkpoint and parsed.kind == kind.kind


def test_a_checkpoint_stores_its_kinds_margins(checkpoint: Path) -> None:
    """The checkpoint a kind's command writes holds its safe point to that kind's margins (`Fit.margins`),
    the ones evaluate's fitters of it use."""
    kind = kind_of(checkpoint)
    safe = json.loads(checkpoint.read_text()).get("safe_point")
    if kind.name == "local-anypool":  # routes pools it never saw: no train-task estimate to store
        assert safe is None
        return
    assert (safe["margin"], safe["dial_margin"]) == (
        FITS[kind.kind].margins.default,
        FITS[kind.kind].margins.dial,
    )


def test_every_kind_routes_as_the_argmax_of_its_scores(checkpoint: Path, eval_tasks: list[TaskInput]) -> None:
    router = load_router(CheckpointSpec(checkpoint=checkpoint, pool=POOL, no_safe_point=True))
    assert sorted(router.pool) == ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
    decisions = router.route_many(eval_tasks, explain=False)
    scores = router.scores(eval_tasks)
    assert scores is not None and scores.shape == (len(eval_tasks), len(router.pool))
    assert [d.model for d in decisions] == [router.pool[i] for i in np.argmax(scores, axis=1)]
    assert [d.instance_id for d in decisions] == [t.instance_id for t in eval_tasks]
    assert all(d.router == router.name and d.dial is None for d in decisions)


def test_every_kind_takes_a_budget_and_a_dial(checkpoint: Path, eval_tasks: list[TaskInput]) -> None:
    at_zero = load_router(CheckpointSpec(checkpoint=checkpoint, pool=POOL, dial=0.0, no_safe_point=True))
    calibration = at_zero.point.calibration
    assert calibration is not None and calibration.points
    # A budget at a point of its own table: it routes at a tabulated point within that budget.
    points = sorted(calibration.points, key=lambda p: p.cost_per_task)
    budget = points[len(points) // 2].cost_per_task
    budgeted = load_router(
        CheckpointSpec(checkpoint=checkpoint, pool=POOL, budget=budget, no_safe_point=True)
    )
    assert (
        budgeted.point.bought in calibration.points and budgeted.point.bought.cost_per_task <= budget + 1e-9
    )
    assert budgeted.point.dial == budgeted.point.bought.dial
    # The dial's two ends price every model out but one, by mean train cost: the cheapest at the largest
    # dial, the priciest at the most negative one (-inf scores are floored, so these reach every task).
    costs = dict(zip(calibration.model_ids, calibration.model_costs, strict=True))
    by_cost = sorted(costs, key=lambda m: costs[m])
    for dial, model in ((1e6, by_cost[0]), (-1e6, by_cost[-1])):
        routes = load_router(
            CheckpointSpec(checkpoint=checkpoint, pool=POOL, dial=dial, no_safe_point=True)
        ).route_many(eval_tasks)
        assert {d.model for d in routes} == {model} and all(d.dial == dial for d in routes)
    # Dial 0 is the router as trained: its dial scores are a monotone transform of its scores.
    plain = load_router(CheckpointSpec(checkpoint=checkpoint, pool=POOL, no_safe_point=True)).route_many(
        eval_tasks, explain=False
    )
    assert [d.model for d in at_zero.route_many(eval_tasks)] == [d.model for d in plain]


def test_every_kind_is_judged_by_evaluate_on_unseen_tasks_only(
    checkpoint: Path, eval_tasks: list[TaskInput], tmp_path: Path
) -> None:
    table, info = read_table(bash_only_table_path())
    report = evaluate(
        table,
        info,
        EvaluateConfig(checkpoints=[Source(name="ckpt", path=checkpoint)], include_baselines=False),
    )
    (row,) = report.main.routers
    assert row.kind == "checkpoint" and row.source == checkpoint.name and not row.in_sample
    assert report.main.n_tasks == len(eval_tasks)
    # The row is the router's own routes, on the table's pool.
    decisions = load_router(CheckpointSpec(checkpoint=checkpoint, pool=POOL)).route_many(eval_tasks)
    models = [d.model for d in decisions]
    shares = {m: v for m, v in row.metrics.label_distribution.items() if v > 0}
    assert shares == pytest.approx({m: models.count(m) / len(models) for m in set(models)}, abs=1e-6)
    # Never judged on the tasks it trained on: the train split is refused (one line, exit 2).
    with pytest.raises(EvaluateError, match=r"trained on 400 of the 400 tasks"):
        evaluate(
            table,
            info,
            EvaluateConfig(
                split="train", checkpoints=[Source(name="ckpt", path=checkpoint)], include_baselines=False
            ),
        )
    argv = [
        "evaluate",
        "--checkpoint",
        str(checkpoint),
        "--table",
        str(bash_only_table_path()),
        "--no-baselines",
        "--no-plot",
        "-o",
        str(tmp_path / "r"),
    ]
    assert main(argv) == 0 and (tmp_path / "r" / "report.json").is_file()


def test_a_file_of_no_registered_kind_is_one_line_for_route_and_evaluate(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"kind": "router-train-other"}\n')
    expected = "not a router checkpoint (kind 'router-train-other'; expected one of " + ", ".join(KINDS) + ")"
    with pytest.raises(ValueError, match=re.escape(f"{path}: {expected}")):
        load_router(CheckpointSpec(checkpoint=path))
    table, info = read_table(bash_only_table_path())
    with pytest.raises(EvaluateError, match=re.escape(f"{path}: cannot load checkpoint: {path}: {expected}")):
        evaluate(
            table, info, EvaluateConfig(checkpoints=[Source(name="x", path=path)], include_baselines=False)
        )


FAST_LOCAL = [("local-fast", LocalTrainConfig(steps=10, tasks_per_step=16, shift_folds=0))]
"""A local GRPO configuration with few steps: these tests check the fitting, not how well it learns."""


def _request(table: OracleTable, tasks: list[TaskRecord], *, wanted: bool) -> FitRequest:
    options = {"baseline": wanted, "local": FAST_LOCAL if wanted else [], "irt": wanted}
    return FitRequest(table, tasks, options)


@pytest.mark.parametrize("kind", list(FITS.values()), ids=lambda k: k.name)
def test_every_kind_with_fitters_fits_and_routes_held_out_tasks(kind: Fit) -> None:
    table = load_table(bash_only_table_path())
    train, test = select_tasks(table, "train"), select_tasks(table, "eval")
    if kind.fitters is None:
        # Only the any-pool kind has no fixed-pool fit: `evaluate-anypool` judges it across pools.
        assert kind.name == "local-anypool" and kind.command == "router-train local-anypool"
        return
    assert kind.command.startswith("router-train ")
    assert kind.fitters(_request(table, test, wanted=False)) == []
    fitters = kind.fitters(_request(table, test, wanted=True))
    assert fitters
    for fit in fitters:
        # `fit_scored`: the decisions and the per-model scores the curves dial, of the same rows.
        decisions, scores = fit.fit_scored(train, test, 0)  # type: ignore[attr-defined]
        assert decisions and [s.name for s in scores] == [
            d.name for d in decisions if d.name in {s.name for s in scores}
        ]
        for d in decisions:
            assert set(d.choices) == {t.instance_id for t in test}
            assert all(len(dist) == 1 and set(dist) <= set(table.pool.ids) for dist in d.choices.values())
        for sc in scores:
            assert sorted(sc.model_ids) == sorted(table.pool.ids)
            assert sc.train.shape == (len(train), 3) and sc.test.shape == (len(test), 3)
        # Calling the fitter is fitting it: the same routes as `fit_scored`'s.
        assert [d.choices for d in fit(train, test, 0)] == [d.choices for d in decisions]


def test_evaluate_fits_the_reference_kinds_first_then_the_others_in_registry_order() -> None:
    table = load_table(bash_only_table_path())
    tasks = select_tasks(table, "eval")
    fitters = fitters_for(_request(table, tasks, wanted=True))
    # Each at its safe default point (`scoring.safe_point`), unless the request says --no-safe-point.
    assert all(isinstance(f, SafePointFitter) for f in fitters)
    assert [type(getattr(f, "inner", None)) for f in fitters] == [BaselineFitter, LocalFitter, IrtFitter]
    plain = fitters_for(replace(_request(table, tasks, wanted=True), safe_point=False))
    assert [type(f) for f in plain] == [BaselineFitter, LocalFitter, IrtFitter]
    assert fitters_for(_request(table, tasks, wanted=False)) == []


def test_evaluate_anypool_takes_its_references_and_any_pool_trainer_from_the_registry() -> None:
    table = load_table(bash_only_table_path())
    train, test = select_tasks(table, "train"), select_tasks(table, "eval")
    references = references_for(ReferenceRequest(table.pool.ids, {"local": FAST_LOCAL[0][1]}))
    assert [type(f) for f in references] == [LocalFitter, BalancedLogregFitter]
    decisions = [d for f in references for d in f(train, test, 0)]
    # The rows evaluate-anypool reports, in its order: the kinds' declared reference rows.
    assert tuple(d.name for d in decisions) == FIXED_NAMES == reference_rows()
    for d in decisions:
        assert set(d.choices) == {t.instance_id for t in test}
        assert all(len(dist) == 1 and set(dist) <= set(table.pool.ids) for dist in d.choices.values())
    # The balanced classifier routes as evaluate's row of the same name.
    (evaluate_row,) = [d for d in BaselineFitter(table.pool.ids)(train, test, 0) if d.name == FIXED_NAMES[1]]
    assert decisions[1].choices == evaluate_row.choices
    # The any-pool router is the one kind that routes any pool: its trainer trains it.
    assert [k.name for k in FITS.values() if k.anypool is not None] == ["local-anypool"]
    assert anypool_training().train is train_any_pool


def test_evaluate_anypool_takes_its_partition_shared_row_from_the_registry() -> None:
    """`--irt`'s row is the irt kind's partition fit: one IRT fit on the train tasks' rows of every run,
    one route per test task and the per-model scores on each pool."""
    (shared,) = partition_fits()
    assert shared.row == "irt" and shared is FITS["router-train-irt"].partition
    index = synthetic()[0]
    ids = sorted(index.task_ids)
    train_ids, test_ids = ids[::2], ids[1::2]
    pools = [["pa-big", "pb-mid", "pc-tiny"], ["pa-big", "pc-tiny"]]
    config = IrtConfig(dims=(0, 1), alphas=(3.0,), temperatures=(1.0,), inner_folds=3)
    fitted = shared.fit(PartitionRequest(index, train_ids, test_ids, pools, {"irt": config}, 0, "half"))
    assert len(fitted) == len(pools)
    for ids_, (routes, scores) in zip(pools, fitted, strict=True):
        assert len(routes) == len(test_ids) and set(routes) <= set(ids_)
        assert scores.name == "irt" and sorted(scores.model_ids) == sorted(ids_)
        assert scores.train.shape == (len(train_ids), len(ids_)) and scores.test.shape == (
            len(test_ids),
            len(ids_),
        )
    # The first pool's routes are the IRT router fitted for it on the train tasks alone.
    first = index.pool(pools[0])
    own = fit_irt_router(
        index.records(first, train_ids), matrix_of(index.candidates), first, config=config, seed=0
    )
    assert fitted[0][0] == own.route(index.records(first, test_ids), first)


@pytest.mark.parametrize("module", [kind_module, fit_module], ids=["route.kinds.kind", "fitting.fit"])
def test_what_a_kind_is_imports_no_kind(module: object) -> None:
    # kind.py and fit.py are the registries' vocabulary: per-kind options travel keyed by kind name
    # (`KindOptions`), so no kind's package (its trainer, config, checkpoint) is imported by them; fit.py
    # reads the routing side's `RouterKind` alone.
    source = Path(getattr(module, "__file__", None) or "").read_text(encoding="utf-8")
    imported = [n.module or "" for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    kind_packages = (
        "router_train.local",
        "router_train.anypool",
        "router_train.irt",
        "router_train.route.kinds",
        "router_train.fitting",
    )
    assert imported and [m for m in imported if m.startswith(kind_packages)] == (
        ["router_train.route.kinds.kind"] if module is fit_module else []
    )


def test_a_kind_reads_its_own_options_of_its_own_type() -> None:
    table = load_table(bash_only_table_path())
    only_local = FitRequest(table, table.tasks, {"local": FAST_LOCAL}, safe_point=False)
    (fitter,) = fitters_for(only_local)  # the other kinds are not asked for
    assert isinstance(fitter, LocalFitter) and fitter.name == "local-fast"
    with pytest.raises(TypeError, match="the irt kind's options are a bool, not str"):
        fitters_for(FitRequest(table, table.tasks, {"irt": "yes"}))
