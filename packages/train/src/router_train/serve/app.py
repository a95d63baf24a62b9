"""serve's ASGI app: the routes of the proxy's parts, each guarded (one-line errors, counted in the
metrics), and the lifespan that opens and closes the proxy's state. `router_train.serve_app.build_app`
adds the dashboard (which reads serve's records through `offpolicy`, so it sits above this package)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Route

from router_train.route import Router
from router_train.serve.admin import RELOAD_PATH, Admin
from router_train.serve.config import ServeConfig, metrics_token
from router_train.serve.feedback import FEEDBACK_PATH
from router_train.serve.feedback_route import FeedbackRoute
from router_train.serve.http_body import Handler, guarded
from router_train.serve.metrics import METRICS_PATH, metrics_endpoint
from router_train.serve.proxy import Proxy

ExtraRoutes = Callable[[Proxy], list[tuple[str, Handler]]]
"""More GET routes (path, handler) of the app, made from the proxy once it exists."""


def build_proxy_app(
    config: ServeConfig,
    router: Router,
    on_ready: Callable[[Proxy], None] | None = None,
    extra: ExtraRoutes | None = None,
) -> Starlette:
    """The ASGI app; the proxy's state opens at startup and closes (usage written, store closed) at shutdown.
    `app.state.proxy` is the `Proxy`, `app.state.admin` the `Admin` (its route only with `[admin]`)."""
    proxy = Proxy(config, router)
    admin = Admin(proxy.reloader, proxy.admin_token, proxy.swapped)  # SIGHUP reloads with or without [admin]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await proxy.start()
        if on_ready is not None:
            on_ready(proxy)
        try:
            yield
        finally:
            await proxy.stop()

    def route(path: str, handler: Handler, method: str) -> Route:
        return Route(path, guarded(handler, proxy.metrics.answered), methods=[method])

    token = metrics_token(config)
    routes = [
        route("/v1/chat/completions", proxy.chat_completions, "POST"),
        route("/v1/models", proxy.models, "GET"),
        route("/health", proxy.health, "GET"),
        route(
            METRICS_PATH, metrics_endpoint(proxy.metrics, token, config.metrics.token_env is not None), "GET"
        ),
    ]
    if config.feedback is not None:
        routes.append(route(FEEDBACK_PATH, FeedbackRoute(config, proxy), "POST"))
    if config.admin is not None:
        routes.append(route(RELOAD_PATH, admin.reload_route, "POST"))
    for path, handler in extra(proxy) if extra is not None else []:
        routes.append(route(path, handler, "GET"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    app.state.admin = admin
    return app
