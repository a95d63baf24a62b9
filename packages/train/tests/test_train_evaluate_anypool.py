"""`router-train evaluate-anypool`: held-out tasks AND held-out models, next to fixed-pool routers.

Synthetic candidates (built here): six models of three providers; big models resolve everything at a
high cost, the others resolve easy tasks (and some repository's hard ones) cheaply.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from anypool_tables import synthetic_index

from router_oracle.candidates import CandidatesError, write_candidates
from router_oracle.derive import CandidateIndex
from router_oracle.frontier import ModelPoint
from router_oracle.table import OracleTable, write_table
from router_oracle.task_input import TaskInput
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.irt_inputs import fit_anypool_irt
from router_train.anypool.trainer import train_any_pool
from router_train.cli import main
from router_train.evaluate.report import TableInfo
from router_train.evaluate_anypool import (
    NamedPool,
    evaluate_any_pool,
    evaluation_pools,
    explicit_groups,
    fits,
    held_out_groups,
    write_report,
)
from router_train.evaluate_anypool.config import AnyPoolEvalConfig
from router_train.evaluate_anypool.pool_average import PoolGaps, gap_differences
from router_train.evaluate_anypool.report import AnyPoolEvalReport
from router_train.fitting import AnyPoolTraining
from router_train.local.config import LocalTrainConfig
from router_train.local.fitter import LocalFitter
from router_train.scoring import baselines
from router_train.scoring.decisions import Decisions, EvaluateError, from_labels
from router_train.scoring.metrics import (
    compute_metrics,
    per_task_outcomes,
    single_model_points,
    task_resample,
)
from router_train.scoring.vs_mix import floored_gap, frontier_position, gap_samples

MODELS = {"pa-big": 1.0, "pa-small": 0.1, "pb-big": 0.9, "pb-mid": 0.3, "pc-mid": 0.4, "pc-tiny": 0.05}
PROVIDERS = {m: m.split("-")[0] for m in MODELS}
REFERENCE_POOL = ["pa-big", "pb-mid", "pc-tiny"]
FAST_ANY = AnyPoolTrainConfig(steps=6, pool_bank=6, pool_sizes=[2, 3], tasks_per_step=16)
FAST_FIXED = LocalTrainConfig(steps=6, tasks_per_step=16)
"""Few steps: these tests check the protocol, not how well the routers learn."""


def resolves(model: str, repo: str, kind: str) -> bool:
    if model.endswith("big"):
        return True
    if model.endswith("mid"):
        return kind == "easy" or repo == "org/alpha"
    if model.endswith("tiny"):
        return kind == "easy" and repo == "org/beta"
    return kind == "easy"


@functools.cache
def synthetic() -> tuple[CandidateIndex, tuple[OracleTable, TableInfo]]:
    """The candidates index and the reference table with its info, built once per process."""
    index = synthetic_index(60, MODELS, resolves, providers=PROVIDERS)
    table = index.table(REFERENCE_POOL, pool_name="ref")
    info = TableInfo(file="ref.json", sha256="0" * 64, pool=table.pool.ids, n_tasks=len(table.tasks))
    return index, (table, info)


@pytest.fixture(scope="module")
def index() -> CandidateIndex:
    return synthetic()[0]


@pytest.fixture(scope="module")
def reference() -> tuple[OracleTable, TableInfo]:
    return synthetic()[1]


def run(index: CandidateIndex, reference: tuple[OracleTable, TableInfo], **kw: object):  # type: ignore[no-untyped-def]
    table, info = reference
    args: dict[str, object] = {
        "drawn_pools": 2,
        "named_pools": [NamedPool(name="ref", ids=REFERENCE_POOL)],
        "folds": 3,
        "fold_seeds": [0],
        "anypool_config": FAST_ANY,
        "fixed_config": FAST_FIXED,
        "held_out_by": "provider",
    }
    args.update(kw)
    groups = args.pop("groups", None) or held_out_groups(index, "provider")
    progress = bool(args.pop("progress", False))
    return evaluate_any_pool(index, table, info, groups, AnyPoolEvalConfig(**args), progress=progress)  # type: ignore[arg-type]


@functools.cache
def plain_report(jobs: int) -> AnyPoolEvalReport:
    """`run` unpatched with one drawn pool per group (+ the reference pool), once per process and `jobs`:
    the determinism test compares jobs 1 and 2, `test_train_evaluate_curves` reads the curves."""
    index, reference = synthetic()
    return run(index, reference, jobs=jobs, drawn_pools=1)


# --- design: groups and pools ---------------------------------------------------------------------


def test_groups_by_family_and_pools_holding_a_held_out_model(index: CandidateIndex) -> None:
    groups = held_out_groups(index, "provider")
    assert [(g.name, g.models) for g in groups] == [
        ("pa", ["pa-big", "pa-small"]),
        ("pb", ["pb-big", "pb-mid"]),
        ("pc", ["pc-mid", "pc-tiny"]),
    ]
    assert [g.name for g in held_out_groups(index, "model", ["pb-mid"])] == ["pb-mid"]
    assert explicit_groups(index, [["pc-tiny", "pa-big"]])[0].models == ["pa-big", "pc-tiny"]
    named = [NamedPool(name="ref", ids=REFERENCE_POOL), NamedPool(name="pa-only", ids=["pa-big", "pa-small"])]
    for g in groups:
        pools = evaluation_pools(index, g, drawn=3, size=3, seed=0, named=named)
        drawn = [p for p in pools if p.kind == "drawn"]
        assert len(drawn) == 3 and len({frozenset(p.ids) for p in pools}) == len(pools)
        for p in pools:
            assert len(set(p.ids)) == len(p.ids) and p.held_out == [m for m in p.ids if m in g.models]
            assert p.held_out  # every evaluation pool holds a held-out model
        assert [p.name for p in pools if p.kind == "named"] == (
            ["ref", "pa-only"] if g.name == "pa" else ["ref"]
        )
        assert pools == evaluation_pools(index, g, drawn=3, size=3, seed=0, named=named)  # seeded
    assert evaluation_pools(index, groups[0], drawn=3, size=3, seed=1) != evaluation_pools(
        index, groups[0], drawn=3, size=3, seed=0
    )
    with pytest.raises(EvaluateError, match="no candidate model has provider 'pz'"):
        held_out_groups(index, "provider", ["pz"])
    with pytest.raises(CandidatesError, match="unknown candidate model"):
        explicit_groups(index, [["nope"]])
    with pytest.raises(EvaluateError, match="pool size must be 2 to 6"):
        evaluation_pools(index, groups[0], drawn=1, size=7, seed=0)
    with pytest.raises(EvaluateError, match="found only"):  # 4 distinct pools of 2 hold a pc model... x 2
        evaluation_pools(index, groups[2], drawn=20, size=2, seed=0)


# --- the protocol's guarantees --------------------------------------------------------------------


def test_no_task_routed_by_a_router_trained_on_it_and_no_held_out_model_in_training(
    index: CandidateIndex, reference: tuple[OracleTable, TableInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    anypool_calls: list[dict[str, object]] = []
    real_train = train_any_pool
    real_build = fits.PoolView.build

    def spy_train(index, train_ids, model_ids, cfg, **kw):  # type: ignore[no-untyped-def]
        result = real_train(index, train_ids, model_ids, cfg, **kw)
        call: dict[str, object] = {
            "train": set(train_ids),
            "models": set(model_ids),
            "routed": [],
            "views": [],
        }
        route = result.policy.route

        def spy_route(tasks: Sequence[TaskInput], view) -> list[str]:  # type: ignore[no-untyped-def]
            call["routed"].append(({t.instance_id for t in tasks}, set(view.ids)))  # type: ignore[attr-defined]
            return route(tasks, view)

        result.policy.route = spy_route  # type: ignore[method-assign]
        anypool_calls.append(call)
        return result

    def spy_build(index, model_ids, train_ids):  # type: ignore[no-untyped-def]
        anypool_calls[-1]["views"].append(set(train_ids))  # type: ignore[attr-defined]
        return real_build(index, model_ids, train_ids)

    fixed_calls: list[tuple[set[str], set[str], str]] = []
    real_fixed = LocalFitter.fit_scored_many
    real_logreg = baselines.tfidf_logreg

    def spy_fixed(self, folds):  # type: ignore[no-untyped-def]
        for train, test in folds:
            fixed_calls.append(({t.instance_id for t in train}, {t.instance_id for t in test}, "grpo"))
        return real_fixed(self, folds)

    def spy_logreg(train, test, seed, **kw):  # type: ignore[no-untyped-def]
        fixed_calls.append(({t.instance_id for t in train}, {t.instance_id for t in test}, "logreg"))
        return real_logreg(train, test, seed, **kw)

    # The trainers evaluate-anypool takes from the registry of router kinds.
    spy = AnyPoolTraining(spy_train, fit_anypool_irt)  # type: ignore[arg-type]  # an untyped spy
    monkeypatch.setattr(fits, "anypool_training", lambda: spy)
    monkeypatch.setattr(fits.PoolView, "build", staticmethod(spy_build))
    monkeypatch.setattr(LocalFitter, "fit_scored_many", spy_fixed)
    monkeypatch.setattr(baselines, "tfidf_logreg", spy_logreg)

    # One drawn pool per group (+ the reference pool): the guarantees are per fit and per pool, and a
    # second drawn pool per group adds only fits.
    report = run(index, reference, fold_seeds=[0, 5], jobs=1, drawn_pools=1)
    everything = set(index.task_ids)
    groups = {g.name: set(g.models) for g in report.design.groups}
    assert len(anypool_calls) == 3 * 3 * 2  # groups x folds x fold seeds
    trained_without: Counter[str] = Counter()
    for call in anypool_calls:
        train, models = call["train"], call["models"]
        assert isinstance(train, set) and isinstance(models, set)
        held = set(MODELS) - models
        (group,) = [name for name, ms in groups.items() if ms == held]  # exactly one group held out
        trained_without[group] += 1
        assert call["routed"]
        for routed, pool in call["routed"]:  # type: ignore[attr-defined]
            assert not routed & train and routed | train == everything  # routes exactly its fold
            assert pool & held  # each pool it is judged on holds a model it never trained with
        views = call["views"]
        assert isinstance(views, list) and views and all(v == train for v in views)  # train tasks only
    assert trained_without == dict.fromkeys(groups, 6)
    assert {what for _, _, what in fixed_calls} == {"grpo", "logreg"}
    assert all(not train & test for train, test, _ in fixed_calls)
    # every router routed every task exactly once per fold seed, in every pool
    for p in report.pools:
        for r in p.evaluation.routers:
            if r.name == "oracle":
                continue  # not fitted: one label per task
            assert r.metrics.n_decisions == 2 * len(everything) and r.metrics.tasks_missing == 0
            assert len(r.gap_vs_mix.by_fold_seed) == 2


class _AlwaysCheapest:
    """Stands in for the any-pool router: every task to the pool's cheapest model (a frontier corner)."""

    def route(self, tasks: Sequence[TaskInput], view) -> list[str]:  # type: ignore[no-untyped-def]
        cheapest = min(view.summary.models, key=lambda m: m.mean_cost).id
        return [cheapest] * len(tasks)


