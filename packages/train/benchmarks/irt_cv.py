"""Benchmark: the IRT router (`router_train.irt`) under `evaluate`'s own cross-validation, beside the
built-in baselines fitted in the same folds (issue 32's measurement).

Pools: `default` (the bundled table), `multi_run`, and three 3-model pools drawn from the single-run
candidate models by seed: the candidates sorted by mean cost per task are cut into thirds (cheap / mid /
strong) and `numpy.random.default_rng(seed)` picks one model of each third. For each pool it prints the
gap vs the mix (95% paired-bootstrap interval), APGR and area vs mix of the cost-dial curve, resolved and
$/task of every learned row; then the IRT router's calibration on held-out tasks (Brier score and expected
calibration error of each pool model's predicted resolve rate, against the "no text" predictor: each
model's train-task mean), its held-out log-loss over all runs, the settings chosen by inner CV, fit time
and routing throughput. Run from the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/irt_cv.py [--folds 5] [--fold-seeds 0,1,2,3,4] [--pools ...]
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Sequence

import numpy as np

from router_oracle.build import build_table
from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import ResultsMatrix, load_results_matrix
from router_oracle.table import OracleTable
from router_train.evaluate import evaluate
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.design import fold_partitions
from router_train.evaluate.report import Evaluation, TableInfo
from router_train.irt.fitter import IrtFitter
from router_train.irt.model import fit_irt
from router_train.irt.router import fit_irt_router, pool_probabilities
from router_train.irt.task_regressor import DualRidge, FeatureSpace
from router_train.scoring.calibration import brier_score
from router_train.scoring.calibration import expected_calibration_error as ece

DRAW_SEEDS = (1, 2, 3)
"""Seeds of the three drawn 3-model pools."""


def drawn_pool(index: CandidateIndex, matrix: ResultsMatrix, seed: int) -> list[str]:
    """One cheap, one mid, one strong single-run candidate model (thirds by mean cost), drawn by `seed`."""
    single = [m for m in index.candidates.models if len(m.runs) == 1]
    col = {r: j for j, r in enumerate(matrix.run_ids)}
    by_cost = sorted(single, key=lambda m: (float(matrix.cost[:, col[m.runs[0].run]].mean()), m.id))
    thirds = np.array_split(np.arange(len(by_cost)), 3)
    rng = np.random.default_rng(seed)
    return [by_cost[int(rng.choice(t))].id for t in thirds]


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    q = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))


def calibration(
    table: OracleTable, fitter: IrtFitter, matrix: ResultsMatrix, folds: int, seeds: Sequence[int]
) -> None:
    """Held-out calibration of the fits `evaluate` made (in partition order)."""
    parts = fold_partitions(table, "table", folds, seeds)
    pool = table.pool
    pred: list[np.ndarray] = []
    prior: list[np.ndarray] = []
    obs: list[np.ndarray] = []
    run_pred, run_prior, run_obs = [], [], []
    for part, router in zip(parts, fitter.fits, strict=True):
        rp = router.run_probabilities(part.test)
        pred.append(pool_probabilities(rp, router.fit.run_ids, pool))
        tr = matrix.resolved[matrix.rows([t.instance_id for t in part.train])]
        base = np.broadcast_to(tr.mean(axis=0), rp.shape)
        prior.append(pool_probabilities(base, matrix.run_ids, pool))
        obs.append(np.asarray([[t.per_model[m].resolve_rate for m in pool.ids] for t in part.test]))
        run_pred.append(rp)
        run_prior.append(base)
        run_obs.append(matrix.resolved[matrix.rows([t.instance_id for t in part.test])].astype(float))
    p, q, y = np.vstack(pred), np.vstack(prior), np.vstack(obs)
    print("  calibration on held-out tasks (pool models; 'no text' = train-task mean rate):")
    print(f"    {'model':28s} {'Brier':>7s} {'no-text':>7s} {'ECE':>6s} {'no-text':>7s}")
    for j, m in enumerate(pool.ids):
        print(
            f"    {m:28s} {brier_score(p[:, j], y[:, j]):7.4f} {brier_score(q[:, j], y[:, j]):7.4f} "
            f"{ece(p[:, j], y[:, j]):6.3f} {ece(q[:, j], y[:, j]):7.3f}"
        )
    rp_, rq_, ry_ = np.vstack(run_pred), np.vstack(run_prior), np.vstack(run_obs)
    print(
        f"  held-out log-loss over all {rp_.shape[1]} runs: irt {log_loss(rp_, ry_):.4f}, "
        f"no-text {log_loss(rq_, ry_):.4f}; "
        f"Brier {brier_score(rp_, ry_):.4f} vs {brier_score(rq_, ry_):.4f}"
    )
    chosen = collections.Counter(
        f"k={r.fit.k} alpha={r.fit.alpha} T={r.fit.temperature} tol={r.fit.tolerance}" for r in fitter.fits
    )
    print(f"  settings chosen by inner CV ({len(fitter.fits)} fits): {dict(chosen)}")


def speed(table: OracleTable, matrix: ResultsMatrix) -> None:
    """Fit time of one plain MIRT fit and of the whole inner-CV fit on 400 tasks; routing throughput."""
    part = fold_partitions(table, "table", 5, [0])[0]
    rows = matrix.rows([t.instance_id for t in part.train])
    t0 = time.perf_counter()
    fit_irt(matrix.resolved[rows], 2)
    t1 = time.perf_counter()
    router = fit_irt_router(part.train, matrix, table.pool)
    t2 = time.perf_counter()
    router.route(table.tasks, table.pool)
    t3 = time.perf_counter()
    print(
        f"speed: MIRT k=2 on {len(rows)} tasks x {matrix.resolved.shape[1]} runs {t1 - t0:.2f} s; whole fit "
        f"with inner CV {t2 - t1:.2f} s; routing {len(table.tasks) / (t3 - t2):.0f} tasks/s"
    )


def cost_models(table: OracleTable, matrix: ResultsMatrix, folds: int, seeds: Sequence[int]) -> None:
    """Held-out error of each run's per-task cost predicted by its train mean vs a ridge on log cost over
    the router's text features (alpha 3): the router uses the train mean unless the ridge is better."""
    err: dict[str, list[np.ndarray]] = {"train mean": [], "ridge log cost": []}
    for part in fold_partitions(table, "table", folds, seeds):
        tr = matrix.rows([t.instance_id for t in part.train])
        te = matrix.rows([t.instance_id for t in part.test])
        space = FeatureSpace.fit(part.train)
        ridge = DualRidge.of(space.matrix(part.train))
        truth = matrix.cost[te]
        err["train mean"].append(np.broadcast_to(matrix.cost[tr].mean(axis=0), truth.shape) - truth)
        reg = ridge.regressor(np.log(matrix.cost[tr] + 0.01), 3.0)
        err["ridge log cost"].append(np.exp(reg.predict(space.matrix(part.test))) - 0.01 - truth)
    for name, e in err.items():
        x = np.vstack(e)
        print(
            f"cost model {name:15s}: held-out MAE {np.abs(x).mean():.4f} USD, "
            f"RMSE {np.sqrt((x**2).mean()):.4f} USD"
        )


