"""`GET /dashboard` on serve's app: the admin bearer token, the records read through the store's bounded
worker pool, the page computed in a worker thread and cached while the decisions and outcomes are unchanged.

Added by `router_train.serve_app.build_app`: the page computes `offpolicy` estimates, and `offpolicy` reads
serve's records, so this hook sits above the `serve` package rather than in it.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from datetime import UTC, datetime

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from router_train.dashboard.data import dashboard
from router_train.dashboard.page import CONTENT_SECURITY_POLICY, render
from router_train.offpolicy.estimators import PolicyEstimate
from router_train.offpolicy.from_log import LoggedTasks
from router_train.offpolicy.summary import default_estimates
from router_train.serve.export import ServeRecords
from router_train.serve.feedback import authorized
from router_train.serve.http_body import Handler, unauthorized
from router_train.serve.proxy import Proxy
from router_train.serve.routing import Serving
from router_train.serve.store_api import Store

DASHBOARD_PATH = "/dashboard"
"""The route (present only with an `[admin]` table in the config)."""
RECORDS_TIMEOUT_S = 30.0
"""Seconds reading every decision and outcome may take (a long log on a slow database), through the
store's worker pool like every store call."""
SHARED_STORE_MAX_AGE_S = 30.0
"""A cached page is served this many seconds at most without reading the store again: other replicas'
decisions and outcomes (of a shared store) show within it. This process's own writes show at once."""


def store_records(store: Store) -> ServeRecords:
    """Every decision and outcome the store holds, by task key (the records `router-train feedback STORE`
    reads; blocking)."""
    return ServeRecords({d.task: d for d in store.decisions()}, {o.task: o for o in store.outcomes()})


def fingerprint(records: ServeRecords, serving: Serving) -> str:
    """What the page depends on, hashed: each decision's task, model and checkpoint, each outcome's task
    and revision, and the serving router."""
    h = hashlib.sha256(f"{serving.router.name}\0{serving.checkpoint_sha256}".encode())
    for d in records.decisions.values():
        h.update(f"\0{d.task}\0{d.model}\0{d.checkpoint_sha256}".encode())
    for o in records.outcomes.values():
        h.update(f"\1{o.task}\0{o.revision}".encode())
    return h.hexdigest()


class EstimateCache:
    """The last estimates, kept while the logged tasks they were computed on are the same (the bootstrap
    takes a moment on a long log; decisions without new outcomes should not redo it)."""

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


def page(records: ServeRecords, serving: Serving, pool: list[str], cache: EstimateCache) -> str:
    """The dashboard's HTML of `records`, now (blocking: run it in a worker thread)."""
    d = dashboard(
        records,
        router=serving.router.name,
        pool=pool,
        serving_sha256=serving.checkpoint_sha256,
        now=datetime.now(UTC),
        estimate=cache.estimates,
    )
    return render(d)


class PageCache:
    """The last page, served again while nothing it shows has changed: not re-read while this process has
    written no decision or outcome (for at most `SHARED_STORE_MAX_AGE_S`), not recomputed while the records
    read have the same `fingerprint`. One computation at a time; fetches meanwhile wait for its page."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.estimates = EstimateCache()
        self._lock = asyncio.Lock()
        self._html: str | None = None
        self._changes = -1
        self._read_at = 0.0
        self._fingerprint: str | None = None

    async def html(self) -> str:
        async with self._lock:
            proxy = self.proxy
            fresh = time.monotonic() - self._read_at < SHARED_STORE_MAX_AGE_S
            if self._html is not None and self._changes == proxy.changes and fresh:
                return self._html
            changes, serving = proxy.changes, proxy.serving
            records = await proxy.store.call(store_records, proxy.store.backend, timeout_s=RECORDS_TIMEOUT_S)
            self._read_at, self._changes = time.monotonic(), changes
            seen = await anyio.to_thread.run_sync(fingerprint, records, serving)
            if self._html is None or seen != self._fingerprint:
                self._html = await anyio.to_thread.run_sync(
                    page, records, serving, proxy.pool, self.estimates
                )
                self._fingerprint = seen
                proxy.metrics.dashboard_renders.inc()
            return self._html


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
