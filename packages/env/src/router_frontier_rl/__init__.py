"""router-frontier-rl: learn to route SWE-bench tasks to the frontier model an oracle table picks.

`vf-eval router-frontier-rl` resolves this module; `__all__` exports exactly one Taskset, and one
Harness (a plain chat turn) that verifiers uses when no harness is pinned.
"""

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.rewards import RouteScores, score_completion, score_route
from router_frontier_rl.route_parser import format_route, parse_route
from router_frontier_rl.taskset import RouteData, RouterConfig, RouterHarness, RouterTaskset, RouteTask

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
