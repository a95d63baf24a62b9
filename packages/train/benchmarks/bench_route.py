"""Benchmark: routing throughput (tasks/s) of each local router kind on the 500 bundled tasks.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
    python packages/train/benchmarks/bench_route.py [--steps 600] [--repeats 3]

Trains (or fits) each router once: `router-train local` (default settings, `--steps`), the four saved
baselines of `router-train fit` (on every task), and `router-train local-anypool` (`--steps`, routing
the bundled default pool). Then times `load_router(...)` and `route_many(all 500 tasks)` (the code
`router-train route` runs), best of `--repeats`, and prints tasks/s. Endpoint mode is bound by the
server, not measured here.
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
    parser.add_argument("--steps", type=int, default=600, help="GRPO steps of the local router (600)")
    parser.add_argument("--anypool-steps", type=int, default=200, help="GRPO steps of the any-pool router")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from router_train.anypool.config import AnyPoolTrainConfig
    from router_train.anypool.run import AnyPoolRunConfig, run_any_pool
    from router_train.cli import main as cli
    from router_train.local.config import LocalTrainConfig
    from router_train.local.trainer import train_local
    from router_train.route import CheckpointSpec, RouterSpec, bundled_tasks, load_router
    from router_train.route.baseline_checkpoint import BASELINE_NAMES

    tasks = list(bundled_tasks().values())
    work = Path(tempfile.mkdtemp(prefix="bench-route-"))
    specs: list[tuple[str, RouterSpec]] = []
    t0 = time.perf_counter()
    train_local(LocalTrainConfig(output_dir=work / "local", steps=args.steps), progress=False)
    print(f"trained local ({args.steps} steps) in {time.perf_counter() - t0:.1f}s")
    specs.append(("local (GRPO)", CheckpointSpec(checkpoint=work / "local" / "checkpoint.json")))
    for name in BASELINE_NAMES:
        out = work / name.replace("(", "-").replace(")", "")
        t0 = time.perf_counter()
        assert cli(["fit", name, "--output-dir", str(out)]) == 0
        print(f"fitted {name} in {time.perf_counter() - t0:.1f}s")
        specs.append((name, CheckpointSpec(checkpoint=out / "checkpoint.json")))
    t0 = time.perf_counter()
    run_any_pool(
        AnyPoolRunConfig(
            output_dir=work / "anypool",
            held_out_models=["minimax-m2.5-high"],
            train=AnyPoolTrainConfig(steps=args.anypool_steps),
        ),
        progress=False,
    )
    print(f"trained local-anypool ({args.anypool_steps} steps) in {time.perf_counter() - t0:.1f}s")
    specs.append(
        (
            "local-anypool (default pool)",
            CheckpointSpec(checkpoint=work / "anypool" / "checkpoint.json", pool=Path("bash-only")),
        )
    )

    print(f"\nrouting {len(tasks)} bundled tasks (route_many, explain on), best of {args.repeats}:")
    print(f"{'router':32s} {'load s':>8s} {'route s':>8s} {'tasks/s':>9s}")
    for label, spec in specs:
        t0 = time.perf_counter()
        router = load_router(spec)
        load_s = time.perf_counter() - t0
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            decisions = router.route_many(tasks)
            best = min(best, time.perf_counter() - t0)
        assert len(decisions) == len(tasks) and all(d.model in router.pool for d in decisions)
        print(f"{label:32s} {load_s:8.3f} {best:8.3f} {len(tasks) / best:9.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
