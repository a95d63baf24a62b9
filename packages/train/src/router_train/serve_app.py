"""`build_app`: serve's whole ASGI app — the proxy's routes (`serve.app`), the floor learned from the
store (`serve_floor`) and the dashboard (`dashboard.route`). Its own module above them: the dashboard and
the learner read serve's records through `offpolicy`, which imports `serve`, so `serve` cannot import
them back."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette

from router_train.dashboard.route import dashboard_routes
from router_train.route import Router
from router_train.serve.app import build_proxy_app
from router_train.serve.config import ServeConfig
from router_train.serve.proxy import Proxy
from router_train.serve_floor import ServeFloor


def build_app(
    config: ServeConfig, router: Router, on_ready: Callable[[Proxy], None] | None = None
) -> Starlette:
    """The ASGI app `router-train serve` runs: chat, models, health, metrics, and with their config tables
    feedback, the admin reload and the dashboard; floor decisions assigned by the floor learned from the
    store's outcomes; `on_ready(proxy)` runs once the proxy has started."""
    app = build_proxy_app(config, router, on_ready, dashboard_routes)
    proxy: Proxy = app.state.proxy
    proxy.floor = ServeFloor(proxy)
    return app
