"""Benchmark: cross-validated `router-train evaluate` on the bundled table (issue 9's speed goal).

5 folds x 5 fold seeds (25 fits) with every built-in baseline and one local GRPO config (`local-grpo`,
the defaults), as `router-train evaluate --folds 5` runs it; prints the wall time of the fits, of the
metrics and bootstraps, of the cost dial curves, and of writing the report, then the table. Run from
the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/bench_evaluate_cv.py [--jobs 2] [--folds 5] [--fold-seeds 0,1,2,3,4]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    parser.add_argument("--table", type=Path, default=None, help="default: the env's bundled table")
    args = parser.parse_args()

    t0 = time.perf_counter()
    import router_train.evaluate.run as run_module
    from router_frontier_rl import bundled_table_path
    from router_train.evaluate import evaluate, read_table, render_terminal, write_report
    from router_train.evaluate.config import EvaluateConfig

    t_import = time.perf_counter() - t0
    table, info = read_table(args.table or bundled_table_path())
    seeds = [int(s) for s in args.fold_seeds.split(",")]

    # Time the fits apart from the rest by wrapping the one function evaluate runs them with.
    fit_seconds = 0.0
    run_fits = run_module.fit_partitions

    def timed(*a, **kw):  # type: ignore[no-untyped-def]
        nonlocal fit_seconds
        t = time.perf_counter()
        out = run_fits(*a, **kw)
        fit_seconds += time.perf_counter() - t
        return out

    run_module.fit_partitions = timed  # type: ignore[assignment]

    # The cost dial curves (issue 20) are one step after the fits: time it apart too.
    import router_train.evaluate.curves as curves_module

    curve_seconds = 0.0
    build_curves = curves_module.build_curves

    def timed_curves(*a, **kw):  # type: ignore[no-untyped-def]
        nonlocal curve_seconds
        t = time.perf_counter()
        out = build_curves(*a, **kw)
        curve_seconds += time.perf_counter() - t
        return out

    curves_module.build_curves = timed_curves  # type: ignore[assignment]
    t0 = time.perf_counter()
    report = evaluate(table, info, EvaluateConfig(folds=args.folds, fold_seeds=seeds, jobs=args.jobs))
    t_eval = time.perf_counter() - t0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        write_report(report, tmp)
    t_write = time.perf_counter() - t0

    print(render_terminal(report))
    fits = args.folds * len(seeds)
    print(
        f"{os.cpu_count()} CPUs, jobs {args.jobs}: {args.folds} folds x {len(seeds)} fold seeds = {fits} fits"
    )
    print(f"import (verifiers, scikit-learn)   {t_import:7.1f} s")
    print(f"fit every learned router, {fits} x   {fit_seconds:7.1f} s  ({fit_seconds / fits:.2f} s per fit)")
    print(f"metrics + paired bootstraps        {t_eval - fit_seconds:7.1f} s")
    print(f"  of which the cost dial curves    {curve_seconds:7.1f} s  (calibration, routes, bootstraps)")
    print(f"evaluate in all                    {t_eval:7.1f} s")
    print(
        f"curves: evaluate takes {t_eval / max(t_eval - curve_seconds, 1e-9):.2f}x its time without the "
        "curve step (the fits' extra per-model scores are inside the fit time)"
    )
    print(f"write report.json/.md/.png         {t_write:7.1f} s")


if __name__ == "__main__":
    main()
