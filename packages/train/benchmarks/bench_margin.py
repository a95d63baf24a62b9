"""Benchmark: the safe point's margin chosen by measurement (issue 46, item 4).

Runs `router-train evaluate`'s cross-validation ONCE on a table (K folds x fold seeds, every learned
baseline at its safe point, optionally `local-grpo` and the IRT router), keeping each fit's stored inner
estimates (`scoring.safe_point`: the native route, the cheapest model and every dial point of the
curves). From them, without re-fitting, it derives what each candidate margin gives:

- the default row: per fit the native route where `safe_point.keeps_native(candidates, margin)`, else the
  fit's cheapest model; its gap vs the mix [95% paired bootstrap], cost per task and fits kept native;
- every dial point a user can select (the curves' 11 target shares): per fit the dial's routes where
  `safe_point.honoured(estimate, margin)`, else that fit's default point; how many of the 11 points have
  an interval wholly below the mix, and the worst point's gap;
- the gain thrown away: the native row's gap minus the default row's (positive native gains only).

Prints one table (and `--out` JSON). Run from the repository root, one pool per run:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/bench_margin.py --table T.json --name POOL [--local] [--irt]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MARGINS = (0.0, 0.0025, 0.005, 0.01, 0.015, 0.02)
"""Candidate margins (fractions): 0, 0.25, 0.5, 1, 1.5 and 2 points."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--table", type=Path, default=None, help="default: the env's bundled table")
    parser.add_argument("--name", default="reference", help="the pool's name in the table printed")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    parser.add_argument("--local", action="store_true", help="also local-grpo (slower)")
    parser.add_argument("--irt", action="store_true", help="also the IRT router (evaluate's `--irt` row)")
    parser.add_argument(
        "--no-baselines", action="store_true", help="leave out the three classifiers (with --local/--irt)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here too")
    args = parser.parse_args()

    from router_frontier_rl import bundled_table_path
    from router_train.evaluate import read_table
    from router_train.evaluate.design import fold_partitions
    from router_train.evaluate.fitted import fit_partitions
    from router_train.fitting import fitters_for
    from router_train.fitting.fit import FitRequest
    from router_train.local.config import LocalTrainConfig
    from router_train.local.fitter import LOCAL_ROUTER_NAME
    from router_train.route.kinds import baseline as baseline_kind
    from router_train.route.kinds import irt as irt_kind
    from router_train.route.kinds import local as local_kind

    t0 = time.perf_counter()
    table, _ = read_table(args.table or bundled_table_path())
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    parts = fold_partitions(table, str(args.table), args.folds, seeds)
    local = [(LOCAL_ROUTER_NAME, LocalTrainConfig())] if args.local else []
    options = {
        baseline_kind.KIND_NAME: not args.no_baselines,
        local_kind.KIND_NAME: local,
        irt_kind.KIND_NAME: args.irt,
    }
    request = FitRequest(table, table.tasks, options)
    scores: list[list] = []  # type: ignore[type-arg]
    fit_partitions(parts, fitters_for(request), 0, jobs=1, progress=True, scores=scores)
    fit_s = time.perf_counter() - t0
    rows = margin_rows(args.name, table, parts, scores)
    print_rows(rows)
    print(
        f"\n{len(parts)} fits in {fit_s:.0f} s; margins derived in {time.perf_counter() - t0 - fit_s:.0f} s"
    )
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


