"""Importers: each reads one upstream result format into the same long rows (`LongRow`).

- `leaderboard`: swe-bench.com leaderboard JSON (`results[].per_instance_details`) -> resolved and cost
- `harness_report`: SWE-bench harness run report (`resolved_ids`, ...) -> resolved only
- `trajectories`: mini-SWE-agent `*.traj.json` files -> cost only
- `long_table`: a plain CSV / JSONL long table -> resolved and/or cost

Merging the rows of several sources is explicit and strict: see `router_oracle.merge`.
"""

from router_oracle.sources.rows import LoadedSource, LongRow

__all__ = ["LoadedSource", "LongRow"]
