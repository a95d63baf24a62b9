"""Forwarding: one pooled HTTP client per upstream, a chat request sent to the model it was routed to, and
the answer relayed (JSON whole, server-sent events as they come)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from router_train.serve.config import ServeConfig, UpstreamConfig, api_key
from router_train.serve.http_body import error_response

MODEL_HEADER = "x-router-model"
"""Response header: the pool model id that served (or was to serve) the request."""
TASK_HEADER = "x-router-task"
"""Response header: the task key (sha256 hex) the request was identified by."""
UPSTREAM_KEEPALIVE_S = 2.0
"""An idle pooled upstream connection is dropped after this many seconds. Well below the shortest
keep-alive a usual upstream keeps (uvicorn's 5 s, under vLLM and SGLang): with httpx's default, also 5 s, a
connection was reused just as the upstream closed it, and the request failed (issue 41, item 9)."""
STALE_CONNECTION_ERRORS = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
"""Errors of a request whose connection closed before the upstream's status line and headers came: it
is sent once more (the closed connection has left the pool), since the upstream never answered it. A
kept-alive connection the upstream closes as the request arrives fails so, however short the expiry here."""


class UpstreamFailure(Exception):
    """An upstream that answered with an error status, or not at all; `response` is what the client gets."""

    def __init__(self, response: Response, retryable: bool) -> None:
        super().__init__(response.status_code)
        self.response = response
        self.retryable = retryable


class Upstreams:
    """The pool's upstream clients (opened by `start`, closed by `stop`) and the forwarding through them.
    `on_latency(model, status, seconds)` sees each upstream answer's time to its status line."""

    def __init__(self, config: ServeConfig, on_latency: Callable[[str, str, float], None]) -> None:
        self.config = config
        self.on_latency = on_latency
        self._clients: dict[str, httpx.AsyncClient] = {}

    def start(self) -> None:
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

    async def forward(self, model_id: str, body: dict[str, Any], headers: dict[str, str]) -> Response:
        """The upstream's answer to `body` sent as `model_id`'s model; `UpstreamFailure` on an error status
        or no answer (`retryable`: 429, 5xx or transport, which a fallback may take)."""
        up = self.config.upstreams[model_id]
        client = self._clients[model_id]
        payload = json.dumps({**body, "model": up.model}).encode("utf-8")
        request = client.build_request(
            "POST", "/chat/completions", content=payload, headers={"content-type": "application/json"}
        )
        stream = body.get("stream") is True
        started = time.perf_counter()
        try:
            # Streamed: `send` returns once the status line and headers are read, so a failure inside it
            # came before the upstream answered; the body is read below, and a failure there is not resent.
            try:
                upstream = await client.send(request, stream=True)
            except STALE_CONNECTION_ERRORS:
                upstream = await client.send(request, stream=True)  # once more, never a third time
            self.on_latency(model_id, str(upstream.status_code), time.perf_counter() - started)
            if not stream:
                try:
                    await upstream.aread()
                finally:
                    await upstream.aclose()
        except httpx.TimeoutException as exc:
            self.on_latency(model_id, "timeout", time.perf_counter() - started)
            raise _transport_failure(504, model_id, up, f"timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            self.on_latency(model_id, "unreachable", time.perf_counter() - started)
            raise _transport_failure(502, model_id, up, f"cannot be reached ({type(exc).__name__})") from None
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
        media_type = upstream.headers.get("content-type", "application/json")
        if not stream:
            return Response(
                upstream.content,
                status_code=upstream.status_code,
                headers=dict(headers),
                media_type=media_type,
            )
        return StreamingResponse(
            _relay(upstream, model_id),
            status_code=upstream.status_code,
            headers=dict(headers),
            media_type=media_type,
            background=BackgroundTask(upstream.aclose),
        )


def _transport_failure(status: int, model_id: str, up: UpstreamConfig, what: str) -> UpstreamFailure:
    message = f"upstream for {model_id!r} ({up.base_url}) {what}"
    return UpstreamFailure(error_response(status, message, "upstream_error", {MODEL_HEADER: model_id}), True)


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
