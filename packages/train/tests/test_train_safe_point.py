"""Do no harm (`scoring.safe_point`): a router whose routing does not pay on its train tasks falls back to
the cheapest model, one whose routing pays keeps it; the choice reads the fit's train tasks only (a fold
spy); checkpoints carry the chosen point and `route` honours it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evaluate_tables import make_table

from router_frontier_rl import bundled_table_path
from router_oracle.table import ModelOutcome, RunOutcome, TaskRecord
from router_oracle.table_check import load_table
from router_train.checkpoint_io import save_checkpoint
from router_train.fit_source import FitSource
from router_train.fitting import FITS, FitRequest, fitters_for
from router_train.fitting.baseline_fit import fit_baseline
from router_train.local.config import LocalTrainConfig
from router_train.route.load import load_router
from router_train.route.spec import CheckpointSpec
from router_train.scoring.baseline_fitter import BaselineFitter
from router_train.scoring.decisions import Decisions, from_labels
from router_train.scoring.dial import RouterScores
from router_train.scoring.safe_point import (
    CLASSIFIER_MARGINS,
    DIAL_SHARES,
    IRT_MARGINS,
    LOCAL_MARGINS,
    Margins,
    SafePoint,
    SafePointFitter,
    safe_points,
)

IDS = ["big", "mid", "small"]
ORDER = {m: j for j, m in enumerate(IDS)}


def _oracle_like(helpful: bool):  # type: ignore[no-untyped-def]
    """A stub fitter of one router `stub` that sees each task's outcomes (a unit test of the rule, not a
    router): `helpful` routes to the cheapest model that resolves the task (routing pays); otherwise to
    the most expensive model exactly where the cheapest one resolves (routing costs and loses)."""

    def pick(t: TaskRecord) -> str:
        ok = [m for m in reversed(IDS) if t.per_model[m].resolve_rate > 0]
        if helpful:
            return ok[0] if ok else "small"
        return "big" if t.per_model["small"].resolve_rate > 0 else "small"

    def fit_scored(
        train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        def scores(tasks: Sequence[TaskRecord]) -> np.ndarray:
            out = np.zeros((len(tasks), len(IDS)))
            for i, t in enumerate(tasks):
                out[i, ORDER[pick(t)]] = 1.0
            return out

        picks: dict[str, list[str | None]] = {t.instance_id: [pick(t)] for t in test}
        return [from_labels("stub", "local", picks)], [RouterScores("stub", IDS, scores(train), scores(test))]

    return fit_scored


def _point(helpful: bool, tasks: Sequence[TaskRecord], margins: Margins = CLASSIFIER_MARGINS) -> SafePoint:
    fit = _oracle_like(helpful)
    _, scores = fit(tasks, tasks[:1], 0)
    return safe_points(fit, tasks, IDS, 0, scores, margins)["stub"]


def test_falls_back_where_routing_cannot_pay() -> None:
    tasks = make_table(n=120).tasks
    point = _point(False, tasks)
    assert point.choice == "cheapest" and point.model == "small"
    assert point.inner_folds == 5
    by_name = {c.name: c for c in point.candidates}
    assert by_name["router"].gap < 0 and by_name["cheapest"].gap == pytest.approx(0.0, abs=1e-9)


def test_keeps_the_router_where_routing_pays() -> None:
    tasks = make_table(n=120).tasks
    point = _point(True, tasks)
    assert point.choice == "router"
    # Every curve dial point is estimated (and carries this fit's dial for it), never the default.
    dials = [f"dial:{s:g}" for s in DIAL_SHARES]
    assert [c.name for c in point.candidates] == ["router", *dials, "cheapest"]
    assert all(c.dial is not None for c in point.candidates if c.name.startswith("dial:"))
    defaults = [c for c in point.candidates if not c.name.startswith("dial:")]
    best = max(defaults, key=lambda c: c.gap)
    assert best.name == "router" and best.gap > 0.05


def test_the_margin_is_the_kinds_and_stored_with_the_point() -> None:
    """A router whose estimated gain is above one kind's margin and below another's keeps its route under
    the first and falls back under the second; each point stores the margins it was chosen by (a budget
    on it is later held to the stored dial margin)."""
    tasks = make_table(n=120).tasks
    gain = next(c.gap for c in _point(True, tasks).candidates if c.name == "router")
    low, high = Margins(default=gain / 2, dial=0.001), Margins(default=gain * 2, dial=0.002)
    kept, dropped = _point(True, tasks, low), _point(True, tasks, high)
    assert kept.choice == "router" and dropped.choice == "cheapest" and dropped.model == "small"
    assert (kept.margin, kept.dial_margin) == (low.default, low.dial)
    assert (dropped.margin, dropped.dial_margin) == (high.default, high.dial)
    assert kept.candidates == dropped.candidates  # the same estimates, another rule


def test_evaluate_holds_each_kind_to_its_own_margins() -> None:
    """`fitters_for` wraps each kind's fitters with that kind's margins (`Fit.margins`): the classifiers',
    the local GRPO router's and the IRT router's differ, as measured (docs/evaluate.md)."""
    assert len({CLASSIFIER_MARGINS, LOCAL_MARGINS, IRT_MARGINS}) == 3
    by_kind = {k.name: k.margins for k in FITS.values()}
    assert by_kind["baseline"] == CLASSIFIER_MARGINS
    assert by_kind["local"] == LOCAL_MARGINS and by_kind["irt"] == IRT_MARGINS
    table = load_table(bundled_table_path())  # the IRT fit reads its pool's bundled results matrix
    options = {"baseline": True, "local": [("local-grpo", LocalTrainConfig())], "irt": True}
    fitters = fitters_for(FitRequest(table, table.tasks, options))
    margins = [getattr(f, "margins", None) for f in fitters]
    assert margins == [CLASSIFIER_MARGINS, LOCAL_MARGINS, IRT_MARGINS]  # registry order, references first


def test_too_few_tasks_keep_the_native_point() -> None:
    tasks = make_table(n=30).tasks
    assert _point(False, tasks).choice == "router"


def _redrawn(tasks: Sequence[TaskRecord], seed: int) -> list[TaskRecord]:
    """`tasks` with every outcome and cost redrawn at random (their text and labels kept)."""
    rng = random.Random(seed)
    out = []
    for t in tasks:
        per = {}
        for m, o in t.per_model.items():
            ok, cost = rng.random() < 0.5, rng.uniform(0.01, 2.0)
            per[m] = ModelOutcome(
                resolve_rate=float(ok),
                cost=cost,
                runs=[RunOutcome(run=o.runs[0].run, resolved=ok, cost=cost)],
            )
        out.append(t.model_copy(update={"per_model": per}))
    return out


def test_fold_spy_the_choice_reads_train_tasks_only() -> None:
    """Every inner fit trains and routes inside the outer train tasks; redrawing the outer test tasks'
    outcomes changes no decision and no chosen point, redrawing the train tasks' does."""
    table = make_table(n=120)
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)
    train, test = tasks[:90], tasks[90:]
    train_ids = {t.instance_id for t in train}
    seen: list[tuple[set[str], set[str]]] = []
    inner = BaselineFitter(table.pool.ids)

    class Spy:
        def fit_scored(
            self, tr: Sequence[TaskRecord], te: Sequence[TaskRecord], seed: int
        ) -> tuple[list[Decisions], list[RouterScores]]:
            seen.append(({t.instance_id for t in tr}, {t.instance_id for t in te}))
            return inner.fit_scored(tr, te, seed)

    fitter = SafePointFitter(Spy(), tuple(table.pool.ids), CLASSIFIER_MARGINS)
    decisions, scores = fitter.fit_scored(train, test, 0)
    assert len(seen) == 6  # the fit itself, then 5 inner folds
    for tr, te in seen[1:]:
        assert tr <= train_ids and te <= train_ids and not tr & te
    assert all(s.safe_point is not None for s in scores)

    again, again_scores = SafePointFitter(inner, tuple(table.pool.ids), CLASSIFIER_MARGINS).fit_scored(
        train, _redrawn(test, 3), 0
    )
    assert [d.choices for d in again] == [d.choices for d in decisions]
    assert [s.safe_point for s in again_scores] == [s.safe_point for s in scores]
    moved = SafePointFitter(inner, tuple(table.pool.ids), CLASSIFIER_MARGINS).fit_scored(
        _redrawn(train, 4), test, 0
    )[1]
    assert [s.safe_point for s in moved] != [s.safe_point for s in scores]


