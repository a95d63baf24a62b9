"""The proxy's state and its chat, models and health routes: the serving router, the store (through
`AsyncStore`), the decision log, the usage batcher, the upstream clients and the metrics, wired together."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from router_oracle.infra.file_hash import sha256_file
from router_train.route import CheckpointSpec, Router
from router_train.serve.config import ROUTER_MODEL, ServeConfig, admin_token
from router_train.serve.floor_choice import FloorAssigner, objective_words
from router_train.serve.forwarding import MODEL_HEADER, TASK_HEADER, UpstreamFailure, Upstreams
from router_train.serve.http_body import BodyRefused, error_response, now, read_body, unavailable
from router_train.serve.identity import RequestError
from router_train.serve.metering import Meter
from router_train.serve.metrics import ServeMetrics
from router_train.serve.records import DecisionRecord, FallbackRecord, OutcomeRecord
from router_train.serve.reload import Reloader
from router_train.serve.routing import NoRoute, Routed, Serving, TaskRouter, parse_chat
from router_train.serve.store import DecisionLog
from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_async import AsyncStore
from router_train.serve.store_open import open_store
from router_train.serve.usage_batch import UsageBatcher


class Proxy:
    """The proxy's state (opened by `start`, closed by `stop`) and its core routes."""

    def __init__(self, config: ServeConfig, router: Router) -> None:
        self.config = config
        self.pool: list[str] = list(router.pool)
        spec = config.router
        checkpoint = spec.checkpoint if isinstance(spec, CheckpointSpec) else None
        serving = Serving(router, sha256_file(checkpoint) if checkpoint else None, checkpoint)
        self.reloader = Reloader(spec, serving)
        self.metrics = ServeMetrics()
        self.metrics.serving(router.name, str(checkpoint) if checkpoint else None, serving.checkpoint_sha256)
        self.upstreams = Upstreams(config, self.metrics.upstream_latency_seen)
        self.admin_token = admin_token(config)
        self.changes = 0
        """Decisions and outcomes this process has written (the dashboard's cache key moves with it)."""
        self.outcome_changes = 0
        """Outcomes this process has committed (the learned floor re-reads the store when it moves)."""
        self.floor: FloorAssigner | None = None
        """Assigns floor decisions by the floor learned from the store (set before start by
        `serve_floor`; None: the table's mix)."""
        self.on_stop: list[Callable[[], None]] = []
        """Run first at shutdown (the dashboard's child process ends there)."""
        self._store: AsyncStore | None = None
        self._log: DecisionLog | None = None
        self._batcher: UsageBatcher | None = None
        self._router: TaskRouter | None = None
        self._meter: Meter | None = None

    @property
    def serving(self) -> Serving:
        """The router new tasks are routed with now (replaced whole by a reload)."""
        return self.reloader.serving

    @property
    def router(self) -> Router:
        return self.serving.router

    @property
    def checkpoint_sha256(self) -> str | None:
        return self.serving.checkpoint_sha256

    @property
    def store(self) -> AsyncStore:
        assert self._store is not None, "the proxy has not started"
        return self._store

    @property
    def log(self) -> DecisionLog:
        assert self._log is not None, "the proxy has not started"
        return self._log

    @property
    def batcher(self) -> UsageBatcher:
        assert self._batcher is not None, "the proxy has not started"
        return self._batcher

    async def reload(self, checkpoint: Path | None = None) -> Serving:
        """Swap in the config's checkpoint loaded again, or `checkpoint` (`Reloader.reload`)."""
        serving = await self.reloader.reload(checkpoint)
        self.swapped(serving)
        return serving

    def swapped(self, serving: Serving) -> None:
        """A new router serves new tasks (the metrics' checkpoint info follows it)."""
        checkpoint = str(serving.checkpoint) if serving.checkpoint else None
        self.metrics.serving(serving.router.name, checkpoint, serving.checkpoint_sha256)
        self.changes += 1

    def outcome_committed(self, outcome: OutcomeRecord) -> None:
        self.metrics.outcomes.labels(outcome.model, str(outcome.resolved).lower()).inc()
        self.changes += 1
        self.outcome_changes += 1

    async def start(self) -> None:
        self._store = AsyncStore(open_store(self.config.store), self.config.store.timeout)
        self._store.on_change = self.metrics.store_changed
        self._log = DecisionLog(self.config.decision_log)
        self._batcher = UsageBatcher(self._store)
        self._router = TaskRouter(self.config, self.pool, self._store, self._log, self.floor)
        self._meter = Meter(self.config, self._batcher, self._log, self.metrics)
        self.upstreams.start()
        self._batcher.start()

    async def stop(self) -> None:
        for hook in self.on_stop:
            hook()
        await self.upstreams.stop()
        await self.batcher.stop()  # the usage still in memory, written before the store closes
        self.store.close()
        self.log.close()

    async def health(self, request: Request) -> Response:
        """From memory only: answers at once also while the store's database hangs."""
        serving = self.serving
        return JSONResponse(
            {
                "status": "ok" if self.store.available else "store unavailable",
                "router": serving.router.name,
                "objective": objective_words(self.config.router),
                "checkpoint_sha256": serving.checkpoint_sha256,
                "pool": self.pool,
                "tasks": len(self.store),
            }
        )

    async def models(self, request: Request) -> Response:
        ids = [ROUTER_MODEL, *self.pool]
        data = [{"id": i, "object": "model", "created": 0, "owned_by": "router-train"} for i in ids]
        return JSONResponse({"object": "list", "data": data})

    async def chat_completions(self, request: Request) -> Response:
        """A chat completion, routed and forwarded; a routed task's answer has its usage metered."""
        assert self._router is not None and self._meter is not None, "the proxy has not started"
        try:
            body = parse_chat(await read_body(request), self.config, self.pool)
            routed = await self._router.route(body, request.headers, self.serving)
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        except RequestError as exc:
            return error_response(400, str(exc), "invalid_request_error")
        except NoRoute as exc:
            return error_response(502, str(exc), "router_error")
        except StoreUnavailable as exc:  # a new task, and no database to claim it in: the client retries
            return unavailable(str(exc))
        if routed.decided is not None:
            self._decided(routed.decided)
        model, response = await self._answer(routed, body)
        return response if routed.task is None else self._meter.metered(response, routed.task, model)

    def _decided(self, record: DecisionRecord) -> None:
        chooser = "explore" if record.explored else (record.chooser or "router")
        self.metrics.decisions.labels(record.model or "", chooser).inc()
        self.changes += 1

    async def _answer(self, routed: Routed, body: dict[str, Any]) -> tuple[str, Response]:
        """(the model that answered, its response): the routed model's, or its fallback's when it failed
        with a retryable error and `[upstreams.X] fallback` names one."""
        headers = {MODEL_HEADER: routed.model}
        if routed.task is not None:
            headers[TASK_HEADER] = routed.task
        try:
            return routed.model, await self.upstreams.forward(routed.model, body, headers)
        except UpstreamFailure as failure:
            fallback = self.config.upstreams[routed.model].fallback
            if fallback is None or not failure.retryable:
                return routed.model, failure.response
            record = FallbackRecord(
                time=now(),
                task=routed.task,
                model=routed.model,
                fallback_model=fallback,
                status=failure.response.status_code,
            )
            self.log.write(record)
        headers[MODEL_HEADER] = fallback
        try:
            return fallback, await self.upstreams.forward(fallback, body, headers)
        except UpstreamFailure as second:
            return fallback, second.response
