"""Benchmark of any-pool mode: env load time, and `router-train local-anypool` time and held-out figures.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
    python packages/train/benchmarks/bench_anypool.py [--held-out-models A,B] [--seeds 0,1] [--steps 200]

Prints: loading the bundled candidates table; loading the env's train and eval splits in any-pool mode
(one capability summary per drawn pool); then per training seed the any-pool router's one-split
sanity table (held-out tasks, pools holding a held-out model) and its timings.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--held-out-models", default="minimax-m2.5-high,gemini-3-flash-preview-high")
    parser.add_argument("--seeds", default="0", help="comma-separated training seeds")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--pool-size", type=int, default=3)
    args = parser.parse_args()
    held = [m for m in args.held_out_models.split(",") if m]

    t0 = time.perf_counter()
    from router_frontier_rl import RouterConfig, RouterTaskset
    from router_oracle.derive import CandidateIndex
    from router_train.anypool.config import AnyPoolTrainConfig
    from router_train.anypool.heldout import format_anypool_summary
    from router_train.anypool.run import AnyPoolRunConfig, run_any_pool

    print(f"import: {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    index = CandidateIndex.load()
    print(
        f"bundled candidates: {len(index.model_ids)} models, {len(index.task_ids)} tasks, "
        f"loaded in {time.perf_counter() - t0:.2f} s"
    )
    for split in ("train", "eval"):
        t0 = time.perf_counter()
        cfg = RouterConfig(pool_size=args.pool_size, split=split, held_out_models=held)
        tasks = list(RouterTaskset(cfg))
        took = time.perf_counter() - t0
        print(
            f"env any-pool {split} split: {len(tasks)} tasks in {took:.2f} s "
            f"({1000 * took / len(tasks):.1f} ms/task)"
        )
    for seed in [int(s) for s in args.seeds.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            run = AnyPoolRunConfig(
                held_out_models=held,
                eval_pool_size=args.pool_size,
                output_dir=Path(tmp),
                train=AnyPoolTrainConfig(steps=args.steps, seed=seed),
            )
            result = run_any_pool(run, progress=False)
        print(
            f"\n== seed {seed}: {args.steps} steps; wall {result.wall_seconds:.1f} s, pool bank "
            f"{result.bank_seconds:.1f} s, {1000 * result.seconds_per_step:.1f} ms/step"
        )
        print(format_anypool_summary(result.summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