def _source() -> FitSource:
    return FitSource(table="t.json", table_sha256="0" * 64, split="all", eval_fraction=0.2, split_seed=0)


def test_checkpoint_carries_the_point_evaluate_chooses_and_route_honours_it(tmp_path: Path) -> None:
    table = make_table(n=100)
    train = sorted(table.tasks, key=lambda t: t.instance_id)
    name = "tfidf-logreg(balanced)"
    ckpt = fit_baseline(name, train, table.pool.ids, 0, _source())
    assert ckpt.safe_point is not None
    # The same rule as evaluate's fit on the same train tasks.
    scores = SafePointFitter(
        BaselineFitter(table.pool.ids), tuple(table.pool.ids), CLASSIFIER_MARGINS
    ).fit_scored(train, train[:3], 0)[1]
    assert ckpt.safe_point == next(s.safe_point for s in scores if s.name == name)

    tasks = list(train[:30])

    def routes(point: SafePoint | None, **spec: Any) -> list[str | None]:
        path = tmp_path / "ckpt.json"
        save_checkpoint(ckpt.model_copy(update={"safe_point": point}), path)
        return [d.model for d in load_router(CheckpointSpec(checkpoint=path, **spec)).route_many(tasks)]

    native = routes(None)
    assert len(set(native)) > 1  # it routes to several models natively
    cheapest = SafePoint(choice="cheapest", model="small", inner_folds=5)
    assert routes(cheapest) == ["small"] * 30
    assert routes(cheapest, no_safe_point=True) == native
    assert routes(cheapest, dial=0.0) == native  # a budget or dial replaces the default point
    assert routes(SafePoint(choice="router", inner_folds=5)) == native
    dial = SafePoint(choice="dial", dial=-3.0, share=0.5, inner_folds=5)
    assert routes(dial) == routes(None, dial=-3.0)