class _Fit:
    def __init__(self, model_ids: Sequence[str]) -> None:
        self.policy = _AlwaysCheapest()
        self.model_ids = list(model_ids)


def test_a_router_equal_to_one_single_model_has_gap_zero(
    index: CandidateIndex, reference: tuple[OracleTable, TableInfo], monkeypatch: pytest.MonkeyPatch
) -> None:
    def stand_in(index, train, models, cfg, **_):  # type: ignore[no-untyped-def]
        return _Fit(models)

    cheapest = AnyPoolTraining(stand_in, fit_anypool_irt)  # type: ignore[arg-type]  # not a trained router
    monkeypatch.setattr(fits, "anypool_training", lambda: cheapest)
    report = run(index, reference)
    assert len(report.pools) == 3 * 2 + 3  # drawn per group + the reference pool in every group
    for p in report.pools:
        row = next(r for r in p.evaluation.routers if r.name == "local-anypool")
        assert len(row.metrics.label_distribution) == 1
        # costs are constant per model here, so the cheapest model is the frontier's first corner on
        # every resample too: the gap is exactly 0, and so is its interval
        for gap in (row.gap_vs_mix, p.floored_gaps["local-anypool"]):
            assert (gap.mean, gap.low, gap.high, gap.by_fold_seed) == (0.0, 0.0, 0.0, [0.0])
        assert "local-anypool" not in p.floored
    avg = {a.router: a for a in report.averages}
    assert avg["local-anypool"].gap.mean == 0.0 and avg["local-anypool"].gap.low == 0.0
    assert avg["local-anypool"].gap.high == 0.0 and avg["local-anypool"].one_model_pools == len(report.pools)
    assert avg["oracle"].gap.mean is not None and avg["oracle"].gap.mean > 0
    for d in report.differences:  # 0 minus the reference's gap
        assert d.gap.mean == pytest.approx(-avg[d.reference].gap.mean, abs=1e-3)  # type: ignore[operator]


