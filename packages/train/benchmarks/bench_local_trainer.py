"""Benchmark of `router-train local`: time per GRPO step, total wall time, held-out metrics.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/bench_local_trainer.py [--steps N] [--split-seeds 0,1,2,3,4]

Trains the default config on the env's bundled table once per split seed and prints, per seed, the
time per GRPO step and per run (a run: the final training plus the prior shift's inner trainings)
and the held-out summary. The held-out figures are one 100-task split each: for how good the router
is, `router-train evaluate --folds 5` is the judgement.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=None, help="default: the trainer's")
    parser.add_argument("--split-seeds", default="0", help="comma-separated env split seeds")
    parser.add_argument("--table", type=Path, default=None, help="default: the env's bundled table")
    args = parser.parse_args()

    t0 = time.perf_counter()
    from router_train.local.config import LocalTrainConfig
    from router_train.local.heldout import format_summary
    from router_train.local.trainer import train_local

    print(f"import: {time.perf_counter() - t0:.2f} s")
    seeds = [int(s) for s in args.split_seeds.split(",")]
    gaps: list[float] = []
    rows: dict[str, list[tuple[float, float, float, float]]] = {}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = LocalTrainConfig(
                table_path=args.table,
                output_dir=Path(tmp),
                split_seed=seed,
                **({"steps": args.steps} if args.steps else {}),
            )
            result = train_local(cfg, progress=False)
        s = result.summary
        print(
            f"\n== split_seed={seed}: {result.steps} steps x {cfg.tasks_per_step} tasks x "
            f"{cfg.samples_per_task} samples, {result.train_tasks} train tasks per epoch "
            f"(upsample={cfg.upsample})"
        )
        runs = cfg.shift_folds + 1 if cfg.shift_folds else 1
        print(
            f"time per step: {1000 * result.seconds_per_step:.2f} ms; per run ({runs} trainings of "
            f"{cfg.steps} steps, featurisation and scoring included): {result.wall_seconds:.2f} s"
        )
        print(format_summary(s))
        if s.gap_vs_mix is not None:
            gaps.append(s.gap_vs_mix)
        for r in s.rows:
            rows.setdefault(r.name, []).append((r.mean_reward, r.accuracy, r.resolved_rate, r.mean_cost))
    if len(seeds) > 1:
        print(f"\n== mean over split seeds {seeds}")
        print(f"{'router':28s} {'reward':>7s} {'acc':>6s} {'resolved':>8s} {'$/task':>7s}")
        for name, vals in rows.items():
            means = [statistics.fmean(v[i] for v in vals) for i in range(4)]
            print(f"{name:28s} {means[0]:7.3f} {means[1]:6.3f} {means[2]:8.3f} {means[3]:7.3f}")
        if gaps:
            print(
                f"gap vs best single-model mix at same cost: mean {statistics.fmean(gaps):+.4f}, "
                f"per seed {' '.join(f'{g:+.4f}' for g in gaps)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
