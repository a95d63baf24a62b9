"""The floor (issue 53 item 2): at a budget or quality the mix of single models is what a router falls
back to, never the cheapest model alone; each task's model is a fixed function of its key; every decision
says who chose and why; a refusal states real numbers or says there is no estimate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router_oracle.frontier import ModelPoint
from router_train.cli import main
from router_train.scoring.floor import FloorMix, Objective, floor_mix, floor_pick, parse_quality
from router_train.scoring.safe_point import NO_GAP

POINTS = [
    ModelPoint(model="cheap", cost=0.4, resolved=0.62),
    ModelPoint(model="middling", cost=0.9, resolved=0.64),  # under the cheap-dear chord: not on the frontier
    ModelPoint(model="dear", cost=1.3, resolved=0.82),
]
KEYS = [f"task-{i}" for i in range(500)]


def test_the_floor_is_the_frontier_mix_at_the_budget() -> None:
    mix = floor_mix(POINTS, Objective(budget=1.1))
    assert mix.models == ["cheap", "dear"] and mix.note is None
    share = (1.1 - 0.4) / (1.3 - 0.4)
    assert mix.shares == pytest.approx([1 - share, share], abs=1e-6)
    assert mix.cost == pytest.approx(1.1) and mix.resolved == pytest.approx(0.62 + share * 0.2)
    low = floor_mix(POINTS, Objective(budget=0.1))
    assert low.models == ["cheap"] and low.note is not None and "below the cheapest model's cost" in low.note
    for budget in (1.3, 5.0):  # at or above the dearest model: the dearest (on the frontier)
        assert floor_mix(POINTS, Objective(budget=budget)).models == ["dear"]


def test_the_floor_at_a_quality_target() -> None:
    mix = floor_mix(POINTS, Objective(quality="0.72"))
    assert mix.models == ["cheap", "dear"] and mix.resolved == pytest.approx(0.72)
    rel = floor_mix(POINTS, Objective(quality="best-0.02"))
    assert rel.resolved == pytest.approx(0.80)
    top = floor_mix(POINTS, Objective(quality="0.95"))
    assert top.models == ["dear"] and top.note is not None and "above the best model's rate" in top.note
    assert parse_quality("best-0.02") == (None, 0.02) and parse_quality("0.78") == (0.78, None)
    for bad in ("1.5", "best+0.1", "seventy", "0"):
        with pytest.raises(ValueError, match="quality"):
            parse_quality(bad)


def test_a_task_keeps_its_model_and_the_share_is_realised() -> None:
    mix = floor_mix(POINTS, Objective(budget=1.0))
    picks = [floor_pick(mix, k) for k in KEYS]
    assert picks == [floor_pick(mix, k) for k in KEYS]  # a fixed function of the key
    realised = picks.count("dear") / len(KEYS)
    assert abs(realised - mix.shares[1]) < 0.04
    # Raising the budget only moves a task to a dearer model: spend is monotone task by task.
    cost = {p.model: p.cost for p in POINTS}
    budgets = [0.4 + 0.1 * i for i in range(10)]
    per_task = [[cost[floor_pick(floor_mix(POINTS, Objective(budget=b)), k)] for b in budgets] for k in KEYS]
    assert all(row == sorted(row) for row in per_task)


def test_a_one_model_floor_picks_it() -> None:
    mix = FloorMix(models=["only"], shares=[1.0], cost=1.0, resolved=0.5)
    assert {floor_pick(mix, k) for k in KEYS[:50]} == {"only"}


def _with_candidates(path: Path, out: Path, gap: float) -> Path:
    doc = json.loads(path.read_text())
    cands = [
        {"name": f"dial:{s / 10:g}", "gap": gap, "cost_per_task": 0.1, "resolved": 0.5, "dial": -5.0 + s}
        for s in range(11)
    ]
    doc["safe_point"] = {**doc["safe_point"], "candidates": cands}
    out.write_text(json.dumps(doc))
    return out


def _route(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[list[dict[str, object]], str]:
    capsys.readouterr()
    assert main(["route", "--quiet", *argv]) == 0
    cap = capsys.readouterr()
    return [json.loads(line) for line in cap.out.splitlines()], cap.err


def test_a_refused_budget_routes_at_the_mix_not_the_cheapest_model(
    balanced_logreg_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Known on main dabf896: a refused budget sent every task to the cheapest model; now the floor."""
    refused = _with_candidates(balanced_logreg_checkpoint, tmp_path / "refused.json", 0.0)
    cal = json.loads(refused.read_text())["calibration"]
    costs = sorted(cal["model_costs"])
    budget = (costs[0] + costs[-1]) / 2
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"instance_id": k, "repo": "o/r", "problem_statement": f"bug {k}"}) + "\n"
            for k in KEYS
        )
    )
    decisions, err = _route(
        capsys, "--checkpoint", str(refused), "--tasks", str(tasks), "--budget", f"{budget:g}"
    )
    assert {d["chooser"] for d in decisions} == {"floor"}
    assert len({d["model"] for d in decisions}) == 2  # the mix's two models, not the cheapest alone
    assert "+0.00 points vs the mix, not above" in err and "routing at the floor" in err
    by_cost = dict(zip(cal["model_ids"], cal["model_costs"], strict=True))
    spent = sum(by_cost[str(d["model"])] for d in decisions) / len(decisions)
    assert abs(spent - budget) / budget < 0.05
    # Routing the same tasks again (a restart, another replica) gives the same models.
    again, _ = _route(capsys, "--checkpoint", str(refused), "--tasks", str(tasks), "--budget", f"{budget:g}")
    assert [d["model"] for d in again] == [d["model"] for d in decisions]
    # Without an objective: the default point, byte for byte as before (no `chooser`).
    default, err = _route(capsys, "--checkpoint", str(refused), "--tasks", str(tasks))
    assert all("chooser" not in d for d in default) and "no --budget or --quality given" in err