def margin_rows(name: str, table, parts, scores) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    """Per router and margin, the default row, the dial points and the gain thrown away."""
    from router_train.evaluate.curves import TARGET_SHARES, fold_dials
    from router_train.scoring.dial import apply_dial, outcome_matrices
    from router_train.scoring.safe_point import (
        cheapest_index,
        default_margin,
        dial_margin,
        honoured,
        keeps_native,
        share_estimate,
    )

    pool = list(table.pool.ids)
    repeats = max(p.repeat for p in parts) + 1
    # Router -> per fit: (partition, native picks, cheapest col, candidates, per-share dial picks).
    fits: dict[str, list[tuple]] = {}  # type: ignore[type-arg]
    for p, fitted in zip(parts, scores, strict=True):
        outcomes = outcome_matrices(p.train, pool)
        for s in fitted:
            if s.safe_point is None or not s.safe_point.candidates:
                continue
            dials, _, price = fold_dials(s, p.train, outcomes, TARGET_SHARES)
            dial_picks = apply_dial(s.test, price, dials)  # (shares, test tasks)
            native = native_picks(s, price)
            cheap = cheapest_index(p.train, pool)
            fits.setdefault(s.name, []).append((p, native, cheap, s.safe_point, dial_picks))
    out = []
    for router, per_fit in fits.items():
        native_gap = _row(table, pool, repeats, [(p, nat) for p, nat, *_ in per_fit])
        # Each candidate margin for both the default and the dial, then the shipped pair (the margins each
        # fit stored: its kind's `safe_point.Margins`): what a user gets.
        settings = [(f"{100 * m:g}", m, m) for m in MARGINS] + [("shipped", None, None)]
        for label, margin, dial_at in settings:
            default, kept = [], 0
            for p, nat, cheap, sp, _ in per_fit:
                keep = keeps_native(sp.candidates, default_margin(sp) if margin is None else margin)
                kept += keep
                default.append((p, nat if keep else np.full(len(p.test), cheap)))
            row = _row(table, pool, repeats, default)
            dial_rows = []
            for j, share in enumerate(TARGET_SHARES):
                picks = []
                for (p, _, _, sp, dp), (_, dflt) in zip(per_fit, default, strict=True):
                    est = share_estimate(sp, share)
                    at = dial_margin(sp) if dial_at is None else dial_at
                    picks.append((p, dp[j] if est is not None and honoured(est, at) else dflt))
                dial_rows.append(_row(table, pool, repeats, picks))
            below = [d for d in dial_rows if d["high"] is not None and d["high"] < 0]
            worst = min(dial_rows, key=_gap)
            out.append(
                {
                    "pool": name,
                    "router": router,
                    "margin_points": label,
                    "default": row,
                    "native_fits": f"{kept}/{len(per_fit)}",
                    "native": native_gap,
                    "gain_thrown_away": round(max(_gap(native_gap), 0.0) - max(_gap(row), 0.0), 2),
                    "dial_points_below": len(below),
                    "worst_dial_point": worst,
                }
            )
    return out


def native_picks(s, price: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The fit's native route of its test tasks, as it deploys: the argmax of its scores; for a near-tie
    router (the IRT router, `RouterScores.tolerance` set) the cheapest of the models its capped scores
    tie (`irt.router.near_tie_routes`: its scores are in pool order, not in order of cost, so a plain
    argmax would take the first of the tie, not the cheapest)."""
    from router_train.scoring.dial import apply_dial

    if s.tolerance is None:
        return apply_dial(s.test, price, 0.0)
    tied = s.test >= s.test.max(axis=1, keepdims=True) - 1e-12
    return np.argmin(np.where(tied, np.asarray(price, dtype=float)[None, :], np.inf), axis=1)


def _row(table, pool: list[str], repeats: int, picks: Sequence[tuple]) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The gap vs the mix in points [95% paired bootstrap] and the cost of routes given per fit, pooled
    over fold seeds as evaluate's rows are."""
    from router_train.scoring.decisions import from_labels
    from router_train.scoring.metrics import compute_metrics, single_model_points, task_resample
    from router_train.scoring.vs_mix import gap_in_points

    labels: dict[str, list[str | None]] = {}
    per_repeat: list[dict[str, list[str | None]]] = [{} for _ in range(repeats)]
    for p, cols in picks:
        for t, j in zip(p.test, cols, strict=True):
            labels.setdefault(t.instance_id, []).append(pool[int(j)])
            per_repeat[p.repeat][t.instance_id] = [pool[int(j)]]
    tasks = table.tasks
    singles = single_model_points(tasks, pool)
    m = compute_metrics(from_labels("r", "baseline", labels), tasks, singles, task_resample(tasks, pool, 0))
    seeds = [compute_metrics(from_labels("r", "baseline", r), tasks, singles).frontier for r in per_repeat]
    assert m.frontier is not None
    g = gap_in_points(m.frontier.gap_vs_mix, m.frontier.gap_ci, [f.gap_vs_mix if f else None for f in seeds])
    return {"gap": g.mean, "low": g.low, "high": g.high, "cost": round(m.mean_cost, 4)}


def _gap(r: dict) -> float:  # type: ignore[type-arg]
    """The row's gap in points (a row cheaper than every model, gap None, as 0)."""
    return 0.0 if r["gap"] is None else float(r["gap"])


def _fmt(r: dict) -> str:  # type: ignore[type-arg]
    lo = "?" if r["low"] is None else f"{r['low']:+.2f}"
    hi = "?" if r["high"] is None else f"{r['high']:+.2f}"
    return f"{_gap(r):+.2f} [{lo}, {hi}] ${r['cost']:.3f}"


def print_rows(rows: Sequence[dict]) -> None:  # type: ignore[type-arg]
    head = (
        "pool",
        "router",
        "margin",
        "default point",
        "native fits",
        "gain lost",
        "dial pts below",
        "worst dial pt",
    )
    table = [head] + [
        (
            r["pool"],
            r["router"],
            r["margin_points"],
            _fmt(r["default"]),
            r["native_fits"],
            f"{r['gain_thrown_away']:.2f}",
            f"{r['dial_points_below']}/11",
            _fmt(r["worst_dial_point"]),
        )
        for r in rows
    ]
    widths = [max(len(str(row[j])) for row in table) for j in range(len(head))]
    for row in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
