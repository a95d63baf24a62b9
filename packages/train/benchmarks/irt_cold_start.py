"""Benchmark: the any-pool cold start of the IRT model (issue 32 item 4): how many of a new run's results
its ability needs before its predicted resolve probabilities are as good as with all of them.

For each of the bundled candidates' runs in turn: the IRT model (k = 1, `router_train.irt.model.fit_irt`,
the router's default penalties) is fitted on every task with every OTHER run, so the tasks' parameters
(a_i, b_i) never see the held-out run. The tasks are cut into 5 folds (`stratified_folds` of the bundled
table, by fold seed); the held-out run's (theta, c) are fitted, all else fixed, from n of its results on
the other folds' tasks (n drawn at random, `--draws` times), and scored on the fold's tasks by log-loss
and Brier score of its outcomes. References: n = 0 (the other runs' mean theta and c) and the run's own mean
rate over the same n tasks (no IRT). Run from the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/irt_cold_start.py [--ns 5,10,25,50,100,200,400] [--draws 5]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log1p

from router_frontier_rl import bundled_table_path
from router_frontier_rl.split import stratified_folds
from router_oracle.results_matrix import load_results_matrix
from router_train.evaluate import read_table
from router_train.irt.model import IrtPenalty, fit_irt

CLIP = 1e-6


def fit_run(a: np.ndarray, b: np.ndarray, y: np.ndarray, pen: IrtPenalty) -> tuple[float, float]:
    """(theta, c) of one run from its outcomes `y` on tasks with parameters (a, b), the model's ridge."""

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        z = a * x[0] + x[1] - b
        nll = np.where(z > 0, z + log1p(np.exp(-z)), log1p(np.exp(z))) - y * z
        g = expit(z) - y
        loss = float(nll.sum()) + pen.theta * x[0] ** 2 + pen.c * x[1] ** 2
        return loss, np.asarray([(g * a).sum() + 2 * pen.theta * x[0], g.sum() + 2 * pen.c * x[1]])

    res = minimize(objective, np.zeros(2), jac=True, method="L-BFGS-B")
    return float(res.x[0]), float(res.x[1])


def scores(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    q = np.clip(p, CLIP, 1 - CLIP)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))), float(np.mean((p - y) ** 2))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ns", default="5,10,25,50,100,200,400")
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--fold-seed", type=int, default=0)
    args = parser.parse_args()
    ns = [int(n) for n in args.ns.split(",")]
    table = read_table(bundled_table_path())[0]
    matrix = load_results_matrix()
    ids = [t.instance_id for t in table.tasks]
    rows = matrix.rows(ids)
    y_all = matrix.resolved[rows].astype(np.float64)
    pos = {t: i for i, t in enumerate(ids)}
    folds = [np.asarray([pos[t] for t in f]) for f in stratified_folds(table.tasks, 5, args.fold_seed)]
    pen = IrtPenalty()
    rng = np.random.default_rng(0)
    # (method, n) -> list of (log-loss, brier) per (run, fold, draw)
    out: dict[tuple[str, int], list[tuple[float, float]]] = {}
    n_runs = y_all.shape[1]
    for j in range(n_runs):
        others = [r for r in range(n_runs) if r != j]
        params = fit_irt(y_all[:, others], 1)
        a, b = params.a[:, 0], params.b
        for test in folds:
            train = np.setdiff1d(np.arange(len(ids)), test)
            yt = y_all[test, j]
            prior = a[test] * params.theta[:, 0].mean() + params.c.mean() - b[test]
            out.setdefault(("prior", 0), []).append(scores(expit(prior), yt))
            for n in ns:
                for _ in range(args.draws if n < len(train) else 1):
                    pick = rng.choice(train, size=min(n, len(train)), replace=False)
                    theta, c = fit_run(a[pick], b[pick], y_all[pick, j], pen)
                    out.setdefault(("irt", n), []).append(scores(expit(a[test] * theta + c - b[test]), yt))
                    rate = (y_all[pick, j].sum() + 1) / (len(pick) + 2)
                    out.setdefault(("mean rate", n), []).append(scores(np.full(len(test), rate), yt))
        print(f"run {j + 1}/{n_runs} done", flush=True)
    print(
        f"\nheld-out log-loss / Brier of a new run's outcomes, {n_runs} runs x 5 folds "
        f"(fold seed {args.fold_seed})"
    )
    print(
        f"  {'n results':>9s} {'irt log-loss':>12s} {'Brier':>7s} {'mean-rate log-loss':>18s} {'Brier':>7s}"
    )
    ll, br = np.mean(out[("prior", 0)], axis=0)
    print(f"  {0:9d} {ll:12.4f} {br:7.4f} {'-':>18s} {'-':>7s}")
    for n in ns:
        ll, br = np.mean(out[("irt", n)], axis=0)
        ml, mb = np.mean(out[("mean rate", n)], axis=0)
        print(f"  {n:9d} {ll:12.4f} {br:7.4f} {ml:18.4f} {mb:7.4f}")


if __name__ == "__main__":
    main()
