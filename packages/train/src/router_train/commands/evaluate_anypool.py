"""`router-train evaluate-anypool`: the any-pool router on held-out tasks and held-out models.

Exit codes: 0 the report was written; 2 bad input (unreadable candidates or table, unknown model or
group, impossible pool sizes, bad fold arguments), with one line on stderr and no report file written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.atomic_file import refuse_inputs_as_outputs
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.numeric_option import Count, Seed, option_type
from router_train.anypool import AnyPoolTrainConfig
from router_train.cli_args import add_fold_seeds, add_report_arguments, jobs_of, print_report
from router_train.commands import summary
from router_train.evaluate import read_table
from router_train.evaluate_anypool import (
    NamedPool,
    evaluate_any_pool,
    explicit_groups,
    held_out_groups,
    quick_configs,
    render_terminal,
    write_report,
)
from router_train.evaluate_anypool.design import HeldOutBy, HeldOutDesign
from router_train.evaluate_anypool.report import PLOT_PNG
from router_train.evaluate_anypool.run import REPORT_JSON, REPORT_MD
from router_train.local.config import FeatureConfig

DEFAULT_FOLDS = 5
DEFAULT_FOLD_SEEDS = [0]


def _ids(text: str) -> list[str]:
    ids = [i.strip() for i in text.split(",") if i.strip()]
    if not ids:
        raise argparse.ArgumentTypeError(f"expected comma-separated model ids, got {text!r}")
    return ids


def _named_pool(text: str) -> tuple[str, list[str]]:
    name, sep, ids = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=ID,ID,... got {text!r}")
    return name.strip(), _ids(ids)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "evaluate-anypool",
        help=summary("evaluate-anypool"),
        description=(
            "Leave-one-group-out over held-out model families (--held-out-by provider, base_model or "
            "model; or --held-out ID,ID groups) x K-fold cross-validation over the reference table's "
            "tasks (the folds of `evaluate --folds K`). Per group and fold, the any-pool router "
            "(`local-anypool`) trains on the other folds with pools drawn from every candidate outside "
            "the group. It is judged on evaluation pools holding one of the group's models (--pools "
            "seeded draws of --pool-size, plus every --pool holding one; by default the reference "
            "table's pool, `default`), next to fixed-pool routers trained on that pool alone on the same "
            "folds (`local-grpo` with its defaults, balanced TF-IDF logistic regression) and the pool's "
            "oracle. Per pool: each router's gap to the best random mix of the pool's single models; "
            "then averaged over pools, with a 95% bootstrap interval over resampled tasks (the same "
            "resampled tasks in every pool; pools, folds and fits are not resampled). Writes "
            "report.json, report.md and anypool_gaps.png into OUTDIR and prints the tables. Exit codes: "
            "0 written, 2 bad input."
        ),
    )
    p.add_argument("--candidates", default=None, metavar="F", help="candidates table (default: bundled)")
    p.add_argument(
        "--table",
        type=Path,
        default=None,
        help="reference oracle table: its tasks, and its oracle labels stratify the folds (default: the "
        "env's bundled table)",
    )
    p.add_argument(
        "--folds", type=option_type(Count), default=DEFAULT_FOLDS, metavar="K", help="task folds (default 5)"
    )
    add_fold_seeds(p, "one complete K-fold pass per seed (default 0; each seed costs a full protocol run)")
    p.add_argument(
        "--held-out-by",
        choices=("provider", "base_model", "model"),
        default=None,
        help="hold out one family at a time (default provider: every model of one maker)",
    )
    p.add_argument(
        "--groups",
        type=_ids,
        default=None,
        metavar="NAME,NAME",
        help="with --held-out-by: only these families (e.g. `minimax,googledeepmind`; default: all)",
    )
    p.add_argument(
        "--held-out",
        type=_ids,
        action="append",
        default=[],
        metavar="ID,ID",
        help="an explicit held-out group of candidate models (repeatable; instead of --held-out-by)",
    )
    for flag, kind, default, metavar, text in (
        ("--pools", Count, 3, "N", "drawn evaluation pools per group"),
        ("--pool-size", Count, 3, "N", "models per drawn pool"),
        ("--pool-seed", Seed, 0, "S", "seed of the pool draws"),
    ):
        p.add_argument(
            flag, type=option_type(kind), default=default, metavar=metavar, help=f"{text} (default {default})"
        )
    p.add_argument(
        "--pool",
        type=_named_pool,
        action="append",
        default=[],
        metavar="NAME=ID,ID,...",
        help="a named pool, evaluated in every group holding one of its models (repeatable; default: "
        "the reference table's pool)",
    )
    p.add_argument(
        "--irt",
        action="store_true",
        help="also the IRT router (row `irt`): one fit per fold on its train tasks' results of every "
        "candidate run (held-out models' included: their cold start), shared by every pool; adds a few "
        "seconds per fold",
    )
    p.add_argument(
        "--anypool-irt",
        action="store_true",
        help="train the any-pool router with IRT inputs (`local-anypool --irt`: each pool model's predicted "
        "resolve probability as model features; one IRT fit per fold, shared by the groups)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="few-step trainers (20 GRPO steps each): a smoke run of the plumbing, not a result",
    )
    add_report_arguments(p, "processes running fits in parallel", "seed of the classifier and the bootstrap")
    p.set_defaults(func=run, error_prefix="error: ")  # EvaluateError, CandidatesError, AnyPoolError: 2


def run(args: argparse.Namespace) -> int:
    if args.held_out and (args.held_out_by or args.groups):
        raise ValueError("--held-out gives the groups itself: not with --held-out-by or --groups")
    if args.groups and not args.held_out_by:
        args.held_out_by = "provider"
    refuse_inputs_as_outputs(
        [args.output / n for n in (REPORT_JSON, REPORT_MD, PLOT_PNG)],
        [("--table", args.table), ("--candidates", args.candidates)],
    )
    index = CandidateIndex.load(args.candidates or BUNDLED_CANDIDATES)
    table, info = read_table(args.table or bundled_table_path())
    by: HeldOutDesign
    if args.held_out:
        groups = explicit_groups(index, args.held_out)
        by = "explicit"
    else:
        family: HeldOutBy = args.held_out_by or "provider"
        groups = held_out_groups(index, family, args.groups)
        by = family
    if args.pool:
        named = [NamedPool(name=n, ids=ids) for n, ids in args.pool]
    else:
        # The reference table's pool, when its models are candidates (the bundled `default` is).
        ids = table.pool.ids
        named = [NamedPool(name=table.pool.name, ids=ids)] if set(ids) <= set(index.model_ids) else []
    anypool_cfg, fixed_cfg = quick_configs() if args.quick else (AnyPoolTrainConfig(), None)
    if args.anypool_irt:
        anypool_cfg = anypool_cfg.model_copy(update={"features": FeatureConfig(irt=True)})
    report = evaluate_any_pool(
        index,
        table,
        info,
        groups,
        held_out_by=by,
        drawn_pools=args.pools,
        pool_size=args.pool_size,
        pool_seed=args.pool_seed,
        named_pools=named,
        folds=args.folds,
        fold_seeds=args.fold_seeds or DEFAULT_FOLD_SEEDS,
        anypool_config=anypool_cfg,
        fixed_config=fixed_cfg,
        seed=args.seed,
        irt=args.irt,
        jobs=jobs_of(args),
        progress=True,
    )
    return print_report(write_report(report, args.output, plot=not args.no_plot), render_terminal(report))
