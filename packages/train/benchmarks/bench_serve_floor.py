"""Benchmark of serve's learned floor: what refreshing it costs a new floor task on a store of N outcomes.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src:packages/train/benchmarks \
    python packages/train/benchmarks/bench_serve_floor.py [--outcomes 1000 10000]

For each N, a SQLite store is filled as bench_serve_dashboard.py fills it (every decision with an outcome),
then it times what `serve_floor.ServeFloor` does when an outcome was committed since the last floor task:
read the store's outcomes (`Store.outcomes`), build the learner over them (`serve_floor.learner_from`),
and one assignment (`FloorLearner.assign`, the median of 200 keys). Without a new outcome only the
assignment runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_serve_dashboard import fill_store

from router_oracle.frontier import ModelPoint
from router_train.scoring.floor import Objective
from router_train.serve.store_open import open_store
from router_train.serve_floor import learner_from

POOL = ["claude-opus-4.7", "gpt-5.5", "nemotron-3-super"]
PRIOR = [
    ModelPoint(model="claude-opus-4.7", cost=1.2, resolved=0.78),
    ModelPoint(model="gpt-5.5", cost=0.7, resolved=0.70),
    ModelPoint(model="nemotron-3-super", cost=0.45, resolved=0.62),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outcomes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    objective = Objective(budget=0.8)
    print(f"{'outcomes':>9} {'read ms':>9} {'learner ms':>11} {'assign ms':>10}")
    for n in args.outcomes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "store.sqlite"
            fill_store(path, n, 1.0, POOL, "0" * 64)
            store = open_store(path)
            try:
                started = time.perf_counter()
                outcomes = store.outcomes()
                read = time.perf_counter() - started
            finally:
                store.close()
            started = time.perf_counter()
            learner = learner_from(PRIOR, objective, outcomes)
            build = time.perf_counter() - started
            times = []
            for k in range(200):
                t0 = time.perf_counter()
                learner.assign(f"bench-key-{k}")
                times.append(time.perf_counter() - t0)
            assign = 1000 * statistics.median(times)
            print(f"{n:>9} {1000 * read:>9.1f} {1000 * build:>11.1f} {assign:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
