"""The floor learned on the team's traffic, inside serve (issue 53 items 3 and 4, serve side): serve's app,
driven task by task with chat requests and feedback posts, assigns floor decisions exactly as replay's
learning arm (`offpolicy.floor_replay.learning_stream`) does on the same tasks and outcomes; a model
that is 4x dearer here than in the table leaves the mix without a refit; the decision records the
posterior and the learner's propensity; /health and /metrics say what serve serves.

A stub scorer at the floor (its point refused, `route.floor.floor_point`: the real code path), stub
upstreams, Starlette's TestClient (the app's lifespan in-process) and a SQLite store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from floor_stubs import BUDGET, MODELS, PRIOR, TOKEN, TOKEN_ENV, drive, floor_router, traffic, write_config
from serve_stubs import running_upstreams
from starlette.testclient import TestClient

from router_train.dashboard.frontier import frontier
from router_train.dashboard.frontier_page import headline, section
from router_train.offpolicy.floor_replay import learning_stream
from router_train.route import CheckpointSpec
from router_train.scoring.floor import Objective
from router_train.serve import read_config
from router_train.serve.export import ServeRecords
from router_train.serve.floor_choice import objective_words
from router_train.serve.records import DecisionRecord, OutcomeRecord
from router_train.serve_app import build_app
from router_train.serve_floor import learner_from


@pytest.fixture(scope="module")
def stubs() -> Iterator[Any]:
    with running_upstreams(MODELS) as running:
        yield running


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def decisions(config: Path) -> list[DecisionRecord]:
    lines = (config.parent / "state" / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    return [DecisionRecord.model_validate_json(x) for x in lines if '"event":"decision"' in x]


def test_serve_deploys_exactly_what_replays_learning_arm_would(tmp_path: Path, stubs: Any) -> None:
    objective = Objective(budget=BUDGET)
    tr = traffic(120, [0.6, 0.7, 0.8], [0.4, 1.0, 2.0], seed=5)  # this harness doubles every cost
    config = write_config(tmp_path, stubs, {"budget": BUDGET})
    with TestClient(build_app(read_config(config), floor_router(objective))) as client:
        served = drive(client, tr)
        health = client.get("/health").json()
        metrics = client.get("/metrics").text
    replayed, propensity = learning_stream(tr, np.arange(len(tr.keys)), PRIOR, objective)
    assert served == [MODELS[j] for j in replayed]  # task by task the same picks
    records = decisions(config)
    assert [r.model for r in records] == served
    assert [r.propensity for r in records] == pytest.approx(list(propensity))
    assert all(r.chooser == "floor" and r.posterior is not None for r in records)
    last = records[-1].posterior
    assert last is not None and sum(last["observed"]) == len(tr.keys) - 1 and last["scale"] > 1.3
    # the learner moved off the table's mix: more than one model served, not the table's split
    assert len(set(served)) >= 2
    assert health["objective"] == "--budget 0.6"
    assert 'chooser="floor"' in metrics


def test_a_model_4x_dearer_here_than_in_the_table_leaves_the_mix(tmp_path: Path, stubs: Any) -> None:
    # `mid` costs 4x its table price on this traffic (2.0 vs 0.5) and resolves no better: past the
    # first outcomes it must stop being served, with no refit and the same checkpoint.
    objective = Objective(budget=BUDGET)
    tr = traffic(160, [0.6, 0.7, 0.8], [0.2, 2.0, 1.0], seed=1)
    config = write_config(tmp_path, stubs, {"budget": BUDGET})
    with TestClient(build_app(read_config(config), floor_router(objective))) as client:
        served = drive(client, tr)
    early, late = served[:40], served[-80:]
    table_mid = learner_from(PRIOR, objective, []).assign("x").posterior.mix
    assert "mid" in table_mid.models  # the table's mix at the budget uses `mid`
    assert early.count("mid") > 0
    assert late.count("mid") <= 4, late.count("mid")


def test_the_learner_skips_unpriced_outcomes_and_reads_them_in_one_order() -> None:
    def outcome(task: str, time: str, model: str, cost: float | None) -> OutcomeRecord:
        return OutcomeRecord(
            time=time, task=task, instance_id=task, model=model, resolved=True, cost=cost
        )

    rows = [
        outcome("b", "2026-01-01T00:00:01.000Z", "dear", 1.5),
        outcome("a", "2026-01-01T00:00:01.000Z", "cheap", 0.3),
        outcome("c", "2026-01-01T00:00:00.000Z", "mid", None),  # cost unknown: skipped
        outcome("d", "2026-01-01T00:00:02.000Z", "gone", 0.1),  # model left the pool: skipped
    ]
    objective = Objective(budget=BUDGET)
    one, other = learner_from(PRIOR, objective, rows), learner_from(PRIOR, objective, rows[::-1])
    assert one.tasks == 2 and one.spent == pytest.approx(1.8)
    assert one.assign("k") == other.assign("k")  # replicas reading the same rows assign alike


def _served(rows: list[tuple[str, bool, float]]) -> ServeRecords:
    """Outcomes of served tasks (model, resolved, cost), a second apart."""
    outcomes = {}
    for i, (model, resolved, cost) in enumerate(rows):
        at = f"2026-12-01T09:{i // 60:02d}:{i % 60:02d}.000Z"
        outcomes[f"{i:064x}"] = OutcomeRecord(
            time=at, task=f"{i:064x}", instance_id=f"t{i}", model=model, resolved=resolved, cost=cost
        )
    return ServeRecords({}, outcomes)


def test_the_frontier_headline_claims_a_regret_only_when_its_interval_excludes_zero() -> None:
    # `cheap` at $0.2 resolving 60%, `dear` at $1.0 resolving 90%. Served 50/50: spend $0.6, rate 75%,
    # exactly the mix at that spend: no claim. Served by `mid`, costing as much and resolving 50%: the
    # mix at $0.6 resolves 75%, 25 points more, and the interval excludes zero: claimed.
    base = [("cheap", i % 5 < 3, 0.2) for i in range(100)] + [("dear", i % 10 < 9, 1.0) for i in range(100)]
    even = frontier(_served(base), MODELS, Objective(budget=BUDGET))
    assert even.regret is not None and abs(even.regret.value) < 1e-9 and not even.regret.excludes_zero
    assert 'data-claim="false"' in headline(even) and "not told apart" in headline(even)
    worse = base[:40] + base[100:140] + [("mid", i % 2 == 0, 0.6) for i in range(300)]
    bad = frontier(_served(worse), MODELS, Objective(budget=BUDGET))
    assert bad.regret is not None and bad.regret.low > 0.1
    assert 'data-claim="true"' in headline(bad) and "points fewer" in headline(bad)
    # Computed from the records alone: the same section, byte for byte, on any replica.
    again = frontier(_served(worse), MODELS, Objective(budget=BUDGET))
    assert section(again, {}) == section(bad, {})
    assert frontier(_served([]), MODELS, None).regret is None


def test_explore_applies_on_top_of_the_learned_floor(tmp_path: Path, stubs: Any) -> None:
    # With [explore] rate 0.5: each decision's router_model is the learner's pick over the outcomes
    # before it, and its propensity (1 - rate) x [served = that pick] x the learner's + rate / pool size.
    objective = Objective(budget=BUDGET)
    tr = traffic(40, [0.6, 0.7, 0.8], [0.4, 1.0, 2.0], seed=2)
    config = write_config(tmp_path, stubs, {"budget": BUDGET}, explore={"rate": 0.5, "seed": 7})
    with TestClient(build_app(read_config(config), floor_router(objective))) as client:
        drive(client, tr)
    records = decisions(config)
    outcomes: list[OutcomeRecord] = []
    for i, r in enumerate(records):
        a = learner_from(PRIOR, objective, outcomes).assign(r.task)
        assert r.router_model == a.model and r.chooser == "floor"
        assert r.posterior == a.posterior.model_dump(mode="json")
        assert r.propensity == pytest.approx(0.5 * (r.model == a.model) * a.propensity + 0.5 / 3)
        assert r.model is not None
        j = MODELS.index(r.model)
        outcome = OutcomeRecord(
            time=f"2026-01-01T00:00:{i:02d}.000Z",
            task=r.task,
            instance_id=r.instance_id,
            model=r.model,
            resolved=bool(tr.resolved[i, j]),
            cost=float(tr.cost[i, j]),
        )
        outcomes.append(outcome)
    assert any(r.explored for r in records) and any(not r.explored for r in records)


def test_the_objective_is_named_as_the_user_gave_it(tmp_path: Path) -> None:
    ckpt = tmp_path / "checkpoint.json"
    assert objective_words(CheckpointSpec(checkpoint=ckpt, budget=1.1)) == "--budget 1.1"
    assert objective_words(CheckpointSpec(checkpoint=ckpt, quality="best-0.02")) == "--quality best-0.02"
    assert objective_words(CheckpointSpec(checkpoint=ckpt)) == "the safe default point"