def test_report_is_deterministic_and_parallel_safe(tmp_path: Path) -> None:
    outs = []
    for k, jobs in enumerate((1, 2)):
        files = write_report(plain_report(jobs), tmp_path / str(k))
        outs.append({f.name: f.read_bytes() for f in files})
    assert outs[0] == outs[1]
    assert set(outs[0]) == {"report.json", "report.md", "anypool_gaps.png"}
    data = json.loads(outs[0]["report.json"])
    assert data["version"] == 1 and data["design"]["folds"] == 3
    assert [a["router"] for a in data["averages"]] == [
        "local-anypool",
        "local-grpo",
        "tfidf-logreg(balanced)",
        "oracle",
    ]
    assert [d["reference"] for d in data["differences"]] == ["local-grpo", "tfidf-logreg(balanced)"]
    assert "## Per pool" in outs[0]["report.md"].decode()


def test_pool_average_is_paired_over_the_same_resampled_tasks() -> None:
    pools = [
        PoolGaps(
            point={"a": 0.02, "b": 0.01},
            by_fold_seed={"a": [0.02, 0.04], "b": [0.01, 0.0]},
            samples={"a": np.array([0.01, 0.03, 0.02]), "b": np.array([0.0, 0.02, 0.01])},
            floored=[],
        ),
        PoolGaps(
            point={"a": 0.0, "b": 0.03},
            by_fold_seed={"a": [0.0, 0.0], "b": [0.03, 0.01]},
            samples={"a": np.array([0.0, 0.0, 0.01]), "b": np.array([0.03, 0.02, 0.04])},
            floored=["b"],
        ),
    ]
    (d,) = gap_differences(pools, "a", ["b"])
    assert d.n_pools == 2 and d.pools_at_least == 1
    assert d.gap.mean == pytest.approx(100 * ((0.02 - 0.01) + (0.0 - 0.03)) / 2)
    assert d.gap.by_fold_seed == pytest.approx([100 * (0.01 - 0.03) / 2, 100 * (0.04 - 0.01) / 2])
    # per resample: the mean over the pools of (a - b), resample k of every pool taken together
    means = [
        ((0.01 - 0.0) + (0.0 - 0.03)) / 2,
        ((0.03 - 0.02) + (0.0 - 0.02)) / 2,
        ((0.02 - 0.01) + (0.01 - 0.04)) / 2,
    ]
    assert (d.gap.low, d.gap.high) == pytest.approx(tuple(100 * np.percentile(means, [2.5, 97.5])))


