"""Benchmark: a budget is a promise (issue 53, goal 1), out of sample.

Runs `router-train evaluate`'s cross-validation once on a table (K folds x fold seeds, every learned
classifier at its safe point, optionally `local-grpo`), then `evaluate.objectives.served_objectives`:
per objective (10 budgets from the cheapest to the dearest model, 3 quality targets) what is served
(the router where its inner estimate backs its point, else the floor) against the mix at the objective,
with the rows' 95% paired bootstrap, and the realised spend over the budget. Prints the table and a
verdict per goal: no interval wholly below the mix, spend within [0.8, 1.05] x budget (or below it at
the dearest model), spend monotone in the budget.

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/bench_objectives.py --table T.json --fold-seeds 0 [--local]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import time
from pathlib import Path

SPEND_BAND = (0.8, 1.05)
"""Realised spend over the budget the goal allows."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--table", type=Path, default=None, help="default: the env's bundled table")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0")
    parser.add_argument("--local", action="store_true", help="also local-grpo (slower)")
    parser.add_argument(
        "--cache", type=Path, default=None, help="pickle of the fits: read if there, else written"
    )
    args = parser.parse_args()

    from router_frontier_rl import bundled_table_path
    from router_train.evaluate import read_table
    from router_train.evaluate.design import fold_partitions
    from router_train.evaluate.fitted import fit_partitions
    from router_train.evaluate.objectives import objective_table, served_objectives
    from router_train.fitting import FitRequest, fitters_for
    from router_train.local.config import LocalTrainConfig
    from router_train.local.fitter import LOCAL_ROUTER_NAME
    from router_train.route.kinds import baseline as baseline_kind
    from router_train.route.kinds import local as local_kind

    t0 = time.perf_counter()
    path = args.table or bundled_table_path()
    table, _ = read_table(path)
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    parts = fold_partitions(table, str(path), args.folds, seeds)
    local = [(LOCAL_ROUTER_NAME, LocalTrainConfig())] if args.local else []
    request = FitRequest(table, table.tasks, {baseline_kind.KIND_NAME: True, local_kind.KIND_NAME: local})
    scores: list[list] = []  # type: ignore[type-arg]
    if args.cache is not None and args.cache.is_file():
        scores = pickle.loads(args.cache.read_bytes())
    else:
        fit_partitions(parts, fitters_for(request), 0, jobs=1, progress=False, scores=scores)
        if args.cache is not None:
            args.cache.write_bytes(pickle.dumps(scores))
    fit_s = time.perf_counter() - t0
    rows = served_objectives(parts, scores, table.tasks, table.pool.ids, 0)
    print(f"table {path} ({len(table.tasks)} tasks), {args.folds} folds x fold seeds {args.fold_seeds}")
    print("\n".join(objective_table(rows)))
    print()
    for name, points in rows.items():
        budgets = [p for p in points if p.budget is not None]
        below = [p.objective for p in points if p.high is not None and p.high < 0]
        dearest = max(p.budget or 0.0 for p in budgets)
        outside = [
            f"{p.objective} {p.spend_ratio:.2f}"
            for p in budgets
            if p.spend_ratio is not None
            and not (SPEND_BAND[0] <= p.spend_ratio <= SPEND_BAND[1])
            and not (p.budget == dearest and p.spend_ratio <= SPEND_BAND[1])
        ]
        spend = [p.cost_per_task for p in budgets]
        monotone = all(b >= a - 1e-9 for a, b in itertools.pairwise(spend))
        print(
            f"{name}: wholly below the mix at {len(below)} of {len(points)} objectives {below or ''}; "
            f"spend outside [{SPEND_BAND[0]}, {SPEND_BAND[1]}] x budget at {len(outside)} of {len(budgets)} "
            f"budgets {outside or ''}; spend monotone in the budget: {'yes' if monotone else 'NO'}"
        )
    print(f"\n{len(parts)} fits in {fit_s:.0f} s; objectives in {time.perf_counter() - t0 - fit_s:.0f} s")


if __name__ == "__main__":
    main()
