"""The proxy: an OpenAI-compatible chat API that routes each task once and keeps it on that model."""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
import time
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)
import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from router_oracle.infra.file_hash import sha256_file
from router_train.route import CheckpointSpec, Decision, EndpointError, Router, TaskInput, load_router
from router_train.route.task import REPO_PATTERN, served_task
from router_train.serve.config import (
    ROUTER_MODEL,
    ServeConfig,
    UpstreamConfig,
    admin_token,
    api_key,
    feedback_tokens,
)
from router_train.serve.explore import serve_choice
from router_train.serve.feedback import (
    FEEDBACK_PATH,
    FeedbackRequest,
    authorized,
    parse_feedback,
    token_source,
)
from router_train.serve.identity import (
    REPO_HEADER,
    TASK_ID_HEADER,
    RequestError,
    first_user_message,
    issue_text,
    kept_text,
    task_key,
)
from router_train.serve.json_body import parse_json_body
from router_train.serve.records import (
    DecisionRecord,
    FallbackRecord,
    OutcomeRecord,
    RouterErrorRecord,
    UsageRecord,
)
from router_train.serve.store import DecisionLog
from router_train.serve.store_api import Store, StoreUnavailable
from router_train.serve.store_open import open_store
from router_train.serve.usage import StreamMeter, Tokens, body_usage

MODEL_HEADER = "x-router-model"
"""Response header: the pool model id that served (or was to serve) the request."""
TASK_HEADER = "x-router-task"
"""Response header: the task key (sha256 hex) the request was identified by."""
MAX_BODY_BYTES = 64 * 1024 * 1024
"""A request body over this many bytes is refused (413) before it is read whole: a long agent
conversation is a few MB; without a bound one request could take the proxy's memory."""
BODY_READ_TIMEOUT_S = 30.0
"""A client that has not sent its whole body within this many seconds gets 408 (a slow client may not
hold a request open for ever)."""
UPSTREAM_KEEPALIVE_S = 2.0
"""An idle pooled upstream connection is dropped after this many seconds. Well below the shortest
keep-alive a usual upstream keeps (uvicorn's 5 s, under vLLM and SGLang): with httpx's default, also 5 s, a
connection was reused just as the upstream closed it, and the request failed (issue 41, item 9)."""
STALE_CONNECTION_ERRORS = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
"""Errors of a request whose connection closed before the upstream's status line and headers came: it
is sent once more (the closed connection has left the pool), since the upstream never answered it. A
kept-alive connection the upstream closes as the request arrives fails so, however short the expiry here."""


class BodyRefused(Exception):
    """A request body the proxy will not read: the HTTP status and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_body(request: Request) -> bytes:
    """The request body, refusing a non-JSON content type (415), one over `MAX_BODY_BYTES` (413, as
    declared or as sent) and one not sent within `BODY_READ_TIMEOUT_S` (408)."""
    kind = request.headers.get("content-type")
    if kind is not None:
        media = kind.split(";")[0].strip().lower()
        if media != "application/json" and not media.endswith("+json"):
            raise BodyRefused(415, f"content type {media!r}: send the request as application/json")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyRefused(413, f"the request body ({declared} bytes) is over the limit of {MAX_BODY_BYTES}")

    async def gather() -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise BodyRefused(413, f"the request body is over the limit of {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        return await asyncio.wait_for(gather(), BODY_READ_TIMEOUT_S)
    except TimeoutError:
        raise BodyRefused(408, f"the request body was not sent within {BODY_READ_TIMEOUT_S:g} s") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def error_response(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """An OpenAI-style error body: {"error": {"message", "type", "code"}}."""
    body = {"error": {"message": message, "type": kind, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


def decision_record(decision: Decision) -> dict[str, Any]:
    """The decision exactly as `router-train route --explain` prints it (its JSON line)."""
    record: dict[str, Any] = json.loads(decision.json_line())
    return record


class UpstreamFailure(Exception):
    """An upstream that answered with an error status, or not at all; `response` is what the client gets."""

    def __init__(self, response: Response, retryable: bool) -> None:
        super().__init__(response.status_code)
        self.response = response
        self.retryable = retryable


RELOAD_PATH = "/admin/reload"
"""The admin route that swaps in a new router checkpoint (present only with an `[admin]` table)."""


@dataclass(frozen=True)
class Serving:
    """What new tasks are routed with: one immutable object, swapped whole by a hot refit (`Proxy.reload`);
    a request reads it once, so a decision's model and checkpoint_sha256 always come from one router."""

    router: Router
    checkpoint_sha256: str | None
    """sha256 hex of the checkpoint file the router was loaded from (None: an LLM router)."""
    checkpoint: Path | None
    """That file (None: an LLM router)."""