def test_a_router_cheaper_than_every_model_is_compared_with_the_cheapest() -> None:
    singles = [
        ModelPoint(model="cheap", cost=0.1, resolved=0.5),
        ModelPoint(model="dear", cost=1.0, resolved=0.9),
    ]
    assert floored_gap(0.6, 0.05, singles) == (pytest.approx(0.1), True)  # vs `cheap`: no credit for saving
    gap, floored = floored_gap(0.6, 0.55, singles)  # above the cheapest model: evaluate's own gap
    assert not floored and gap == frontier_position(0.55, 0.6, singles).gap_vs_mix == pytest.approx(-0.1)
    assert frontier_position(0.05, 0.6, singles).gap_vs_mix is None


def test_per_task_outcomes_are_what_the_metrics_average(index: CandidateIndex) -> None:
    tasks = index.records(index.pool(REFERENCE_POOL))
    d: Decisions = from_labels("mixed", "baseline", {t.instance_id: ["pa-big", "pc-tiny"] for t in tasks})
    resolved, cost = per_task_outcomes(d, tasks)
    m = compute_metrics(
        d, tasks, single_model_points(tasks, REFERENCE_POOL), task_resample(tasks, REFERENCE_POOL, 0)
    )
    assert sum(resolved) / len(tasks) == pytest.approx(m.resolved_rate, abs=1e-6)
    assert sum(cost) / len(tasks) == pytest.approx(m.mean_cost, abs=1e-6)
    samples = gap_samples(task_resample(tasks, REFERENCE_POOL, 0), resolved, cost)
    ci = m.frontier.gap_ci  # type: ignore[union-attr]
    assert ci is not None and ci == pytest.approx(
        tuple(np.percentile(samples[np.isfinite(samples)], [2.5, 97.5])), abs=1e-6
    )
    # A router answering nothing on most tasks costs less than every model: no mix there, except with
    # the floor, which compares it with the cheapest model (and changes nothing where a mix exists).
    lazy = from_labels(
        "lazy", "baseline", {t.instance_id: ["pc-tiny" if k % 3 else None] for k, t in enumerate(tasks)}
    )
    resample = task_resample(tasks, REFERENCE_POOL, 0)
    plain = gap_samples(resample, *per_task_outcomes(lazy, tasks))
    floor = gap_samples(resample, *per_task_outcomes(lazy, tasks), floor_at_cheapest=True)
    assert np.isnan(plain).all() and np.isfinite(floor).all() and (floor <= 0).all()
    same = gap_samples(resample, resolved, cost, floor_at_cheapest=True)
    assert np.array_equal(same[np.isfinite(samples)], samples[np.isfinite(samples)])


