"""`build_app`: serve's whole ASGI app — the proxy's routes (`serve.app`) and the dashboard
(`dashboard.route`). Its own module above both: the dashboard reads serve's records through `offpolicy`,
which imports `serve`, so `serve` cannot import the dashboard back."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette

from router_train.dashboard.route import dashboard_routes
from router_train.route import Router
from router_train.serve.app import build_proxy_app
from router_train.serve.config import ServeConfig
from router_train.serve.proxy import Proxy


def build_app(
    config: ServeConfig, router: Router, on_ready: Callable[[Proxy], None] | None = None
) -> Starlette:
    """The ASGI app `router-train serve` runs: chat, models, health, metrics, and with their config tables
    feedback, the admin reload and the dashboard; `on_ready(proxy)` runs once the proxy has started."""
    return build_proxy_app(config, router, on_ready, dashboard_routes)
