"""The floor learned on the team's traffic, inside serve (issue 53 items 3 and 4, serve side): serve's app,
driven task by task with chat requests and feedback posts, assigns floor decisions exactly as replay's
learning arm (`offpolicy.floor_replay.learning_stream`) does on the same tasks and outcomes; a model
that is 4x dearer here than in the table leaves the mix without a refit; the decision records the
posterior and the learner's propensity; /health and /metrics say what serve serves.

A stub scorer at the floor (its point refused, `route.floor.floor_point`: the real code path), stub
upstreams, Starlette's TestClient (the app's lifespan in-process) and a SQLite store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from serve_stubs import running_upstreams
from starlette.testclient import TestClient

from router_oracle.frontier import ModelPoint
from router_oracle.task_input import TaskInput
from router_train.offpolicy.floor_replay import Traffic, learning_stream
from router_train.route.deploy import Scorer
from router_train.route.floor import floor_point
from router_train.route.router import ScoringRouter
from router_train.scoring.dial import DialCalibration
from router_train.scoring.floor import Objective
from router_train.serve import MODEL_HEADER, TASK_ID_HEADER, read_config
from router_train.serve.identity import task_key
from router_train.serve.records import DecisionRecord
from router_train.serve_app import build_app
from router_train.serve_floor import learner_from

MODELS = ["cheap", "mid", "dear"]
PRIOR = [
    ModelPoint(model="cheap", cost=0.2, resolved=0.60),
    ModelPoint(model="mid", cost=0.5, resolved=0.70),
    ModelPoint(model="dear", cost=1.0, resolved=0.80),
]
BUDGET = 0.6
TOKEN_ENV = "SERVE_FLOOR_TEST_TOKEN"
TOKEN = "floor-token-5d1e"


class TableScorer(Scorer):
    """Scores nothing useful: the router is refused at the objective and routes at the floor."""

    name = "stub:floor"
    pool = MODELS

    def scores(self, tasks: Sequence[TaskInput]) -> np.ndarray:
        return np.zeros((len(tasks), len(MODELS)))


def floor_router(objective: Objective) -> ScoringRouter:
    calibration = DialCalibration(
        model_ids=MODELS,
        model_costs=[p.cost for p in PRIOR],
        model_resolved=[p.resolved for p in PRIOR],
        n_tasks=100,
        points=[],
    )
    scorer = TableScorer()
    point = floor_point(scorer, calibration, objective, "test: the router's point refused", "test")
    return ScoringRouter(scorer, point)


@pytest.fixture(scope="module")
def stubs() -> Iterator[Any]:
    with running_upstreams(MODELS) as running:
        yield running


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def write_config(tmp_path: Path, stubs: Any, router: dict[str, Any]) -> Path:
    checkpoint = tmp_path / "stub-checkpoint.json"
    checkpoint.write_text("{}", encoding="utf-8")  # hashed by the proxy; the router is built here
    doc = {
        "router": {"checkpoint": str(checkpoint), **router},
        "upstreams": {m: {"base_url": f"{server.url}/v1", "model": f"served-{m}"} for m, (_, server) in stubs.items()},
        "store": str(tmp_path / "state" / "decisions.sqlite"),
        "decision_log": str(tmp_path / "state" / "decisions.jsonl"),
        "feedback": {"token_env": TOKEN_ENV},
    }
    path = tmp_path / "serve.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return path


def traffic(n: int, rates: list[float], costs: list[float], seed: int) -> Traffic:
    """Every model's outcome on `n` tasks; keys are serve's task keys of the chats `drive` sends."""
    rng = np.random.default_rng(seed)
    resolved = (rng.random((n, 3)) < np.asarray(rates)).astype(float)
    cost = np.round(np.asarray(costs) * rng.gamma(4.0, 0.25, size=(n, 3)), 6)
    keys = [task_key(issue(i), f"task-{i}") for i in range(n)]
    return Traffic(MODELS, keys, resolved, cost)


def issue(i: int) -> str:
    return f"Issue {i}: the parser drops a trailing comma."


def drive(client: TestClient, tr: Traffic) -> list[str]:
    """Each task in order: its first chat request (routed), then its outcome and cost posted."""
    served = []
    for i in range(len(tr.keys)):
        r = client.post(
            "/v1/chat/completions",
            json={"model": "router", "messages": [{"role": "user", "content": issue(i)}]},
            headers={TASK_ID_HEADER: f"task-{i}"},
        )
        assert r.status_code == 200, r.text
        model = r.headers[MODEL_HEADER]
        j = MODELS.index(model)
        report = {"task": f"task-{i}", "resolved": bool(tr.resolved[i, j]), "cost": float(tr.cost[i, j])}
        fb = client.post("/v1/feedback", json=report, headers={"authorization": f"Bearer {TOKEN}"})
        assert fb.status_code == 200, fb.text
        served.append(model)
    return served


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
    from router_train.serve.records import OutcomeRecord

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
