"""`POST /v1/feedback`: a task's outcome, committed once (the same one again: 200, another: 409), or
corrected by a source of `[feedback] correctors` (`"correction": true`: a new revision); 503 while the store
cannot be reached (nothing is acknowledged that is not committed)."""

from __future__ import annotations

import json
import math

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from router_train.serve.config import ServeConfig, feedback_tokens
from router_train.serve.feedback import FeedbackRequest, parse_feedback, token_source
from router_train.serve.http_body import (
    BodyRefused,
    error_response,
    now,
    read_body,
    unauthorized,
    unavailable,
)
from router_train.serve.identity import RequestError
from router_train.serve.proxy import Proxy
from router_train.serve.records import DecisionRecord, OutcomeRecord
from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_async import AsyncStore


class FeedbackRoute:
    """The feedback handler over the proxy's store, usage batcher and log (opened when the app starts)."""

    def __init__(self, config: ServeConfig, proxy: Proxy) -> None:
        assert config.feedback is not None, "the route exists only with [feedback]"
        self.feedback = config.feedback
        self.tokens = feedback_tokens(config)
        """Source name -> bearer token."""
        self.proxy = proxy

    @property
    def store(self) -> AsyncStore:
        return self.proxy.store

    async def __call__(self, request: Request) -> Response:
        try:
            return await self._feedback(request)
        except StoreUnavailable as exc:
            return unavailable(str(exc))

    async def _feedback(self, request: Request) -> Response:
        source = token_source(request.headers.get("authorization"), self.tokens)
        if source is None:
            return unauthorized("feedback", "[feedback] (token_env or tokens)")
        try:
            report = parse_feedback(await read_body(request), self.feedback.max_cost)
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        except RequestError as exc:
            return error_response(400, str(exc), "invalid_request_error")
        if report.correction and source not in self.feedback.correctors:
            message = f"source {source!r} may not correct outcomes (not in [feedback] correctors)"
            return error_response(403, message, "permission_error")
        store = self.store.backend
        keys = await self.store.call(store.tasks_named, report.task)
        if not keys:
            message = f"unknown task {report.task!r}: no task key or instance_id of this proxy"
            return error_response(404, message, "not_found")
        if len(keys) > 1:
            message = (
                f"instance_id {report.task!r} names {len(keys)} tasks; send the task key (x-router-task)"
            )
            return error_response(409, message, "conflict")
        decision = await self.store.call(store.decision, keys[0])
        if decision is None or decision.model is None:
            message = f"task {report.task!r} was routed by an older serve, without a record"
            return error_response(409, message, "conflict")
        return await self._commit(report, source, decision)

    async def _commit(self, report: FeedbackRequest, source: str, decision: DecisionRecord) -> Response:
        """Record a report as the task's first outcome, or as a correction (latest revision + 1)."""
        assert decision.model is not None
        store = self.store.backend
        latest = await self.store.call(store.outcome, decision.task)
        if latest is not None and (latest.resolved, latest.reported_cost) == (report.resolved, report.cost):
            return JSONResponse(latest.model_dump(mode="json"))  # the same report again: idempotent
        if latest is not None and not report.correction:
            return error_response(
                409,
                f"task {report.task!r} has an outcome already (resolved={str(latest.resolved).lower()}, "
                f"cost={json.dumps(latest.reported_cost)}); a different one is refused "
                '(a corrector source sends it with "correction": true)',
                "conflict",
            )
        await self.proxy.batcher.flush()  # the usage counted in memory first: proxy_cost covers every answer
        proxy_cost = (await self.store.call(store.usage, decision.task)).proxy_cost
        if proxy_cost is not None and not math.isfinite(proxy_cost):
            proxy_cost = None  # an upstream's absurd token counts: unpriced rather than infinite
        outcome = OutcomeRecord(
            time=now(),
            task=decision.task,
            instance_id=decision.instance_id,
            model=decision.model,
            resolved=report.resolved,
            reported_cost=report.cost,
            proxy_cost=proxy_cost,
            cost=report.cost if report.cost is not None else proxy_cost,
            source=source,
            revision=0 if latest is None else latest.revision + 1,
        )
        kept = await self.store.call(store.record_outcome, outcome)
        if kept is None:
            self.proxy.log.write(outcome)  # after the commit: a logged outcome is a committed one
            self.proxy.outcome_committed(outcome)
            return JSONResponse(outcome.model_dump(mode="json"))
        if (kept.resolved, kept.reported_cost) == (outcome.resolved, outcome.reported_cost):
            return JSONResponse(kept.model_dump(mode="json"))  # a concurrent same report won the revision
        return error_response(
            409,
            f"task {report.task!r}: another outcome was recorded at revision {kept.revision} meanwhile; "
            "read it and send again",
            "conflict",
        )
