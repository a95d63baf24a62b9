"""Benchmark of `router-train evaluate-anypool`: wall and CPU time of the protocol, and its headline.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
    python packages/train/benchmarks/bench_evaluate_anypool.py [--quick] [--fold-seeds 0] [--jobs 2]

Default: the default protocol on the bundled data (every provider held out in turn, 3 drawn pools of 3
per provider plus the `default` pool, 5 task folds, fold seed 0). Prints the number of fits, the wall
time of fitting and of scoring, the CPU time of this process and its workers, the machine's load, and
the averages over pools (as the command prints them).
"""

from __future__ import annotations

import argparse
import os
import resource
import time


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="few-step trainers (the --quick setting)")
    parser.add_argument("--fold-seeds", default="0")
    parser.add_argument("--pools", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4))
    args = parser.parse_args()

    t0 = time.perf_counter()
    from router_frontier_rl.bundled import bundled_table_path
    from router_oracle.derive import CandidateIndex
    from router_train.anypool.config import AnyPoolTrainConfig
    from router_train.evaluate import read_table
    from router_train.evaluate_anypool import NamedPool, evaluate_any_pool, held_out_groups, quick_configs
    from router_train.evaluate_anypool.config import AnyPoolEvalConfig
    from router_train.evaluate_anypool.report import render_terminal
    from router_train.local.config import LocalTrainConfig

    print(f"import: {time.perf_counter() - t0:.1f} s")
    index = CandidateIndex.load()
    table, info = read_table(bundled_table_path())
    groups = held_out_groups(index, "provider")
    anypool, fixed = quick_configs() if args.quick else (AnyPoolTrainConfig(), LocalTrainConfig())
    cpu0, t0 = _cpu(), time.perf_counter()
    report = evaluate_any_pool(
        index,
        table,
        info,
        groups,
        AnyPoolEvalConfig(
            held_out_by="provider",
            drawn_pools=args.pools,
            named_pools=[NamedPool(name=table.pool.name, ids=table.pool.ids)],
            fold_seeds=[int(s) for s in args.fold_seeds.split(",")],
            anypool_config=anypool,
            fixed_config=fixed,
            jobs=args.jobs,
        ),
    )
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    load = os.getloadavg()
    text = render_terminal(report)
    print(text[: text.index("per held-out group")].rstrip())
    print(report.notes[0])
    print(
        f"protocol ({'quick' if args.quick else 'default'} trainers, {args.jobs} jobs, "
        f"{len(report.pools)} pool evaluations): {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"(this process and its workers); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
