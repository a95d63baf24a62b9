"""Benchmark: oracle-table build time on the bundled 40-run leaderboard data.

Builds the default pool (3 runs), the multi_run pool, and a pool of every leaderboard run that has
per-task data (40 runs, one model each: the worst case), and prints the median wall time of each.

    PYTHONPATH=packages/oracle/src python packages/train/benchmarks/bench_table_build.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from router_oracle.build import build_table
from router_oracle.data_files import leaderboard_path
from router_oracle.sources.leaderboard import read_leaderboard
from router_oracle.table import Pool, PoolModel, dumps_table


def all_runs_pool() -> Pool:
    """One pool model per leaderboard run with per-task data."""
    runs = sorted({row.run for row in read_leaderboard(leaderboard_path()).rows})
    models = []
    for run in runs:
        mid = re.sub(r"[^a-z0-9._-]+", "-", run.lower()).strip("-")
        models.append(PoolModel(id=mid, name=run, runs=[run]))
    return Pool(name="all-runs", description="every run with per-task data", models=models)


def timed(label: str, fn, repeat: int) -> None:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        table = fn()
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    size = len(dumps_table(table))
    dump = time.perf_counter() - t0
    print(
        f"{label:<28} models {len(table.pool.models):>2}  tasks {len(table.tasks)}  "
        f"build median {statistics.median(times):.3f}s (min {min(times):.3f}s, n={repeat})  "
        f"serialise {dump:.3f}s  {size / 1e6:.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pool = all_runs_pool()
    timed("default (3 runs)", lambda: build_table("default"), args.repeat)
    timed("multi_run", lambda: build_table("multi_run"), args.repeat)
    timed(f"all runs ({len(pool.models)} runs)", lambda: build_table(pool), args.repeat)


if __name__ == "__main__":
    main()
