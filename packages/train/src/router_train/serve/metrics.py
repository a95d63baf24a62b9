"""`GET /metrics`: what a team scrapes from each replica, in the Prometheus text format. Each app has its
own `CollectorRegistry` (tests and benchmarks build many apps in one process; the global registry would
refuse the second's metrics)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from router_train.serve.feedback import authorized
from router_train.serve.http_body import Handler, unauthorized

METRICS_PATH = "/metrics"
"""The route (always present; `[metrics] token_env` puts it behind a bearer token)."""
PREFIX = "router_serve"
"""Every metric's name starts with this."""
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
"""Upstream latency histogram buckets, seconds: an agent turn takes from tens of ms to minutes."""


class ServeMetrics:
    """The metrics of one serve app, in their own registry."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            f"{PREFIX}_requests", "Requests answered, by route and status", ["route", "status"], registry=r
        )
        self.errors = Counter(
            f"{PREFIX}_errors",
            "Requests answered 4xx or 5xx, by route and status",
            ["route", "status"],
            registry=r,
        )
        self.decisions = Counter(
            f"{PREFIX}_decisions",
            "New tasks decided, by served model and chooser (router, floor or explore)",
            ["model", "chooser"],
            registry=r,
        )
        self.upstream_latency = Histogram(
            f"{PREFIX}_upstream_latency_seconds",
            "Seconds from sending a request upstream to its status line, by model and status",
            ["model", "status"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.spend = Counter(
            f"{PREFIX}_spend_usd", "USD of the priced answers, by model", ["model"], registry=r
        )
        self.tokens = Counter(
            f"{PREFIX}_tokens",
            "Tokens the answers reported, by model and kind (prompt, completion)",
            ["model", "kind"],
            registry=r,
        )
        self.outcomes = Counter(
            f"{PREFIX}_outcomes",
            "Outcomes committed (corrections included), by model and resolved",
            ["model", "resolved"],
            registry=r,
        )
        self.store_available = Gauge(
            f"{PREFIX}_store_available", "1 while the store's database answers, else 0", registry=r
        )
        self.store_reconnects = Counter(
            f"{PREFIX}_store_reconnects", "Times the store came back after being unavailable", registry=r
        )
        self.dashboard_renders = Counter(
            f"{PREFIX}_dashboard_renders",
            "Dashboard pages computed (a fetch answered from the cache computes none)",
            registry=r,
        )
        self.checkpoint = Info(f"{PREFIX}_checkpoint", "The router new tasks are routed with", registry=r)
        self.store_available.set(1)

    def answered(self, request: Request, status: int) -> None:
        """Count one answer of a route (its path: serve's routes have no path parameters)."""
        route, code = request.url.path, str(status)
        self.requests.labels(route, code).inc()
        if status >= 400:
            self.errors.labels(route, code).inc()

    def upstream_latency_seen(self, model: str, status: str, seconds: float) -> None:
        """One upstream answer's time to its status line (`status`: the HTTP status, or how it failed)."""
        self.upstream_latency.labels(model, status).observe(seconds)

    def store_changed(self, available: bool) -> None:
        """The store became available (a reconnect) or unavailable."""
        self.store_available.set(1 if available else 0)
        if available:
            self.store_reconnects.inc()

    def serving(self, router: str, checkpoint: str | None, sha256: str | None) -> None:
        """The router now serving new tasks (at start and after each reload)."""
        self.checkpoint.info({"router": router, "checkpoint": checkpoint or "", "sha256": sha256 or ""})


def metrics_endpoint(metrics: ServeMetrics, token: str | None, token_asked: bool) -> Handler:
    """The `GET /metrics` handler: the registry's text, behind `token` when `[metrics] token_env` is set
    (`token_asked`; an unset variable refuses every scrape rather than opening the route)."""

    async def endpoint(request: Request) -> Response:
        header = request.headers.get("authorization")
        if token_asked and (token is None or not authorized(header, token)):
            return unauthorized("GET /metrics", "[metrics] token_env")
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return endpoint