def text_r2(table: OracleTable, matrix: ResultsMatrix, folds: int, seeds: Sequence[int]) -> None:
    """Diagnostic, not a router: how much of each task's IRT parameters its text predicts. The parameters
    are fitted on ALL tasks (a held-out task's own outcomes included, on purpose: they are the targets);
    the ridge (alpha 3) sees the other folds' tasks only. Held-out R^2 per parameter, k = 1."""
    rows = matrix.rows([t.instance_id for t in table.tasks])
    params = fit_irt(matrix.resolved[rows], 1)
    target = np.hstack([params.a, params.b[:, None]])
    pos = {t.instance_id: i for i, t in enumerate(table.tasks)}
    pred = np.zeros_like(target)
    for part in fold_partitions(table, "table", folds, seeds[:1]):
        tr = [pos[t.instance_id] for t in part.train]
        te = [pos[t.instance_id] for t in part.test]
        space = FeatureSpace.fit(part.train)
        reg = DualRidge.of(space.matrix(part.train)).regressor(target[tr], 3.0)
        pred[te] = reg.predict(space.matrix(part.test))
    r2 = 1 - ((pred - target) ** 2).sum(axis=0) / ((target - target.mean(axis=0)) ** 2).sum(axis=0)
    print(f"text -> IRT parameters (k=1), held-out R^2: a {r2[0]:.3f}, b {r2[1]:.3f}")


