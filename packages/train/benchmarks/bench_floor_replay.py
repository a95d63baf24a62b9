"""Benchmark: the floor on the team's own traffic (issue 53, goal 2), on the shipped cross-harness twins.

For each twin pair in both directions (prior: one harness's table; traffic: the other's), budgets at
25 / 50 / 75% of the way from the cheapest to the dearest model (on the prior table), and `--seeds` stream
seeds: the static floor (the prior table's mix) and the learning floor (`offpolicy.floor_learner`) serve
the traffic task by task; printed, per arm, the mean regret against the best mix in hindsight at the
budget [min, max over seeds] and the spend over the budget after 100 / 200 / 500 tasks. First line: the
prior strength measured from the twins' cross-harness disagreement (`floor_learner.prior_strength`).

Build the twin tables first (docs/oracle.md), into DIR:

    router-oracle build --pool bash-only-openhands --drop-missing -o DIR/oh.json
    router-oracle build --pool bash-only --tasks DIR/oh.json -o DIR/bo.json
    router-oracle build --pool trio-openhands -o DIR/trio-oh.json
    router-oracle build --pool trio-bash-only --tasks DIR/trio-oh.json -o DIR/trio-bo.json
    router-oracle build --pool claude-code -o DIR/cc.json
    router-oracle build --pool claude-openhands --tasks DIR/cc.json -o DIR/coh.json
    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/bench_floor_replay.py --dir DIR --seeds 10 [--plot OUT.png]

`--plot OUT.png` also draws each direction's regret and spend every `PLOT_EVERY` tasks at the
`--plot-share` budget (docs/img/floor-replay-regret.png).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

PAIRS = (("bo.json", "oh.json"), ("trio-bo.json", "trio-oh.json"), ("coh.json", "cc.json"))
"""The twin tables (as the docstring builds them): the same models under two harnesses."""
SHARES = (0.25, 0.5, 0.75)
"""Budgets: this share of the way from the cheapest to the dearest model on the prior table."""
PLOT_EVERY = 25
"""The plot's checkpoints: every this many tasks."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, required=True, help="where the twin tables are")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--strength", type=float, default=None, help="default: measured from the twins")
    parser.add_argument("--plot", type=Path, default=None, help="write the regret curves' PNG here")
    parser.add_argument("--plot-share", type=float, default=0.5, choices=SHARES, help="the plot's budget")
    args = parser.parse_args()

    from router_oracle.table_check import load_table
    from router_train.offpolicy.floor_learner import prior_strength
    from router_train.offpolicy.floor_replay import (
        CHECKPOINTS,
        at_checkpoints,
        budget_at,
        regret_lines,
        replay_objective,
        table_points,
        traffic_of,
    )
    from router_train.scoring.floor import Objective

    t0 = time.perf_counter()
    tables = {name: load_table(args.dir / name) for pair in PAIRS for name in pair}
    pool = {name: sorted(t.pool.ids) for name, t in tables.items()}
    pairs = [(table_points(tables[a], pool[a]), table_points(tables[b], pool[b])) for a, b in PAIRS]
    measured = prior_strength(pairs)
    strength = measured if args.strength is None else args.strength
    print(
        f"prior strength measured from the twins' disagreement: {measured:.1f} pseudo-tasks; "
        f"used {strength:.1f}"
    )
    seeds = list(range(args.seeds))
    panels = []
    for a, b in PAIRS:
        for prior_name, traffic_name in ((a, b), (b, a)):
            models = pool[prior_name]
            prior = table_points(tables[prior_name], models)
            traffic = traffic_of(tables[traffic_name], models)
            n = len(traffic.keys)
            for share in SHARES:
                objective = Objective(budget=round(budget_at(prior, share), 6))
                drawn = args.plot is not None and share == args.plot_share
                checkpoints = [*range(PLOT_EVERY, n + 1, PLOT_EVERY), *CHECKPOINTS] if drawn else CHECKPOINTS
                arms = replay_objective(traffic, prior, objective, seeds, checkpoints, strength=strength)
                name = f"{prior_name}->{traffic_name} {100 * share:.0f}%"
                print("\n".join(regret_lines(name, objective, at_checkpoints(arms, n))), flush=True)
                if drawn:
                    panels.append((f"{prior_name} -> {traffic_name}\n{objective.describe()}", arms))
    if args.plot is not None:
        from router_train.offpolicy.floor_replay_plot import render_regret_png

        title = (
            f"the floor on another harness's traffic: budget {100 * args.plot_share:.0f}% of the prior's "
            f"cost range, {args.seeds} stream seeds (mean, min-max band)"
        )
        args.plot.write_bytes(render_regret_png(panels, title))
        print(f"wrote {args.plot}")
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
