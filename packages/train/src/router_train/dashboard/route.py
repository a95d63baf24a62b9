"""`GET /dashboard` on serve's app: the admin bearer token, the records read in a worker thread, the
estimates cached while the logged outcomes are unchanged.

Added to the app by `add_dashboard` (`router-train serve` does), not by `serve.build_app`: the page
computes `offpolicy` estimates, and `offpolicy` reads serve's records, so serve itself cannot import it.
"""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from router_train.dashboard.data import dashboard
from router_train.dashboard.page import CONTENT_SECURITY_POLICY, render
from router_train.offpolicy.estimators import PolicyEstimate
from router_train.offpolicy.from_log import LoggedTasks
from router_train.offpolicy.summary import default_estimates
from router_train.serve.app import Proxy, error_response
from router_train.serve.config import admin_token
from router_train.serve.export import ServeRecords
from router_train.serve.feedback import authorized

DASHBOARD_PATH = "/dashboard"
"""The route (present only with an `[admin]` table in the config)."""


def store_records(proxy: Proxy) -> ServeRecords:
    """What the proxy's store holds: every decision and outcome, by task key. The dashboard's one read
    of the store (the same records `router-train feedback STORE` reads)."""
    store = proxy.store
    return ServeRecords({d.task: d for d in store.decisions()}, {o.task: o for o in store.outcomes()})


class EstimateCache:
    """The last estimates, kept while the logged tasks they were computed on are the same (the bootstrap
    takes a moment on a long log; a page reload with no new outcome should not)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: str | None = None
        self._estimates: list[PolicyEstimate] = []

    @staticmethod
    def key(data: LoggedTasks) -> str:
        h = hashlib.sha256("\0".join(data.logged.models).encode())
        for a in (data.logged.served, data.logged.propensity, data.logged.resolved, data.logged.cost):
            h.update(a.tobytes())
        if data.router_picks is not None:
            h.update(data.router_picks.tobytes())
        return h.hexdigest()

    def estimates(self, data: LoggedTasks) -> list[PolicyEstimate]:
        key = self.key(data)
        with self._lock:
            if key != self._key:
                self._estimates, self._key = default_estimates(data), key
            return self._estimates


def page(proxy: Proxy, cache: EstimateCache) -> str:
    """The dashboard's HTML, now (blocking: run it in a worker thread)."""
    d = dashboard(
        store_records(proxy),
        router=proxy.serving.router.name,
        pool=proxy.pool,
        serving_sha256=proxy.checkpoint_sha256,
        now=datetime.now(UTC),
        estimate=cache.estimates,
    )
    return render(d)


def add_dashboard(app: Starlette) -> Starlette:
    """Add `GET /dashboard` to serve's `app` when its config has `[admin]` (else nothing)."""
    proxy: Proxy = app.state.proxy
    token = admin_token(proxy.config)
    if token is None:
        return app
    cache = EstimateCache()

    async def endpoint(request: Request) -> Response:
        if not authorized(request.headers.get("authorization"), token):
            return error_response(
                401,
                "the dashboard needs `Authorization: Bearer <token>` with the token of [admin] token_env",
                "authentication_error",
                {"www-authenticate": "Bearer"},
            )
        html = await anyio.to_thread.run_sync(page, proxy, cache)
        headers = {"content-security-policy": CONTENT_SECURITY_POLICY, "cache-control": "no-store"}
        return HTMLResponse(html, headers=headers)

    app.add_route(DASHBOARD_PATH, endpoint, methods=["GET"])
    return app
