"""Measurement: do the bundled judged features predict each model's success on held-out tasks?

The agent-psychometrics paper (arXiv 2604.00594) saw per-task success AUC 0.72 -> 0.79 from its
issue-only features. Here, per pool model of an oracle table: a logistic regression (C = 1, the
`tfidf-logreg` baselines' setting) of that model's `resolved` on each input set, 5-fold
cross-validation stratified by the outcome x fold seeds, inputs standardised (TF-IDF fitted) on the
train folds only; the AUC of the out-of-fold probabilities (averaged over fold seeds per task), its sd
over fold seeds, and for each set against `text` a paired bootstrap interval of the AUC difference
(1000 resamples of the tasks). Input sets: `repo` (one-hot repository), `issue` (bundled-issue, 15),
`explored` (bundled-repo, 8), `bundled` (23), `text` (the routers' TF-IDF of repository name and
issue, `text_features`), `text+bundled`. Run from the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/feature_auc.py --table T.json [--folds 5] [--fold-seeds 0,1,2,3,4]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

SETS = ("repo", "issue", "explored", "bundled", "text", "text+bundled")


def weighted_auc(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    """ROC AUC of scores `s` for labels `y` with task weights `w` (a bootstrap resample's multiplicities;
    ties count one half): `roc_auc_score` on the resampled tasks, without materialising them."""
    _, group = np.unique(s, return_inverse=True)
    pos = np.bincount(group, w * y)
    neg = np.bincount(group, w * (1 - y))
    below = np.cumsum(neg) - neg
    return float((pos * (below + 0.5 * neg)).sum() / (pos.sum() * neg.sum()))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--table", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    args = parser.parse_args()

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    from router_train.evaluate import read_table
    from router_train.task_features import load_task_features
    from router_train.text_features import fit_tfidf, tfidf_matrix

    t_start = time.perf_counter()
    table, _ = read_table(args.table)
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)
    ids = [t.instance_id for t in tasks]
    repos = sorted({t.repo for t in tasks})
    dense = {
        "repo": np.array([[1.0 if t.repo == r else 0.0 for r in repos] for t in tasks]),
        "issue": load_task_features("bundled-issue").matrix(ids),
        "explored": load_task_features("bundled-repo").matrix(ids),
        "bundled": load_task_features("bundled").matrix(ids),
    }
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    rng = np.random.default_rng(0)
    boot = rng.integers(0, len(tasks), size=(1000, len(tasks)))
    weights = [np.bincount(b, minlength=len(tasks)).astype(float) for b in boot]

    def inputs(name: str, train: np.ndarray, test: np.ndarray):  # type: ignore[no-untyped-def]
        blocks_tr, blocks_te = [], []
        if name.startswith("text"):
            vocab, idf = fit_tfidf([tasks[i] for i in train])
            blocks_tr.append(tfidf_matrix([tasks[i] for i in train], vocab, idf))
            blocks_te.append(tfidf_matrix([tasks[i] for i in test], vocab, idf))
        key = name.removeprefix("text").removeprefix("+")
        if key:
            x = dense[key]
            mu, sd = x[train].mean(axis=0), x[train].std(axis=0)
            sd[sd == 0] = 1.0  # a column constant on the train tasks keeps scale 1 (as FeatureScaling)
            blocks_tr.append(sp.csr_matrix((x[train] - mu) / sd))
            blocks_te.append(sp.csr_matrix((x[test] - mu) / sd))
        return sp.hstack(blocks_tr, format="csr"), sp.hstack(blocks_te, format="csr")

    print(
        f"{args.table} ({len(tasks)} tasks): per-model success AUC, "
        f"{args.folds}-fold CV x fold seeds {args.fold_seeds}"
    )
    print(
        "AUC of fold-seed-averaged out-of-fold probabilities (sd over fold seeds); vs text: paired bootstrap"
    )
    for model in table.pool.ids:
        y = np.array([1 if t.per_model[model].resolve_rate >= 0.5 else 0 for t in tasks])
        prob: dict[str, np.ndarray] = {}
        per_seed: dict[str, list[float]] = {}
        for name in SETS:
            p_all = np.zeros((len(seeds), len(tasks)))
            for k, s in enumerate(seeds):
                for train, test in StratifiedKFold(args.folds, shuffle=True, random_state=s).split(ids, y):
                    x_tr, x_te = inputs(name, train, test)
                    clf = LogisticRegression(C=1.0, max_iter=2000).fit(x_tr, y[train])
                    p_all[k, test] = clf.predict_proba(x_te)[:, 1]
            prob[name] = p_all.mean(axis=0)
            per_seed[name] = [float(roc_auc_score(y, p)) for p in p_all]
        print(f"\n{model}: resolves {y.mean():.1%}")
        for name in SETS:
            auc = roc_auc_score(y, prob[name])
            sd = f"{np.std(per_seed[name], ddof=1):.3f}" if len(seeds) > 1 else "n/a"
            line = f"  {name:13s} AUC {auc:.3f} (sd {sd})"
            if name != "text":
                d = [
                    weighted_auc(y, prob[name], w) - weighted_auc(y, prob["text"], w)
                    for w in weights
                    if 0 < (w * y).sum() < w.sum()
                ]
                lo, hi = np.percentile(d, [2.5, 97.5])
                line += f"   minus text {auc - roc_auc_score(y, prob['text']):+.3f} [{lo:+.3f}, {hi:+.3f}]"
            print(line)
    print(f"\n[{time.perf_counter() - t_start:.0f} s]")


if __name__ == "__main__":
    main()
