"""Measurement: what information routes (issue 39 item 6, docs/routing-information.md).

Runs `router_train.evaluate.evaluate` under cross-validation once per feature set on one table, the
same folds and bootstrap seed each time, and prints every learned router's gap vs the mix per set
(exactly `router-train evaluate --task-features SPEC`'s figures) and each set's gain over text only as a
**paired** difference: both routers' per-task outcomes (pooled over fold seeds) on the same bootstrap
resamples of the tasks, each resample's frontier rebuilt (`scoring.vs_mix.gap_samples`), so the
interval is that of the difference, not two intervals side by side. Run from the repository root:

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \\
        python packages/train/benchmarks/routing_information.py --table T.json [--jobs 1] \\
        [--folds 5] [--fold-seeds 0,1,2,3,4] [--sets text,repo,issue,explored,bundled] [--json OUT.json]

Feature sets: `text` the default inputs (TF-IDF of the repository name and the issue: `task_text`);
`repo` + a one-hot column per repository of the table (written to a temporary features file; the
name as an explicit feature rather than one token among the issue's words); `issue` + the 15 bundled
issue-only judged features (`bundled-issue`); `explored` + the 8 repository-explored ones
(`bundled-repo`); `bundled` + all 23; `all` + all 23 and the repository one-hot.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

SETS = ("text", "repo", "issue", "explored", "bundled", "all")


def repo_one_hot(tasks, extra_spec: str | None, path: Path) -> str:  # type: ignore[no-untyped-def]
    """Write a features file: one 0/1 column per repository (plus `extra_spec`'s columns); its path."""
    from router_train.task_features import load_task_features, write_task_features

    repos = sorted({t.repo for t in tasks})
    columns = [f"repo:{r}" for r in repos]
    rows: dict[str, list[float | None]] = {
        t.instance_id: [1.0 if t.repo == r else 0.0 for r in repos] for t in tasks
    }
    if extra_spec is not None:
        extra = load_task_features(extra_spec)
        columns += list(extra.columns)
        for t in tasks:
            rows[t.instance_id] += [None if np.isnan(v) else v for v in extra.values[t.instance_id]]
    write_task_features(path, columns, rows)
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--table", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0,1,2,3,4")
    parser.add_argument("--sets", default=",".join(SETS[:5]))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--irt-only", action="store_true", help="the IRT router alone (evaluate --irt --no-baselines)"
    )
    parser.add_argument(
        "--native", action="store_true", help="every router at its native point (evaluate --no-safe-point)"
    )
    args = parser.parse_args()
    sets = args.sets.split(",")
    bad = [s for s in sets if s not in SETS]
    if bad or sets[0] != "text":
        parser.error(f"--sets: names from {SETS}, starting with text")

    import router_train.evaluate.run as run_module
    from router_train.evaluate import evaluate, read_table
    from router_train.evaluate.config import EvaluateConfig
    from router_train.scoring.bootstrap import percentile_interval
    from router_train.scoring.metrics import per_task_outcomes, task_resample
    from router_train.scoring.vs_mix import gap_samples

    table, info = read_table(args.table)
    seeds = [int(s) for s in args.fold_seeds.split(",")]
    tasks = sorted(table.tasks, key=lambda t: t.instance_id)  # evaluate's order under CV
    pool = table.pool.ids
    resample = task_resample(tasks, pool, args.seed)

    captured = []
    real_fit = run_module.fit_partitions

    def capture(*a, **kw):  # type: ignore[no-untyped-def]
        out = real_fit(*a, **kw)
        captured.append(out)
        return out

    run_module.fit_partitions = capture  # type: ignore[assignment]

    results: dict[str, dict[str, dict[str, object]]] = {}
    samples: dict[tuple[str, str], np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        specs: dict[str, str | None] = {
            "text": None,
            "repo": repo_one_hot(tasks, None, Path(tmp) / "repo.csv"),
            "issue": "bundled-issue",
            "explored": "bundled-repo",
            "bundled": "bundled",
            "all": repo_one_hot(tasks, "bundled", Path(tmp) / "all.csv"),
        }
        for name in sets:
            t0 = time.perf_counter()
            captured.clear()
            report = evaluate(
                table,
                info,
                EvaluateConfig(
                    folds=args.folds,
                    fold_seeds=seeds,
                    seed=args.seed,
                    jobs=args.jobs,
                    task_features=specs[name],
                    include_baselines=not args.irt_only,
                    irt=args.irt_only,
                    safe_point=not args.native,
                ),
            )
            fitted = captured[0]
            rows = {r.name: r for r in report.main.routers}
            results[name] = {}
            for router in fitted.kinds:
                r, c = per_task_outcomes(fitted.pooled(router), tasks)
                s = gap_samples(resample, r, c)
                samples[(name, router)] = s
                row = rows[router]
                ci = percentile_interval(s)
                # The same per-task outcomes and resamples as evaluate's own interval: checked, not assumed.
                assert ci is None or abs(100 * ci[0] - float(row.gap_vs_mix.low or 0)) < 1e-3, (router, ci)
                results[name][router] = {
                    "gap": row.gap_vs_mix.mean,
                    "low": row.gap_vs_mix.low,
                    "high": row.gap_vs_mix.high,
                    "sd": row.gap_vs_mix.sd,
                    "resolved": row.metrics.resolved_rate,
                    "cost": row.metrics.mean_cost,
                }
            print(f"[{name}: {time.perf_counter() - t0:.0f} s]", flush=True)

    routers = list(results["text"])
    print(
        f"\n{args.table} ({len(tasks)} tasks): gap vs mix, points [95% paired bootstrap], sd over fold seeds"
    )
    print(f"{args.folds} folds x fold seeds {args.fold_seeds}; gain = set minus text only, paired")
    diffs: dict[str, dict[str, object]] = {}
    for router in routers:
        print(f"\n{router}")
        base = results["text"][router]["gap"]
        for name in sets:
            res = results[name][router]
            line = (
                f"  {name:9s} {_fmt(res['gap'])} [{_fmt(res['low'])}, {_fmt(res['high'])}]"
                f" sd {_fmt(res['sd'])}"
                f"  resolved {100 * float(res['resolved']):.1f}% ${float(res['cost']):.3f}"  # type: ignore[arg-type]
            )
            if name != "text" and base is not None and res["gap"] is not None:
                d = samples[(name, router)] - samples[("text", router)]
                ci = percentile_interval(d)
                gain = float(res["gap"]) - float(base)  # type: ignore[arg-type]
                lo, hi = (None, None) if ci is None else (100 * ci[0], 100 * ci[1])
                diffs.setdefault(router, {})[name] = {"gain": round(gain, 4), "low": lo, "high": hi}
                line += f"   gain {_fmt(gain)} [{_fmt(lo)}, {_fmt(hi)}]"
            print(line)
    if args.json:
        args.json.write_text(json.dumps({"gaps": results, "gains": diffs}, indent=1) + "\n")


def _fmt(v: object) -> str:
    return "  n/a" if v is None else f"{float(v):+.1f}"  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
