"""One deploy rule: every place that turns a checkpoint into routes (route, evaluate --checkpoint, feedback's
candidates, replay's static prior) picks the same model per task; a budget or dial is honoured only where
the fit's inner estimate beats the mix by the margin; the overspend the gap cannot see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bash_only import bash_only_table_path

from router_frontier_rl.split import select_tasks
from router_oracle.frontier import ModelPoint
from router_oracle.table_check import load_table
from router_train.cli import main
from router_train.evaluate.curves import CurvePoint, CurveStat
from router_train.evaluate.report import refused_text
from router_train.irt.checkpoint import read_irt
from router_train.offpolicy.from_log import candidate_picks
from router_train.offpolicy.replay import static_picks
from router_train.route import CheckpointSpec, load_router
from router_train.route.kinds import kind_of
from router_train.scoring.default_point import SafeCandidate, SafePoint
from router_train.scoring.safe_point import DIAL_MARGIN, dial_estimate, honoured
from router_train.scoring.vs_mix import gap_at_cost, overspend


# `irt_checkpoint` and `balanced_logreg_checkpoint`: the session's trained routers (train_fixtures.py).
@pytest.fixture
def logreg_checkpoint(balanced_logreg_checkpoint: Path) -> Path:
    return balanced_logreg_checkpoint


def _with_safe_point(path: Path, out: Path, **update: object) -> Path:
    doc = json.loads(path.read_text())
    doc["safe_point"] = {**doc["safe_point"], **update}
    out.write_text(json.dumps(doc))
    return out


def test_every_deployer_picks_what_route_picks(irt_checkpoint: Path, tmp_path: Path) -> None:
    table = load_table(bash_only_table_path())
    tasks = select_tasks(table, "eval", 0.2, 0)[:40]
    texts = list(tasks)
    models = sorted(table.pool.ids)
    stored = json.loads(irt_checkpoint.read_text())["safe_point"]
    native = _with_safe_point(irt_checkpoint, tmp_path / "native.json", choice="router", model=None)
    natively = load_router(CheckpointSpec(checkpoint=native)).route_many(texts, explain=False)
    forced = next(m for m in models if m not in {d.model for d in natively})
    fixed = _with_safe_point(irt_checkpoint, tmp_path / "fixed.json", choice="cheapest", model=forced)
    seen = []
    for path in (irt_checkpoint, fixed, native):
        routed = [
            d.model for d in load_router(CheckpointSpec(checkpoint=path)).route_many(texts, explain=False)
        ]
        judged = kind_of(path).judge(path, table.pool.ids).router.route_many(texts, explain=False)
        picks, _ = candidate_picks(path, texts, models)
        static = static_picks(read_irt(path), tasks, models)
        assert [d.model for d in judged] == routed
        assert [models[j] for j in picks] == routed
        assert [models[j] for j in static] == routed
        seen.append(routed)
    assert seen[1] == [forced] * len(tasks)  # the stored point moves every deployer alike
    assert seen[0] == (seen[2] if stored["choice"] == "router" else [stored["model"]] * len(tasks))


def _candidates(gap: float) -> list[dict[str, object]]:
    return [
        {"name": f"dial:{s / 10:g}", "gap": gap, "cost_per_task": 0.1, "resolved": 0.5, "dial": d}
        for s, d in zip(range(11), [-5.0 + i for i in range(11)], strict=True)
    ]


def test_a_dial_below_the_margin_is_refused_and_says_so(
    logreg_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(logreg_checkpoint.read_text())
    assert any(c.get("dial") is not None for c in doc["safe_point"]["candidates"])  # stored at fit time
    ids = ["astropy__astropy-12907", "django__django-11099", "sympy__sympy-20590"]
    argv = [a for i in ids for a in ("--instance", i)]
    below = _with_safe_point(
        logreg_checkpoint, tmp_path / "below.json", candidates=_candidates(DIAL_MARGIN / 2)
    )
    above = _with_safe_point(
        logreg_checkpoint, tmp_path / "above.json", candidates=_candidates(DIAL_MARGIN * 2)
    )
    older = _with_safe_point(logreg_checkpoint, tmp_path / "older.json", candidates=[])
    # The margin is the one the checkpoint stores (its kind's): the same estimate passes a lower one.
    lowered = _with_safe_point(
        logreg_checkpoint,
        tmp_path / "lowered.json",
        candidates=_candidates(DIAL_MARGIN / 2),
        dial_margin=DIAL_MARGIN / 4,
    )

    def routes(path: Path, *flags: str) -> tuple[list[dict[str, object]], str]:
        capsys.readouterr()
        assert main(["route", "--checkpoint", str(path), *argv, "--quiet", *flags]) == 0
        out = capsys.readouterr()
        return [json.loads(line) for line in out.out.splitlines()], out.err

    default, _ = routes(below)
    asked, _ = routes(below, "--dial", "0.5", "--no-safe-point")
    refused, err = routes(below, "--dial", "0.5")
    # Refused: the floor (the mix at the dial's expected cost), not the default point.
    assert all(d["chooser"] == "floor" and "routing at the floor" in str(d["reason"]) for d in refused)
    assert all("--dial 0.5 refused" in str(d["reason"]) for d in refused)
    assert all("chooser" not in d for d in default)
    assert sum("refused" in line for line in err.splitlines()) == 1
    for path in (above, older, lowered):
        honoured_routes, err = routes(path, "--dial", "0.5")
        assert [d["model"] for d in honoured_routes] == [d["model"] for d in asked]
        assert "refused" not in err and all(d.get("reason") is None for d in honoured_routes)
        assert all(d["chooser"] == "router" for d in honoured_routes)


def test_dial_estimate_takes_the_worse_neighbour() -> None:
    def cand(name: str, gap: float, dial: float | None) -> SafeCandidate:
        return SafeCandidate(name=name, gap=gap, cost_per_task=0.1, resolved=0.5, dial=dial)

    point = SafePoint(
        choice="router",
        inner_folds=5,
        candidates=[cand("router", 0.02, None), cand("dial:0", 0.0, 3.0), cand("dial:1", 0.03, 1.0)],
    )

    def name_at(dial: float) -> str | None:
        estimate = dial_estimate(point, dial)
        return None if estimate is None else estimate.name

    assert name_at(1.0) == "dial:1"
    assert name_at(2.0) == "dial:0"  # between the two: the worse one
    assert name_at(-9.0) == "dial:1" and name_at(9.0) == "dial:0"
    assert honoured(cand("x", DIAL_MARGIN + 1e-4, 0.0), DIAL_MARGIN)
    assert not honoured(cand("x", DIAL_MARGIN, 0.0), DIAL_MARGIN)
    assert dial_estimate(SafePoint(choice="router", inner_folds=5), 1.0) is None


def test_overspend_sees_a_router_paying_more_for_the_same_rate() -> None:
    # Two models tie on resolved rate at 3.5x apart: the frontier is one point.
    singles = [
        ModelPoint(model="cheap", cost=0.1, resolved=0.6),
        ModelPoint(model="dear", cost=0.35, resolved=0.6),
    ]
    assert gap_at_cost(0.6, 0.35, singles) == pytest.approx(0.0)
    assert overspend(0.6, 0.35, singles) == pytest.approx(0.25)
    assert overspend(0.6, 0.1, singles) == 0.0
    assert overspend(0.7, 0.35, singles) is None


def test_the_curve_table_marks_refused_points() -> None:
    stat = CurveStat(mean=0.0, low=None, high=None)

    def pt(share: float, refused: int | None, fits: int | None) -> CurvePoint:
        return CurvePoint(
            target_share=share,
            target_cost=0.1,
            dial=0.0,
            cost_per_task=0.1,
            resolved=0.5,
            gap_vs_mix=0.0,
            pgr=stat,
            refused_fits=refused,
            fits=fits,
        )

    assert refused_text([pt(0.0, 5, 5), pt(0.5, 2, 5), pt(1.0, 3, 5)]) == "0, 1"
    assert refused_text([pt(0.0, 0, 5)]) == "none"
    assert refused_text([pt(0.0, None, None)]) == "n/a"
