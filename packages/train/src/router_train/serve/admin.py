"""The admin side of a hot refit: `POST /admin/reload` (admin token; body through serve's one bounded JSON
parser) and SIGHUP (the config file read again). What a POST swapped in lasts until the next SIGHUP, which
loads the config file's checkpoint instead and says that it replaces the POST's (docs/serve.md)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from router_train.serve.config import read_config
from router_train.serve.feedback import authorized
from router_train.serve.http_body import BodyRefused, error_response, read_body, unauthorized
from router_train.serve.identity import RequestError
from router_train.serve.json_body import parse_json_body
from router_train.serve.reload import Reloader, ReloadRefused, shown
from router_train.serve.routing import Serving

RELOAD_PATH = "/admin/reload"
"""The admin route that swaps in a new router checkpoint (present only with an `[admin]` table)."""


def say(line: str) -> None:
    """One line of serve's own on stderr."""
    print(f"router-train serve: {line}", file=sys.stderr, flush=True)


def reloaded(serving: Serving) -> str:
    return f"reloaded {shown(serving.checkpoint or '')} (sha256 {serving.checkpoint_sha256})"


class Admin:
    """The reload route and the SIGHUP reload over one `Reloader`; `on_swap` sees each router swapped in."""

    def __init__(self, reloader: Reloader, token: str | None, on_swap: Callable[[Serving], None]) -> None:
        self.reloader = reloader
        self.token = token
        self.on_swap = on_swap
        self.posted: Path | None = None
        """The checkpoint the last successful POST /admin/reload named (None: none since the last SIGHUP)."""

    async def reload_route(self, request: Request) -> Response:
        """`POST /admin/reload`: body empty or `{"checkpoint": "PATH"}`; 200 with the new router's
        checkpoint and sha256, 422 when refused (the old one keeps serving)."""
        if self.token is None or not authorized(request.headers.get("authorization"), self.token):
            return unauthorized("admin routes", "[admin] token_env")
        try:
            raw = await read_body(request)
            body = parse_json_body(raw, "the reload body") if raw.strip() else {}
        except BodyRefused as exc:
            return error_response(exc.status, str(exc), "invalid_request_error")
        except RequestError as exc:
            return error_response(400, str(exc), "invalid_request_error")
        path = body.get("checkpoint") if isinstance(body, dict) else None
        if not isinstance(body, dict) or set(body) - {"checkpoint"} or not isinstance(path, str | None):
            return error_response(
                400, 'the reload body is {} or {"checkpoint": "PATH"}', "invalid_request_error"
            )
        if path is not None and ("\0" in path or not path):
            return error_response(400, "the reload body's checkpoint is not a path", "invalid_request_error")
        try:
            serving = await self.reloader.reload(Path(path) if path else None)
        except ReloadRefused as exc:
            say(f"reload refused: {exc}")
            return error_response(422, str(exc), "reload_refused")
        self.posted = Path(path) if path else None
        self.on_swap(serving)
        say(f"{reloaded(serving)} (POST {RELOAD_PATH}; a SIGHUP loads the config file's checkpoint instead)")
        return JSONResponse(
            {
                "router": serving.router.name,
                "checkpoint": str(serving.checkpoint),
                "checkpoint_sha256": serving.checkpoint_sha256,
            }
        )

    async def sighup(self, config_path: Path) -> None:
        """Read the config file again and load its router's checkpoint; one line says what was loaded (and
        which POSTed checkpoint it replaces) or why nothing was."""
        try:
            config = await anyio.to_thread.run_sync(read_config, config_path)
        except ValueError as exc:
            say(f"SIGHUP: {exc}; the serving router is kept")
            return
        spec = config.router
        where = shown(getattr(spec, "checkpoint", "") or "")
        say(f"SIGHUP: read {shown(config_path)}: router checkpoint {where} (other changes need a restart)")
        try:
            serving = await self.reloader.reload(spec=spec)
        except ReloadRefused as exc:
            say(f"reload refused: {exc}")
            return
        self.reloader.spec = spec
        replaced = (
            f"; it replaces {shown(self.posted)}, which POST {RELOAD_PATH} swapped in" if self.posted else ""
        )
        self.posted = None
        self.on_swap(serving)
        say(f"{reloaded(serving)}{replaced}")
