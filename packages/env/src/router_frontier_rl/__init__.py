"""router-frontier-rl: learn to route SWE-bench tasks to the frontier model an oracle table picks.

`vf-eval router-frontier-rl` resolves this module; `__all__` exports exactly one Taskset, and one
Harness (a plain chat turn) that verifiers uses when no harness is pinned.

The exports are loaded on first use (PEP 562): `taskset` imports verifiers' v1 API (openai, anthropic,
~4 s on 2 cores), which a command touching only a submodule (`router_frontier_rl.swebench_image`, the
split, the rewards) must not pay. `getattr(module, name)`, `from router_frontier_rl import X` and
verifiers' `__all__` lookup all go through `__getattr__` below.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from router_frontier_rl.bundled import bundled_table_path
    from router_frontier_rl.rewards import RouteScores, score_completion, score_route
    from router_frontier_rl.route_parser import format_route, parse_route
    from router_frontier_rl.taskset import RouteData, RouterConfig, RouterHarness, RouterTaskset, RouteTask

_EXPORTS = {
    "RouteData": "router_frontier_rl.taskset",
    "RouteScores": "router_frontier_rl.rewards",
    "RouteTask": "router_frontier_rl.taskset",
    "RouterConfig": "router_frontier_rl.taskset",
    "RouterHarness": "router_frontier_rl.taskset",
    "RouterTaskset": "router_frontier_rl.taskset",
    "bundled_table_path": "router_frontier_rl.bundled",
    "format_route": "router_frontier_rl.route_parser",
    "parse_route": "router_frontier_rl.route_parser",
    "score_completion": "router_frontier_rl.rewards",
    "score_route": "router_frontier_rl.rewards",
}
"""Exported name -> the submodule defining it."""

__all__ = [
    "RouteData",
    "RouteScores",
    "RouteTask",
    "RouterConfig",
    "RouterHarness",
    "RouterTaskset",
    "bundled_table_path",
    "format_route",
    "parse_route",
    "score_completion",
    "score_route",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
