"""`router-train serve`: an OpenAI-compatible proxy that routes each agent task once, then keeps it there.

The whole app is `router_train.serve_app.build_app` (it adds the dashboard, which sits above this package)."""

from __future__ import annotations

from router_train.serve.config import (
    ROUTER_MODEL,
    ServeConfig,
    ServeConfigError,
    UpstreamConfig,
    check_serves_pool,
    read_config,
)
from router_train.serve.forwarding import MODEL_HEADER, TASK_HEADER
from router_train.serve.identity import REPO_HEADER, TASK_ID_HEADER, issue_text, task_key
from router_train.serve.proxy import Proxy

__all__ = [
    "MODEL_HEADER",
    "REPO_HEADER",
    "ROUTER_MODEL",
    "TASK_HEADER",
    "TASK_ID_HEADER",
    "Proxy",
    "ServeConfig",
    "ServeConfigError",
    "UpstreamConfig",
    "check_serves_pool",
    "issue_text",
    "read_config",
    "task_key",
]
