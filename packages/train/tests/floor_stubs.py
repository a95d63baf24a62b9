"""A router at the floor for serve's tests of the learned floor: a stub scorer whose point at the
objective is refused (`route.floor.floor_point`, the real code path), a table prior, a serve config, and a
harness double that sends each task's first chat request and posts its outcome and cost."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import tomli_w
from starlette.testclient import TestClient

from router_oracle.frontier import ModelPoint
from router_oracle.task_input import TaskInput
from router_train.offpolicy.floor_replay import Traffic
from router_train.route.deploy import Scorer
from router_train.route.floor import floor_point
from router_train.route.router import ScoringRouter
from router_train.scoring.dial import DialCalibration
from router_train.scoring.floor import Objective
from router_train.serve import MODEL_HEADER, TASK_ID_HEADER
from router_train.serve.identity import task_key

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


def write_config(tmp_path: Path, stubs: Any, router: dict[str, Any], **tables: Any) -> Path:
    checkpoint = tmp_path / "stub-checkpoint.json"
    checkpoint.write_text("{}", encoding="utf-8")  # hashed by the proxy; the router is built here
    doc = {
        "router": {"checkpoint": str(checkpoint), **router},
        "upstreams": {
            m: {"base_url": f"{server.url}/v1", "model": f"served-{m}"} for m, (_, server) in stubs.items()
        },
        "store": str(tmp_path / "state" / "decisions.sqlite"),
        "decision_log": str(tmp_path / "state" / "decisions.jsonl"),
        "feedback": {"token_env": TOKEN_ENV},
        **tables,
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


def drive(client: httpx.Client | TestClient, tr: Traffic) -> list[str]:
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