# --- the command ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(index: CandidateIndex, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("files")
    write_candidates(index.candidates, d / "candidates.json")
    write_table(index.table(REFERENCE_POOL, pool_name="ref"), d / "table.json")
    return d / "candidates.json", d / "table.json"


def test_cli_writes_the_report_and_bad_input_exits_2(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cand, table = files
    base = ["evaluate-anypool", "--candidates", str(cand), "--table", str(table), "--quick", "--folds", "3"]
    out = tmp_path / "out"
    assert main([*base, "--groups", "pa,pc", "--pools", "1", "--jobs", "1", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "held out by provider: 2 groups" in text and "local-anypool - local-grpo" in text
    data = json.loads((out / "report.json").read_text())
    # 1 drawn pool per group + the reference table's pool `ref` (it holds a pa and a pc model)
    assert [(p["group"], p["pool"]["name"]) for p in data["pools"]] == [
        ("pa", "pa/drawn-1"),
        ("pa", "ref"),
        ("pc", "pc/drawn-1"),
        ("pc", "ref"),
    ]
    assert (out / "anypool_gaps.png").read_bytes()[:4] == b"\x89PNG"
    bad = tmp_path / "bad"
    for argv, message in [
        (["--groups", "pz"], "no candidate model has provider 'pz'"),
        (["--held-out", "pa-big", "--held-out-by", "model"], "not with --held-out-by"),
        (["--held-out", "nope"], "unknown candidate model(s) nope"),
        (["--pool", "x=pa-big,nope"], "unknown candidate model(s) nope"),
        (["--folds", "1"], "2 <= folds"),
        (["--pool-size", "9"], "pool size must be 2 to 6"),
        (["--candidates", str(tmp_path / "missing.json")], "missing.json"),
    ]:
        assert main([*base, *argv, "-o", str(bad)]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("router-train evaluate-anypool: error:") and message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1
    assert not bad.exists()


def test_held_out_group_must_leave_enough_models_to_train(
    index: CandidateIndex, reference: tuple[OracleTable, TableInfo]
) -> None:
    big = explicit_groups(index, [["pa-big", "pa-small", "pb-big", "pb-mid"]])
    with pytest.raises(EvaluateError, match="2 candidate models remain for training"):
        run(index, reference, groups=big, held_out_by="explicit")


def test_cli_refuses_a_report_that_would_replace_an_input(tmp_path: Path, capsys) -> None:
    from router_oracle.candidates import bundled_candidates_path

    out = tmp_path / "rep"
    out.mkdir()
    inside = out / "report.json"  # the candidates table, where the report would go
    inside.write_bytes(bundled_candidates_path().read_bytes())
    assert main(["evaluate-anypool", "--candidates", str(inside), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{inside}: is also an input (--candidates {inside}); write the output somewhere else" in err
    assert inside.read_bytes() == bundled_candidates_path().read_bytes()
