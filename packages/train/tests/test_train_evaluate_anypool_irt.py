"""`router-train evaluate-anypool --irt` (the `irt` row) and `--anypool-irt` (the any-pool router with IRT
inputs): the row and its curve appear, its routes are the IRT router's, a test task's outcomes enter no
fit of its partition (fold spy), and the CLI flags; on the synthetic candidates of
`test_train_evaluate_anypool`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_train_evaluate_anypool import FAST_ANY, FAST_FIXED, REFERENCE_POOL, synthetic

from router_oracle.candidates import write_candidates
from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import matrix_of
from router_oracle.table import write_table
from router_train.cli import main
from router_train.evaluate.design import fold_partitions
from router_train.evaluate_anypool import (
    evaluate_any_pool,
    evaluation_pools,
    held_out_groups,
    render_terminal,
)
from router_train.evaluate_anypool.config import AnyPoolEvalConfig
from router_train.evaluate_anypool.fits import Routed, fit_all
from router_train.irt.fitter import IRT_ROUTER_NAME as IRT_NAME
from router_train.irt.router import IrtConfig, fit_irt_router
from router_train.irt.shared_fit import for_pool
from router_train.local.config import FeatureConfig

SMALL = IrtConfig(dims=(0, 1), alphas=(3.0,), temperatures=(1.0, 2.0), inner_folds=3)
"""A small search, so each fit takes well under a second."""
ANY_IRT = FAST_ANY.model_copy(update={"features": FeatureConfig(irt=True)})


def _fit(index: CandidateIndex, *, anypool_irt: bool = False) -> tuple[Routed, list, list]:  # type: ignore[type-arg]
    """Every fit of 3 folds, 2 groups with one drawn pool each, the irt row on (small grids)."""
    table, info = synthetic()[1]
    groups = held_out_groups(index, "provider", ["pa", "pc"])
    pools = [evaluation_pools(index, g, drawn=1, size=3, seed=0) for g in groups]
    partitions = fold_partitions(table, info.file, 3, [0])
    routed = fit_all(
        index,
        partitions,
        groups,
        pools,
        AnyPoolEvalConfig(
            anypool_config=ANY_IRT if anypool_irt else FAST_ANY,
            fixed_config=FAST_FIXED,
            seed=0,
            irt=True,
            irt_config=SMALL,
        ),
    )
    return routed, partitions, [p for group_pools in pools for p in group_pools]


def test_irt_routes_are_the_irt_routers() -> None:
    index = synthetic()[0]
    routed, partitions, pools = _fit(index)
    matrix = matrix_of(index.candidates, origin=index.label)
    assert sorted(routed.shared[IRT_NAME]) == sorted({tuple(p.ids) for p in pools})
    for pi, part in enumerate(partitions):
        train_ids = [t.instance_id for t in part.train]
        test_ids = [t.instance_id for t in part.test]
        first = index.pool(pools[0].ids)
        # The first pool's routes are exactly the IRT router fitted for that pool on the train tasks.
        own = fit_irt_router(index.records(first, train_ids), matrix, first, config=SMALL, seed=0)
        test = index.records(first, test_ids)
        assert [routed.shared[IRT_NAME][tuple(first.ids)][0][t] for t in test_ids] == own.route(test, first)
        for p in pools:
            pool = index.pool(p.ids)
            mine = for_pool(own, index.records(pool, train_ids), pool, SMALL)
            test = index.records(pool, test_ids)
            assert [routed.shared[IRT_NAME][tuple(p.ids)][0][t] for t in test_ids] == mine.route(test, pool)
            scores = routed.shared_scores[IRT_NAME][tuple(p.ids)][pi]
            assert scores.name == IRT_NAME and scores.test.shape == (len(test_ids), len(p.ids))
            assert scores.probabilities is not None and np.isfinite(scores.probabilities).all()


def _scrambled(index: CandidateIndex, task_ids: set[str]) -> CandidateIndex:
    """`index` with every run's outcome and cost on `task_ids` redrawn."""
    rng = np.random.default_rng(3)
    tasks = []
    for t in index.candidates.tasks:
        if t.instance_id in task_ids:
            n = len(t.resolved)
            t = t.model_copy(
                update={
                    "resolved": [bool(v) for v in rng.random(n) < 0.5],
                    "cost": [float(v) for v in rng.uniform(0.0, 3.0, n)],
                }
            )
        tasks.append(t)
    return CandidateIndex(index.candidates.model_copy(update={"tasks": tasks}), label=index.label)


