"""`router-train serve`: the sticky routing proxy, an OpenAI-compatible chat API for coding agents.

Exit codes: 2 bad input (one line on stderr: the config, a pool model without an upstream, an unset key
variable, a router that cannot be loaded, an address in use), 130 stopped by Ctrl-C (after a graceful
shutdown).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn

from router_oracle.infra.cli_runner import EXIT_INTERRUPTED
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Port
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.route import load_router
from router_train.route.operating_point import point_lines
from router_train.route.router import ScoringRouter
from router_train.serve import check_serves_pool, read_config
from router_train.serve.admin import Admin
from router_train.serve.floor_choice import objective_words
from router_train.serve.store_open import open_store
from router_train.serve.store_url import StoreLocation
from router_train.serve_app import build_app

SHUTDOWN_GRACE_S = 5
"""After Ctrl-C, seconds requests in flight may still take before the server stops anyway."""


class Options(FrozenModel):
    """What `router-train serve`'s flags fill: the config file (`serve.config.ServeConfig`, read by
    `run`) and the address to listen on."""

    config: Path
    """router and upstreams (docs/serve.md)"""
    host: str = "127.0.0.1"
    """address to listen on"""
    port: Port = 8000
    """port to listen on, 0-65535"""
    store: str | None = None
    """where decisions and outcomes are kept, overriding the config's `store`: a SQLite file, or a
    postgresql:// URL that several replicas share"""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help=summary("serve"),
        description=(
            "Serve POST /v1/chat/completions, GET /v1/models, GET /health (and POST /v1/feedback with a "
            "[feedback] table, GET /dashboard and POST /admin/reload with an [admin] table, GET /metrics). "
            "A request for model `router` is routed on its conversation's first user message (the task) "
            "once, and every later request of that task goes to the same upstream, also after a restart; a "
            "pool model id is served directly. See docs/serve.md. Exit codes: 2 bad input (one line on "
            "stderr), 130 stopped by Ctrl-C."
        ),
    )
    field_flag(p, Options, "config", "config", metavar="CONFIG.toml")
    for name in ("host", "port", "store"):
        field_flag(p, Options, name)
    p.set_defaults(func=run)


class _NoCancelTracebacks(logging.Filter):
    """Drops uvicorn's traceback for a request cancelled at the end of the shutdown grace: uvicorn has
    already said in one line that it cancels them."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts: an address in use is bad input (one line, exit
    2), not a log record and exit 1 from inside the server."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port}: not a TCP port")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
        # without it every response waits out Nagle and delayed ACKs (~40 ms).
        sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise ValueError(f"--host {host} --port {port}: {exc.strerror or exc}") from None
    return sock


def _reload_on_sighup(admin: Admin, config_path: Path) -> None:
    """SIGHUP: read the config file again and swap in its router's checkpoint (`Admin.sighup`: one line
    says what was loaded, or why not, and the old router serves on)."""
    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()

    def on_hup() -> None:
        task = loop.create_task(admin.sighup(config_path))
        pending.add(task)  # a reference until done (the loop keeps only weak ones)
        task.add_done_callback(pending.discard)

    loop.add_signal_handler(signal.SIGHUP, on_hup)


def run(args: argparse.Namespace) -> int:
    # Every bad input raises ValueError (ServeConfigError, the route API's RouteError): one line, exit 2.
    options = options_of(Options, args)
    config = read_config(options.config)
    if options.store is not None:
        store = config.store.model_copy(update={"location": StoreLocation.parse(options.store)})
        config = config.model_copy(update={"store": store})
    router = load_router(config.router)
    check_serves_pool(config, list(router.pool), options.config)
    # The store is opened (created or migrated) once here: a database that cannot be reached is one line
    # and exit 2 before listening, not a traceback from inside the server's startup.
    open_store(config.store).close()
    sock = bind(options.host, options.port)
    app = build_app(config, router, on_ready=lambda proxy: _reload_on_sighup(app.state.admin, options.config))
    if isinstance(router, ScoringRouter):  # a refused budget or dial: one line at load (and in each record)
        for line in point_lines(router.point, getattr(config.router, "budget", None)):
            print(f"router-train serve: {line}", file=sys.stderr)
    print(
        f"router-train serve: router {router.name} over {', '.join(router.pool)} on "
        f"http://{options.host}:{options.port}/v1 (model `router`, serving {objective_words(config.router)}; "
        f"store {config.store.location.shown()}; "
        f"log {config.decision_log}; SIGHUP re-reads the config and reloads its checkpoint)",
        file=sys.stderr,
    )
    # Ctrl-C lets requests in flight finish for at most SHUTDOWN_GRACE_S (an upstream may take minutes).
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=SHUTDOWN_GRACE_S)
    )
    logging.getLogger("uvicorn.error").addFilter(_NoCancelTracebacks())  # after Config set logging up
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shut down gracefully, then raised the Ctrl-C again
        print(
            f"router-train serve: stopped by Ctrl-C; the store {config.store.location.shown()} and the log "
            f"{config.decision_log} were written and closed",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    finally:
        sock.close()
    return 0
