"""Importers: each reads one upstream result format into the same long rows (`LongRow`).

The sources, in `registry.SOURCE_KINDS` order (each one module here and one `SourceKind` entry there; its
kind name also in `table.ResultSourceKind`, which the registry's import check holds to it):
- `leaderboard`: swe-bench.com leaderboard JSON (`results[].per_instance_details`) -> resolved and cost
- `openhands`: the OpenHands Index results (a directory or its `.tar.gz`; every harness's runs) -> resolved
  and cost
- `harness_report`: SWE-bench harness run report (`resolved_ids`, ...) -> resolved only
- `trajectories`: mini-SWE-agent `*.traj.json` files -> cost only
- `long_table`: a plain CSV / JSONL long table -> resolved and/or cost

Beside them: `registry` (the source kinds: flags, readers, bundled files and licences), `rows` (the long
rows and the readers' shared checks) and `run_entry` (one run's metadata, what candidates are grouped from).

Merging the rows of several sources is explicit and strict: see `router_oracle.merge`.
"""

from router_oracle.sources.rows import LoadedSource, LongRow

__all__ = ["LoadedSource", "LongRow"]