class ReloadRefused(ValueError):
    """A checkpoint a hot refit will not swap in (one line); the serving router is kept."""


@dataclass(frozen=True)
class Routed:
    model: str
    task: str | None
    """The task key; None for a request that asked for a pool model directly."""


class Proxy:
    """The proxy's state: router, upstream clients, the sticky store and the decision log."""

    def __init__(self, config: ServeConfig, router: Router) -> None:
        self.config = config
        self.pool: list[str] = list(router.pool)
        self._store: Store | None = None
        self._log: DecisionLog | None = None
        # One routing per task at a time: a second first-request of the same task waits for the first's
        # decision instead of routing again (and perhaps differently, for a sampling router).
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._clients: dict[str, httpx.AsyncClient] = {}
        spec = config.router
        checkpoint = spec.checkpoint if isinstance(spec, CheckpointSpec) else None
        self.serving = Serving(router, sha256_file(checkpoint) if checkpoint else None, checkpoint)
        """The router new tasks are routed with (replaced whole by `reload`)."""
        self._reloading = asyncio.Lock()
        self.feedback_tokens = feedback_tokens(config)
        """Source name -> bearer token of `POST /v1/feedback` (empty without `[feedback]`)."""
        self.admin_token = admin_token(config)

    @property
    def router(self) -> Router:
        """The router new tasks are routed with now."""
        return self.serving.router

    @property
    def checkpoint_sha256(self) -> str | None:
        """sha256 of the serving router's checkpoint file, written in every decision (None: an LLM router)."""
        return self.serving.checkpoint_sha256

    @property
    def store(self) -> Store:
        assert self._store is not None, "the proxy has not started"
        return self._store

    @property
    def log(self) -> DecisionLog:
        assert self._log is not None, "the proxy has not started"
        return self._log

    async def start(self) -> None:
        self._store = open_store(self.config.store)
        self._log = DecisionLog(self.config.decision_log)
        for model_id, up in self.config.upstreams.items():
            key = api_key(up)
            self._clients[model_id] = httpx.AsyncClient(
                base_url=up.base_url,
                headers={"authorization": f"Bearer {key}"} if key else {},
                timeout=httpx.Timeout(up.read_timeout_s, connect=up.connect_timeout_s),
                limits=httpx.Limits(
                    max_connections=512, max_keepalive_connections=128, keepalive_expiry=UPSTREAM_KEEPALIVE_S
                ),
                trust_env=False,  # a proxy set in the environment must not see the upstream keys
            )

    async def stop(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self.store.close()
        self.log.close()

    # --- endpoints -------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        serving = self.serving
        available = getattr(self.store, "available", True)
        return JSONResponse(
            {
                "status": "ok" if available else "store unavailable",
                "router": serving.router.name,
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
        """A chat completion, routed; a routed task's answers have their usage recorded (`_metered`)."""
        return self._metered(await self._chat_completions(request))

    async def _chat_completions(self, request: Request) -> Response:
        try:
            body = self._parse(await read_body(request))
            routed = await self._route(body, request)
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        except RequestError as exc:
            return error_response(400, str(exc), "invalid_request_error")
        except NoRoute as exc:
            return error_response(502, str(exc), "router_error")
        except StoreUnavailable as exc:  # a new task, and no database to claim it in: the client retries
            return error_response(503, str(exc), "service_unavailable", {"retry-after": "1"})
        headers = {MODEL_HEADER: routed.model}
        if routed.task is not None:
            headers[TASK_HEADER] = routed.task
        try:
            return await self._forward(routed.model, body, headers)
        except UpstreamFailure as failure:
            fallback = self.config.upstreams[routed.model].fallback
            if fallback is None or not failure.retryable:
                return failure.response
            self.log.write(
                FallbackRecord(
                    time=_now(),
                    task=routed.task,
                    model=routed.model,
                    fallback_model=fallback,
                    status=failure.response.status_code,
                )
            )
            headers[MODEL_HEADER] = fallback
            try:
                return await self._forward(fallback, body, headers)
            except UpstreamFailure as second:
                return second.response

    # --- request parsing and routing ------------------------------------------------------------

    def _parse(self, raw: bytes) -> dict[str, Any]:
        body = parse_json_body(raw, "the request body")
        if not isinstance(body, dict):
            raise RequestError("the request body must be a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("`messages` is missing or not a non-empty list")
        model = body.get("model")
        if not isinstance(model, str):
            raise RequestError("`model` is missing or not a string")
        if model != ROUTER_MODEL and model not in self.config.upstreams:
            known = ", ".join([ROUTER_MODEL, *self.pool])
            raise RequestError(f"unknown model {model!r}; this proxy serves: {known}")
        return body

    async def _route(self, body: dict[str, Any], request: Request) -> Routed:
        model = body["model"]
        if model != ROUTER_MODEL:
            return Routed(model, None)
        first = first_user_message(body["messages"])
        task_id = request.headers.get(TASK_ID_HEADER) or None
        repo = request.headers.get(REPO_HEADER) or None
        if repo is not None and not re.fullmatch(REPO_PATTERN, repo):
            raise RequestError(f"header {REPO_HEADER}: expected a GitHub owner/name, got {repo!r}")
        key = task_key(first, task_id)
        stored = self.store.get(key)
        if stored in self.config.upstreams:
            return Routed(stored, key)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            stored = self.store.get(key)
            if stored in self.config.upstreams:
                return Routed(stored, key)
            task = served_task(issue_text(first), repo, task_id, key)
            serving = self.serving  # read once: a hot refit during this routing does not mix two routers
            started = time.perf_counter()
            try:
                # In a worker thread: a local router computes for a few ms, an endpoint router waits on
                # an LLM for seconds; neither may stall the requests of other tasks.
                decision = await anyio.to_thread.run_sync(serving.router.route, task)
            except Exception as exc:  # an endpoint's EndpointError, or any router bug: JSON 502, keep serving
                error = str(exc) if isinstance(exc, EndpointError) else f"{type(exc).__name__}: {exc}"
                self.log.write(RouterErrorRecord(time=_now(), task=key, error=error))
                raise NoRoute(f"the router failed: {error}") from None
            latency_ms = (time.perf_counter() - started) * 1000
            record = self._decision(key, decision, latency_ms, task, serving.checkpoint_sha256)
            if record.model is None:
                self.log.write(record)
                raise NoRoute(
                    f"the router gave no route for this task: {decision.reason or decision.model!r}"
                )
            if stored is None:
                # First wins across replicas: another one may have claimed the task meanwhile.
                kept = self.store.claim(record)
            else:
                self.store.put(record)  # the stored model left the pool: routed again
                kept = record
            if kept is record:
                self.log.write(record)  # after the commit: a logged decision is the stored one
            assert kept.model is not None
            return Routed(kept.model, key)

    def _decision(
        self, key: str, decision: Decision, latency_ms: float, task: TaskInput, checkpoint_sha256: str | None
    ) -> DecisionRecord:
        """The record of a new task's decision: the router's, or an exploration draw's (`[explore]`), with
        the text routed on as `[feedback]` keeps it (`identity.kept_text`) and the checkpoint it came from."""
        pick = decision.model if decision.model in self.config.upstreams else None
        text, digest = kept_text(task.problem_statement, self.config.feedback)
        explore = self.config.explore
        served = serve_choice(
            key, pick, self.pool, explore.rate if explore else 0.0, explore.seed if explore else 0
        )
        return DecisionRecord(
            **{**decision.model_dump(), "model": served.model},
            time=_now(),
            task=key,
            latency_ms=round(latency_ms, 3),
            router_model=pick,
            explored=served.explored,
            propensity=served.propensity,
            checkpoint_sha256=checkpoint_sha256,
            repo=task.repo or None,
            issue_text=text,
            issue_sha256=digest,
        )

    # --- usage and outcomes -----------------------------------------------------------------------

    def _metered(self, response: Response) -> Response:
        """Record the usage of a routed task's successful answer: at once for a JSON body, at the end of
        the stream for server-sent events (whatever its last chunk reported)."""
        task, model = response.headers.get(TASK_HEADER), response.headers.get(MODEL_HEADER)
        if task is None or model is None or response.status_code >= 400:
            return response
        if isinstance(response, StreamingResponse):
            response.body_iterator = self._meter_stream(response.body_iterator, task, model)
        else:
            self._record_usage(task, model, body_usage(bytes(response.body)))
        return response

    async def _meter_stream(self, chunks: AsyncIterable[Any], task: str, model: str) -> AsyncIterator[Any]:
        meter = StreamMeter()
        try:
            async for chunk in chunks:
                meter.feed(chunk if isinstance(chunk, bytes) else str(chunk).encode())
                yield chunk
            meter.close()
        finally:
            self._record_usage(task, model, meter.tokens)
            close = getattr(chunks, "aclose", None)  # an async generator (`_relay`): end it here
            if close is not None:
                await close()

    def _record_usage(self, task: str, model: str, tokens: Tokens | None) -> None:
        up = self.config.upstreams[model]
        record = UsageRecord(
            time=_now(),
            task=task,
            model=model,
            prompt_tokens=tokens.prompt if tokens else None,
            completion_tokens=tokens.completion if tokens else None,
            cost=up.price(tokens.prompt, tokens.completion) if tokens else None,
        )
        self.store.add_usage(record)
        self.log.write(record)

    async def feedback(self, request: Request) -> Response:
        """`POST /v1/feedback`: a task's outcome, committed once (the same one again: 200, another: 409),
        or corrected by a source of `[feedback] correctors` (`"correction": true`: a new revision); 503
        while the store's database cannot be reached (nothing is acknowledged that is not committed)."""
        try:
            return await self._feedback(request)
        except StoreUnavailable as exc:
            return error_response(503, str(exc), "service_unavailable", {"retry-after": "1"})

    async def _feedback(self, request: Request) -> Response:
        feedback = self.config.feedback
        assert feedback is not None, "the route exists only with [feedback]"
        source = token_source(request.headers.get("authorization"), self.feedback_tokens)
        if source is None:
            return error_response(
                401,
                "feedback needs `Authorization: Bearer <token>` with a token of [feedback] "
                "(token_env or tokens)",
                "authentication_error",
                {"www-authenticate": "Bearer"},
            )
        try:
            report = parse_feedback(await read_body(request), feedback.max_cost)
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        except RequestError as exc:
            return error_response(400, str(exc), "invalid_request_error")
        if report.correction and source not in feedback.correctors:
            return error_response(
                403,
                f"source {source!r} may not correct outcomes (not in [feedback] correctors)",
                "permission_error",
            )
        keys = self.store.tasks_named(report.task)
        if not keys:
            return error_response(
                404, f"unknown task {report.task!r}: no task key or instance_id of this proxy", "not_found"
            )
        if len(keys) > 1:
            return error_response(
                409,
                f"instance_id {report.task!r} names {len(keys)} tasks; send the task key (x-router-task)",
                "conflict",
            )
        decision = self.store.decision(keys[0])
        if decision is None or decision.model is None:
            return error_response(
                409, f"task {report.task!r} was routed by an older serve, without a record", "conflict"
            )
        return self._commit_outcome(report, source, decision)

    def _commit_outcome(self, report: FeedbackRequest, source: str, decision: DecisionRecord) -> Response:
        """Record a report as the task's first outcome, or as a correction (latest revision + 1)."""
        assert decision.model is not None
        latest = self.store.outcome(decision.task)
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
        proxy_cost = self.store.usage(decision.task).proxy_cost
        if proxy_cost is not None and not math.isfinite(proxy_cost):
            proxy_cost = None  # an upstream's absurd token counts: unpriced rather than infinite
        outcome = OutcomeRecord(
            time=_now(),
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
        kept = self.store.record_outcome(outcome)
        if kept is None:
            self.log.write(outcome)  # after the commit: a logged outcome is a committed one
            return JSONResponse(outcome.model_dump(mode="json"))
        if (kept.resolved, kept.reported_cost) == (outcome.resolved, outcome.reported_cost):
            return JSONResponse(kept.model_dump(mode="json"))  # a concurrent same report won the revision
        return error_response(
            409,
            f"task {report.task!r}: another outcome was recorded at revision {kept.revision} meanwhile; "
            "read it and send again",
            "conflict",
        )

    # --- hot refit ---------------------------------------------------------------------------------

    async def reload(self, checkpoint: Path | None = None) -> Serving:
        """Load the config's checkpoint again (or `checkpoint`) and swap it in for new tasks; decided
        tasks keep their model. A checkpoint that cannot be loaded, or routes another pool, raises
        `ReloadRefused` (one line) and the serving router is kept."""
        spec = self.config.router
        if not isinstance(spec, CheckpointSpec):
            raise ReloadRefused("the router is an LLM behind an endpoint, not a checkpoint: nothing to load")
        if checkpoint is not None:
            spec = spec.model_copy(update={"checkpoint": checkpoint})
        async with self._reloading:
            try:
                before = await anyio.to_thread.run_sync(sha256_file, spec.checkpoint)
                router = await anyio.to_thread.run_sync(load_router, spec)
                after = await anyio.to_thread.run_sync(sha256_file, spec.checkpoint)
            except Exception as exc:  # any load failure: refused, one line, the old router serves on
                message = f"{spec.checkpoint}: not loaded, the old router serves on: {exc}"
                raise ReloadRefused(message) from None
            if before != after:
                raise ReloadRefused(f"{spec.checkpoint}: changed while it was loaded; send the reload again")
            if sorted(router.pool) != sorted(self.pool):
                raise ReloadRefused(
                    f"{spec.checkpoint}: routes the pool {sorted(router.pool)}, not the served "
                    f"{sorted(self.pool)}; the serving router is kept"
                )
            self.serving = Serving(router, after, spec.checkpoint)  # one assignment: atomic for readers
        return self.serving

    async def admin_reload(self, request: Request) -> Response:
        """`POST /admin/reload` (admin token): body empty or `{"checkpoint": "PATH"}`; 200 with the new
        router's checkpoint and sha256, 422 when refused (the old one keeps serving)."""
        assert self.admin_token is not None, "the route exists only with [admin]"
        if not authorized(request.headers.get("authorization"), self.admin_token):
            return error_response(
                401,
                "admin routes need `Authorization: Bearer <token>` with the token of [admin] token_env",
                "authentication_error",
                {"www-authenticate": "Bearer"},
            )
        try:
            raw = await read_body(request)
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        try:
            body = json.loads(raw) if raw.strip() else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return error_response(400, f"the reload body is not valid JSON: {exc}", "invalid_request_error")
        path = body.get("checkpoint") if isinstance(body, dict) else None
        if not isinstance(body, dict) or set(body) - {"checkpoint"} or not isinstance(path, str | None):
            message = 'the reload body is {} or {"checkpoint": "PATH"}'
            return error_response(400, message, "invalid_request_error")
        try:
            serving = await self.reload(Path(path) if path else None)
        except ReloadRefused as exc:
            print(f"router-train serve: reload refused: {exc}", file=sys.stderr, flush=True)
            return error_response(422, str(exc), "reload_refused")
        print(
            f"router-train serve: reloaded {serving.checkpoint} (sha256 {serving.checkpoint_sha256})",
            file=sys.stderr,
            flush=True,
        )
        return JSONResponse(
            {
                "router": serving.router.name,
                "checkpoint": str(serving.checkpoint),
                "checkpoint_sha256": serving.checkpoint_sha256,
            }
        )

    # --- forwarding -------------------------------------------------------------------------------

    async def _forward(self, model_id: str, body: dict[str, Any], headers: dict[str, str]) -> Response:
        up = self.config.upstreams[model_id]
        client = self._clients[model_id]
        payload = json.dumps({**body, "model": up.model}).encode("utf-8")
        request = client.build_request(
            "POST", "/chat/completions", content=payload, headers={"content-type": "application/json"}
        )
        stream = body.get("stream") is True
        try:
            # Streamed: `send` returns once the status line and headers are read, so a failure inside it
            # came before the upstream answered; the body is read below, and a failure there is not resent.
            try:
                upstream = await client.send(request, stream=True)
            except STALE_CONNECTION_ERRORS:
                upstream = await client.send(request, stream=True)  # once more, never a third time
            if not stream:
                try:
                    await upstream.aread()
                finally:
                    await upstream.aclose()
        except httpx.TimeoutException as exc:
            raise self._transport_failure(504, model_id, up, f"timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise self._transport_failure(
                502, model_id, up, f"cannot be reached ({type(exc).__name__})"
            ) from None
        if upstream.status_code >= 400:
            if stream:
                try:
                    await upstream.aread()
                except httpx.HTTPError:
                    pass
                finally:
                    await upstream.aclose()
            raise UpstreamFailure(
                _upstream_error(upstream, model_id, headers),
                upstream.status_code == 429 or upstream.status_code >= 500,
            )
        out_headers = dict(headers)
        media_type = upstream.headers.get("content-type", "application/json")
        if not stream:
            return Response(
                upstream.content, status_code=upstream.status_code, headers=out_headers, media_type=media_type
            )
        return StreamingResponse(
            _relay(upstream, model_id),
            status_code=upstream.status_code,
            headers=out_headers,
            media_type=media_type,
            background=BackgroundTask(upstream.aclose),
        )

    def _transport_failure(
        self, status: int, model_id: str, up: UpstreamConfig, what: str
    ) -> UpstreamFailure:
        message = f"upstream for {model_id!r} ({up.base_url}) {what}"
        return UpstreamFailure(
            error_response(status, message, "upstream_error", {MODEL_HEADER: model_id}), True
        )


class NoRoute(Exception):
    """The router named no pool model for the task (its reason is the message)."""


def _upstream_error(upstream: httpx.Response, model_id: str, headers: dict[str, str]) -> Response:
    """The upstream's status with its JSON error body when it has one, else one wrapping its text."""
    try:
        body = json.loads(upstream.content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and "error" in body:
        return JSONResponse(body, status_code=upstream.status_code, headers=headers)
    text = upstream.content[:500].decode("utf-8", "replace")
    message = f"upstream for {model_id!r} answered HTTP {upstream.status_code}: {text}"
    return error_response(upstream.status_code, message, "upstream_error", headers)


async def _relay(upstream: httpx.Response, model_id: str) -> AsyncIterator[bytes]:
    """The upstream's server-sent events as they come (decoded: no content-encoding is passed on); a
    failure mid-stream ends it with an error event, since the status line is sent already."""
    try:
        async for chunk in upstream.aiter_bytes():
            yield chunk
    except httpx.HTTPError as exc:
        kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "failed"
        message = f"upstream for {model_id!r} {kind} mid-stream"
        yield f"data: {json.dumps({'error': {'message': message, 'type': 'upstream_error'}})}\n\n".encode()
    finally:
        await upstream.aclose()  # also when the client went away and the stream was cancelled


Handler = Callable[[Request], Awaitable[Response]]


def guarded(handler: Handler) -> Handler:
    """`handler`, with any exception it did not expect answered 500 in one JSON line and reported in one
    line on stderr: Starlette's own handler would print a traceback into serve's output (issue 44)."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception as exc:
            what = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
            print(f"serve: {request.method} {request.url.path}: internal error: {what}", file=sys.stderr)
            return error_response(500, f"internal error: {what}", "server_error")

    return run


def build_app(
    config: ServeConfig, router: Router, on_ready: Callable[[Proxy], None] | None = None
) -> Starlette:
    """The ASGI app; the upstream clients open at startup and close, with the store, at shutdown."""
    proxy = Proxy(config, router)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await proxy.start()
        if on_ready is not None:
            on_ready(proxy)
        try:
            yield
        finally:
            await proxy.stop()

    routes = [
        Route("/v1/chat/completions", guarded(proxy.chat_completions), methods=["POST"]),
        Route("/v1/models", guarded(proxy.models), methods=["GET"]),
        Route("/health", guarded(proxy.health), methods=["GET"]),
    ]
    if config.feedback is not None:
        routes.append(Route(FEEDBACK_PATH, guarded(proxy.feedback), methods=["POST"]))
    if config.admin is not None:
        routes.append(Route(RELOAD_PATH, guarded(proxy.admin_reload), methods=["POST"]))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    return app
