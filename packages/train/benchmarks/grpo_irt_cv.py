"""Benchmark: the local GRPO router with and without the IRT inputs (`FeatureConfig.irt`) under
`evaluate`'s own cross-validation, beside the learned baselines fitted in the same folds (issue 32 item 4).

For each pool it prints the gap vs the mix (95% paired-bootstrap interval), APGR and area vs mix of the
cost-dial curve, resolved and $/task of `local-grpo`, `local-grpo+irt`, the TF-IDF logistic regressions
and cheapest-on-train. Run from the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/grpo_irt_cv.py [--folds 5] [--fold-seeds 0,1,2,3,4] \\
        [--pools default,multi_run] [--jobs 1]
"""

from __future__ import annotations

import argparse
import time

from irt_cv import print_rows

from router_frontier_rl import bundled_table_path
from router_oracle.build import build_table
from router_oracle.table import OracleTable
from router_train.evaluate import evaluate, read_table
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.fitted import LOCAL_ROUTER_NAME
from router_train.evaluate.report import TableInfo
from router_train.local.config import FeatureConfig, LocalTrainConfig

IRT_ROW = f"{LOCAL_ROUTER_NAME}+irt"
ROWS = ("cheapest-on-train", "tfidf-logreg", "tfidf-logreg(balanced)", LOCAL_ROUTER_NAME, IRT_ROW)


def score(name: str, table: OracleTable, folds: int, seeds: list[int], jobs: int) -> None:
    print(f"\n== pool {name}: {', '.join(table.pool.ids)}", flush=True)
    info = TableInfo(file=name, sha256="-", pool=table.pool.ids, n_tasks=len(table.tasks))
    routers = [
        (LOCAL_ROUTER_NAME, LocalTrainConfig()),
        (IRT_ROW, LocalTrainConfig(features=FeatureConfig(irt=True))),
    ]
    t0 = time.perf_counter()
    report = evaluate(
        table, info, EvaluateConfig(folds=folds, fold_seeds=seeds, local_routers=routers, jobs=jobs)
    )
    print(f"  ({time.perf_counter() - t0:.0f} s)")
    print_rows(report.main, ROWS)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    parser.add_argument("--pools", default="default,multi_run")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    for name in [p for p in args.pools.split(",") if p]:
        table = read_table(bundled_table_path())[0] if name == "default" else build_table(name)
        score(name, table, args.folds, seeds, args.jobs)


if __name__ == "__main__":
    main()