def test_a_refusal_without_an_estimate_says_so(
    balanced_logreg_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An undefined gap (stored as NO_GAP) printed as -100.00 points on main dabf896."""
    none = _with_candidates(balanced_logreg_checkpoint, tmp_path / "none.json", NO_GAP)
    decisions, err = _route(
        capsys, "--checkpoint", str(none), "--instance", "astropy__astropy-12907", "--budget", "0.6"
    )
    assert "-100.00" not in err and "no inner estimate of the router there" in err
    assert decisions[0]["chooser"] == "floor"


def test_an_honoured_budget_says_the_router_chose(
    balanced_logreg_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backed = _with_candidates(balanced_logreg_checkpoint, tmp_path / "backed.json", 0.5)
    decisions, err = _route(
        capsys, "--checkpoint", str(backed), "--instance", "astropy__astropy-12907", "--budget", "0.6"
    )
    assert decisions[0]["chooser"] == "router" and "the router's point" in str(decisions[0]["reason"])
    assert "operating point: dial" in err


def test_serve_config_router_table_takes_quality(balanced_logreg_checkpoint: Path, tmp_path: Path) -> None:
    from router_train.route import CheckpointSpec
    from router_train.serve.config import ServeConfigError, read_config

    path = tmp_path / "serve.toml"
    up = '[upstreams.m]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    for value, expected in (('"best-0.02"', "best-0.02"), ("0.78", "0.78")):
        path.write_text(f'[router]\ncheckpoint = "{balanced_logreg_checkpoint}"\nquality = {value}\n{up}')
        router = read_config(path).router
        assert isinstance(router, CheckpointSpec) and router.quality == expected
    path.write_text(f'[router]\ncheckpoint = "{balanced_logreg_checkpoint}"\nquality = "most"\n{up}')
    with pytest.raises(ServeConfigError, match="quality"):
        read_config(path)
