"""What every serve route shares on the HTTP side: the bounded body reader, the OpenAI-style error body,
the one-line guard around each handler, and the timestamp records carry."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from router_train.serve.store_api import StoreUnavailable

MAX_BODY_BYTES = 64 * 1024 * 1024
"""A request body over this many bytes is refused (413) before it is read whole: a long agent
conversation is a few MB; without a bound one request could take the proxy's memory."""
BODY_READ_TIMEOUT_S = 30.0
"""A client that has not sent its whole body within this many seconds gets 408 (a slow client may not
hold a request open for ever)."""

Handler = Callable[[Request], Awaitable[Response]]


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


def now() -> str:
    """The time a record carries: UTC, ISO 8601 to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def error_response(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """An OpenAI-style error body: {"error": {"message", "type", "code"}}."""
    body = {"error": {"message": message, "type": kind, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


def unavailable(message: str) -> JSONResponse:
    """503 for a store that cannot be reached now: one line, and when to try again."""
    return error_response(503, message, "service_unavailable", {"retry-after": "1"})


def unauthorized(what: str, token_source: str) -> JSONResponse:
    """401 for a missing or wrong bearer token (`what` needs it; `token_source` says where it is set)."""
    message = f"{what} needs `Authorization: Bearer <token>` with the token of {token_source}"
    return error_response(401, message, "authentication_error", {"www-authenticate": "Bearer"})


def one_line_error(exc: BaseException) -> str:
    """An unexpected exception as one printable line (its type, its message's first line, cut)."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def guarded(handler: Handler, on_answer: Callable[[Request, int], None] | None = None) -> Handler:
    """`handler`, with any exception it did not expect answered 500 in one JSON line and reported in one
    line on stderr: Starlette's own handler would print a traceback into serve's output (issue 44); a
    store that cannot be reached is 503 in one line, on every route.
    `on_answer` sees every answer's status (the metrics' request counter)."""

    async def run(request: Request) -> Response:
        try:
            response = await handler(request)
        except StoreUnavailable as exc:  # any route that needs the store while it cannot be reached
            response = unavailable(str(exc))
        except Exception as exc:
            what = one_line_error(exc)
            print(f"serve: {request.method} {request.url.path}: internal error: {what}", file=sys.stderr)
            response = error_response(500, f"internal error: {what}", "server_error")
        if on_answer is not None:
            on_answer(request, response.status_code)
        return response

    return run