ROWS = ("cheapest-on-train", "tfidf-logreg", "tfidf-logreg(balanced)", "irt")


def print_rows(ev: Evaluation, keep: Sequence[str]) -> None:
    """One line per router named in `keep` (gap vs mix with its interval, APGR, area, resolved, $/task),
    then each single model's resolved rate and cost."""
    print(
        f"  {'router':24s} {'gap vs mix (95% CI)':>28s} {'APGR':>6s} {'area':>6s} "
        f"{'resolved':>8s} {'$/task':>7s}"
    )
    for r in ev.routers:
        if r.name not in keep:
            continue
        g, cm = r.gap_vs_mix, r.curve_metrics
        apgr = f"{cm.apgr.mean:6.3f}" if cm and cm.apgr.mean is not None else "     -"
        area = f"{cm.area_vs_mix.mean:+6.2f}" if cm and cm.area_vs_mix.mean is not None else "     -"
        ci = (
            f"{g.mean:+6.2f} [{g.low:+.2f}, {g.high:+.2f}]"
            if g.mean is not None and g.low is not None
            else str(g.mean)
        )
        print(
            f"  {r.name:24s} {ci:>28s} {apgr} {area} "
            f"{100 * r.metrics.resolved_rate:8.2f} {r.metrics.mean_cost:7.3f}"
        )
    for m in ev.single_models:
        print(f"    single {m.model:26s} resolved {100 * m.resolved:6.2f}  $/task {m.cost:.3f}")


def score(name: str, table: OracleTable, matrix: ResultsMatrix, folds: int, seeds: list[int]) -> None:
    print(f"\n== pool {name}: {', '.join(table.pool.ids)}")
    fitter = IrtFitter(matrix, table.pool)
    info = TableInfo(file=name, sha256="-", pool=table.pool.ids, n_tasks=len(table.tasks))
    t0 = time.perf_counter()
    report = evaluate(
        table, info, EvaluateConfig(folds=folds, fold_seeds=seeds, local_routers=[], jobs=1), fitters=[fitter]
    )
    print(f"  ({time.perf_counter() - t0:.0f} s)")
    ev = report.main
    keep = [
        r.name for r in ev.routers if r.name in ROWS or r.name == "oracle" or r.name.startswith("tfidf-knn")
    ]
    print_rows(ev, keep)
    calibration(table, fitter, matrix, folds, seeds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    parser.add_argument("--pools", default="bash-only,multi_run,draw1,draw2,draw3")
    parser.add_argument("--speed", action="store_true", help="also time the fit and routing")
    args = parser.parse_args()
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    matrix = load_results_matrix()
    index = CandidateIndex.load()
    # `bash-only`: the bundled candidates' pool (the old default); the default pool's runs are the
    # OpenHands Index's, which this benchmark's bundled results matrix does not hold.
    tables: dict[str, OracleTable] = {"bash-only": build_table("bash-only")}
    if "multi_run" in args.pools:
        tables["multi_run"] = build_table("multi_run")
    for s in DRAW_SEEDS:
        ids = drawn_pool(index, matrix, s)
        tables[f"draw{s}"] = index.table(ids, pool_name=f"draw{s}")
    if args.speed:
        speed(tables["bash-only"], matrix)
        cost_models(tables["bash-only"], matrix, args.folds, seeds[:1])
        text_r2(tables["bash-only"], matrix, args.folds, seeds)
    for name in [p for p in args.pools.split(",") if p]:
        score(name, tables[name], matrix, args.folds, seeds)


if __name__ == "__main__":
    main()
