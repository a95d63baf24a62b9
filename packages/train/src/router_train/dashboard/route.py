"""`GET /dashboard` on serve's app: the admin bearer token, the page computed in a child process
(`render_process`) and cached while the decisions and outcomes are unchanged.

Added by `router_train.serve_app.build_app`: the page computes `offpolicy` estimates, and `offpolicy` reads
serve's records, so this hook sits above the `serve` package rather than in it.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ProcessPoolExecutor

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from router_train.dashboard.page import CONTENT_SECURITY_POLICY
from router_train.dashboard.render_process import PageInput, compute, render_process
from router_train.route import CheckpointSpec
from router_train.serve.feedback import authorized
from router_train.serve.http_body import Handler, unauthorized
from router_train.serve.proxy import Proxy
from router_train.serve.store_api import StoreUnavailable

DASHBOARD_PATH = "/dashboard"
"""The route (present only with an `[admin]` table in the config)."""
RENDER_TIMEOUT_S = 300.0
"""Seconds the child may take to read the store and compute the page (13-17 CPU-s on 50,000 decisions on
a loaded machine before this cache) before the fetch is answered 503 and the child replaced."""
SHARED_STORE_MAX_AGE_S = 30.0
"""With a PostgreSQL store (shared by replicas), a cached page is served this many seconds at most without
reading the store again: other replicas' decisions and outcomes show within it. A SQLite store is this
process's own: its page is read again only after this process wrote a decision or outcome."""


class PageCache:
    """The last page, served again while nothing it shows has changed: not re-read while this process has
    written no decision or outcome (with a shared store, for at most `SHARED_STORE_MAX_AGE_S`), not
    recomputed while the records read have the same fingerprint. Computed in a child process
    (`render_process`), one at a time; fetches meanwhile wait for its page."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self._lock = asyncio.Lock()
        self._html: str | None = None
        self._changes = -1
        self._read_at = 0.0
        self._fingerprint: str | None = None
        self._child: ProcessPoolExecutor | None = None
        self._own_store = not proxy.config.store.location.is_postgres
        proxy.on_stop.append(self.close)

    async def html(self) -> str:
        async with self._lock:
            proxy = self.proxy
            fresh = self._own_store or time.monotonic() - self._read_at < SHARED_STORE_MAX_AGE_S
            if self._html is not None and self._changes == proxy.changes and fresh:
                return self._html
            if not proxy.store.available:
                raise StoreUnavailable("the store cannot be reached now: the dashboard reads it")
            changes, serving = proxy.changes, proxy.serving
            spec = proxy.config.router
            what = PageInput(
                proxy.config.store,
                serving.router.name,
                serving.checkpoint_sha256,
                tuple(proxy.pool),
                spec.objective() if isinstance(spec, CheckpointSpec) else None,
            )
            if self._child is None:
                self._child = render_process()
            future = asyncio.get_running_loop().run_in_executor(self._child, compute, what, self._fingerprint)
            try:
                seen, html = await asyncio.wait_for(future, RENDER_TIMEOUT_S)
            except TimeoutError:
                self.close()  # the child may hang on the store: a fresh one next time
                raise StoreUnavailable(
                    f"the dashboard was not computed within {RENDER_TIMEOUT_S:g} s"
                ) from None
            self._read_at, self._changes = time.monotonic(), changes
            if html is not None:
                self._html, self._fingerprint = html, seen
                proxy.metrics.dashboard_renders.inc()
            assert self._html is not None
            return self._html

    def close(self) -> None:
        """End the child (at shutdown, or when it took too long); a page it was computing is dropped."""
        child, self._child = self._child, None
        if child is None:
            return
        processes = list(getattr(child, "_processes", {}).values())  # the executor cannot kill a busy worker
        child.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()
            process.join()


def dashboard_routes(proxy: Proxy) -> list[tuple[str, Handler]]:
    """`GET /dashboard` when the config has `[admin]` (else no route)."""
    token = proxy.admin_token
    if proxy.config.admin is None:
        return []
    cache = PageCache(proxy)

    async def endpoint(request: Request) -> Response:
        if token is None or not authorized(request.headers.get("authorization"), token):
            return unauthorized("the dashboard", "[admin] token_env")
        html = await cache.html()
        headers = {"content-security-policy": CONTENT_SECURITY_POLICY, "cache-control": "no-store"}
        return HTMLResponse(html, headers=headers)

    return [(DASHBOARD_PATH, endpoint)]
