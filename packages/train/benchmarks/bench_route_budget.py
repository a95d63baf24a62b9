"""Benchmark: `route --budget` moves spend monotonically with the budget (issue 53, goal 1).

Loads a checkpoint at 10 budgets evenly from the cheapest to the dearest model's mean cost on its training
tasks (`load_router(CheckpointSpec(budget=...))`, what `route --budget` runs), routes every task of the
table, and prints per budget who chose (router / floor), the mean cost and resolved rate of the routes on
the table's outcomes (the table's tasks include the router's training tasks: this measures the deploy
rule, not out-of-sample quality, which `bench_objectives.py` does), spend over the budget, and whether
spend is monotone in the budget.

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/bench_route_budget.py --checkpoint C.json [--table T.json]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

BUDGETS = 10
"""Budgets from the cheapest to the dearest model."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--table", type=Path, default=None, help="default: the env's bundled table")
    args = parser.parse_args()

    import numpy as np

    from router_frontier_rl import bundled_table_path
    from router_oracle.table_check import load_table
    from router_train.route import CheckpointSpec, load_router
    from router_train.scoring.dial import outcome_matrices

    table = load_table(args.table or bundled_table_path())
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)
    probe = load_router(CheckpointSpec(checkpoint=args.checkpoint, table=args.table, budget=1.0))
    assert probe.point.calibration is not None
    costs = probe.point.calibration.model_costs
    lo, hi = min(costs), max(costs)
    resolved, cost = outcome_matrices(tasks, probe.pool)
    rows = np.arange(len(tasks))
    spends = []
    print(f"{'budget':>8} {'chooser':>8} {'$/task':>7} {'spend/b':>7} {'resolved':>8}")
    for i in range(BUDGETS):
        budget = round(lo + i / (BUDGETS - 1) * (hi - lo), 6)
        router = load_router(CheckpointSpec(checkpoint=args.checkpoint, table=args.table, budget=budget))
        decisions = router.route_many(tasks, explain=False)
        cols = np.asarray([router.pool.index(d.model) for d in decisions if d.model is not None])
        c, r = float(cost[rows, cols].mean()), float(resolved[rows, cols].mean())
        spends.append(c)
        print(
            f"{budget:>8.3f} {decisions[0].chooser or '-':>8} {c:>7.3f} {c / budget:>7.2f} {100 * r:>7.1f}%"
        )
    monotone = all(b >= a - 1e-9 for a, b in itertools.pairwise(spends))
    print(f"spend monotone in the budget: {'yes' if monotone else 'NO'}")


if __name__ == "__main__":
    main()