def test_fold_spy_a_test_tasks_outcomes_enter_no_fit_of_its_partition() -> None:
    index = synthetic()[0]
    honest, partitions, _ = _fit(index, anypool_irt=True)
    test_ids = {t.instance_id for t in partitions[0].test}
    spied, _, _ = _fit(_scrambled(index, test_ids), anypool_irt=True)

    def on_fold(picks: list[dict[str, str]]) -> dict[str, str]:
        return {t: m for t, m in picks[0].items() if t in test_ids}

    for key, picks in honest.shared[IRT_NAME].items():
        assert on_fold(picks) == on_fold(spied.shared[IRT_NAME][key])
        assert (
            honest.shared_scores[IRT_NAME][key][0].test.tobytes()
            == spied.shared_scores[IRT_NAME][key][0].test.tobytes()
        )
    for gk, any_picks in honest.anypool.items():  # the any-pool router with IRT inputs
        assert on_fold(any_picks) == on_fold(spied.anypool[gk])
        assert honest.anypool_scores[gk][0].test.tobytes() == spied.anypool_scores[gk][0].test.tobytes()
    # The other folds train on those tasks: their fits do move.
    moved = [
        key
        for key, picks in honest.shared[IRT_NAME].items()
        if {t: m for t, m in picks[0].items() if t not in test_ids}
        != {t: m for t, m in spied.shared[IRT_NAME][key][0].items() if t not in test_ids}
        or any(
            honest.shared_scores[IRT_NAME][key][pi].test.tobytes()
            != spied.shared_scores[IRT_NAME][key][pi].test.tobytes()
            for pi in (1, 2)
        )
    ]
    assert moved


def test_the_irt_row_is_in_the_report_beside_the_others() -> None:
    index, (table, info) = synthetic()
    groups = held_out_groups(index, "provider", ["pa", "pc"])
    kw: dict[str, Any] = {
        "drawn_pools": 1,
        "folds": 3,
        "fold_seeds": [0],
        "anypool_config": FAST_ANY,
        "fixed_config": FAST_FIXED,
    }
    report = evaluate_any_pool(
        index,
        table,
        info,
        groups,
        AnyPoolEvalConfig(held_out_by="provider", irt=True, irt_config=SMALL, **kw),
    )
    names = [a.router for a in report.averages]
    assert names == ["local-anypool", "local-grpo", "tfidf-logreg(balanced)", IRT_NAME, "oracle"]
    assert [d.reference for d in report.differences] == ["local-grpo", "tfidf-logreg(balanced)", IRT_NAME]
    assert all(IRT_NAME in g.averages[3].router for g in report.by_group)
    for p in report.pools:
        assert IRT_NAME in p.floored_gaps and IRT_NAME in p.held_out_pick_share
        assert IRT_NAME in [r.name for r in p.evaluation.routers]
    assert any(IRT_NAME in p.curves for p in report.pools)
    assert any("IRT routers fitted" in n for n in report.notes)
    assert f"local-anypool - {IRT_NAME}" in render_terminal(report)
    plain = evaluate_any_pool(index, table, info, groups, AnyPoolEvalConfig(held_out_by="provider", **kw))
    assert [a.router for a in plain.averages] == [
        "local-anypool",
        "local-grpo",
        "tfidf-logreg(balanced)",
        "oracle",
    ]
    assert not any("IRT" in n for n in plain.notes) and not plain.design.anypool.features.irt
    assert all(IRT_NAME not in p.floored_gaps and IRT_NAME not in p.curves for p in plain.pools)


def test_cli_irt_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = synthetic()[0]
    cand, table = tmp_path / "candidates.json", tmp_path / "table.json"
    write_candidates(index.candidates, cand)
    write_table(index.table(REFERENCE_POOL, pool_name="ref"), table)
    base = ["evaluate-anypool", "--candidates", str(cand), "--table", str(table), "--quick", "--folds", "3"]
    out = tmp_path / "out"
    argv = [*base, "--groups", "pc", "--pools", "1", "--jobs", "1", "--irt", "--anypool-irt", "-o", str(out)]
    assert main(argv) == 0
    assert f"local-anypool - {IRT_NAME}" in capsys.readouterr().out
    data = json.loads((out / "report.json").read_text())
    assert [a["router"] for a in data["averages"]][3] == IRT_NAME
    assert data["design"]["anypool"]["features"]["irt"] is True
