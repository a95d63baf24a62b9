"""The floor learned on the team's own traffic, inside serve (issue 53 item 3): where a new task's
decision is the floor's, serve assigns it with `offpolicy.floor_learner.FloorLearner`, the object
`replay`'s learning arm drives, so serve deploys what replay measured.

- Prior: the checkpoint's per-model table (its calibration's mean cost and resolve rate per model on its
  training tasks: the floor's points, `route.floor.model_points`).
- Observations: every outcome in the store (latest revision per task), in one canonical order, (outcome
  time, task key), so replicas sharing a store hold the same learner and assign a task alike; an outcome
  whose cost is unknown (no feedback `cost`, no priced usage) or whose model left the pool is skipped.
- Refresh: the store is read again, in a worker thread, when this process committed an outcome, and with a
  shared (PostgreSQL) store at most every `REFRESH_S` for other replicas' outcomes (the dashboard's rule,
  `dashboard.route`); a reload (another checkpoint) starts from its table.

Here, above `serve` and `offpolicy` (which reads serve's records), and handed to the proxy as its
`FloorAssigner` by `serve_app.build_app`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)

from router_oracle.frontier import ModelPoint
from router_train.offpolicy.floor_learner import FloorLearner
from router_train.route import CheckpointSpec, Router
from router_train.route.floor import model_points
from router_train.route.router import ScoringRouter
from router_train.scoring.floor import Objective
from router_train.serve.floor_choice import FloorChoice, observed
from router_train.serve.proxy import Proxy
from router_train.serve.records import OutcomeRecord
from router_train.serve.routing import Serving

REFRESH_S = 5.0
"""With a shared store, seconds a learner is used before the store is read again for other replicas'
outcomes (this process's own outcomes refresh it at once)."""


def floor_prior(router: Router) -> list[ModelPoint] | None:
    """The floor's single models of a router routing at the floor (its per-model table); None when it
    does not (its own point is backed, it has no objective, or it is an LLM router)."""
    if not isinstance(router, ScoringRouter):
        return None
    point = router.point
    if point.chooser != "floor" or point.calibration is None:
        return None
    return model_points(router.scorer, point.calibration, "serve's floor")


def learner_from(
    prior: Sequence[ModelPoint], objective: Objective, outcomes: Sequence[OutcomeRecord]
) -> FloorLearner:
    """The learner after observing `outcomes` (`observed`): what every replica reading them holds."""
    learner = FloorLearner(prior, objective)
    for o in observed(outcomes, learner.models):
        assert o.cost is not None
        learner.observe(o.model, float(o.resolved), o.cost)
    return learner


class ServeFloor:
    """The proxy's `FloorAssigner`: a learner kept fresh from the store, asked for each floor task."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self._lock = asyncio.Lock()
        self._learner: FloorLearner | None = None
        self._key: tuple[str | None, int] | None = None
        self._read_at = 0.0
        self._shared = proxy.config.store.location.is_postgres

    async def __call__(self, key: str, serving: Serving) -> FloorChoice | None:
        spec = self.proxy.config.router
        objective = spec.objective() if isinstance(spec, CheckpointSpec) else None
        prior = floor_prior(serving.router)
        if objective is None or prior is None:
            return None
        learner = await self.learner(serving, prior, objective)
        a = learner.assign(key)
        seen = sum(a.posterior.observed)
        why = f"assigned by the floor learned from {seen} outcomes: {a.posterior.mix.describe()} on them"
        return FloorChoice(a.model, a.propensity, a.posterior.model_dump(mode="json"), why)

    async def learner(self, serving: Serving, prior: list[ModelPoint], objective: Objective) -> FloorLearner:
        """The learner over the store's outcomes now (read again only when they may have changed)."""
        async with self._lock:
            proxy = self.proxy
            key = (serving.checkpoint_sha256, proxy.outcome_changes)
            fresh = not self._shared or time.monotonic() - self._read_at < REFRESH_S
            if self._learner is not None and self._key == key and fresh:
                return self._learner
            outcomes = await proxy.store.call(proxy.store.backend.outcomes)
            self._learner = await anyio.to_thread.run_sync(learner_from, prior, objective, outcomes)
            self._key, self._read_at = key, time.monotonic()
            return self._learner
