"""`router-train evaluate`: judge routers against the oracle, the baselines and the single models' frontier.

Exit codes: 0 the report was written; 2 bad input (unreadable or invalid table, traces file or
checkpoint, bad arguments, a router that would be scored on its own training tasks, an unusable output
directory), with one line on stderr; 130 interrupted. The report's files are published together or not
at all (`router_oracle.atomic_file.publish_directory`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.atomic_file import output_directory, refuse_inputs_as_outputs
from router_oracle.numeric_option import Count, option_type
from router_train.cli_args import (
    add_fold_seeds,
    add_report_arguments,
    add_table_arguments,
    given,
    jobs_of,
    print_report,
)
from router_train.commands import summary
from router_train.evaluate import Source, evaluate, read_table, render_terminal, write_report
from router_train.evaluate.report import PLOT_PNG
from router_train.evaluate.run import REPORT_JSON, REPORT_MD, default_local_routers
from router_train.evaluate.traces import traces_name
from router_train.local_options import config_from_options


def _named(value: str) -> tuple[str | None, Path]:
    """`NAME=PATH` or `PATH`."""
    name, sep, path = value.partition("=")
    if sep and name and path and "/" not in name:
        return name, Path(path)
    return None, Path(value)


def _local(text: str) -> tuple[str, str]:
    name, sep, options = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=OPTIONS (e.g. 'up=--upsample'), got {text!r}")
    return name.strip(), options


DEFAULT_FOLD_SEEDS = [0, 1, 2, 3, 4]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "evaluate",
        help=summary("evaluate"),
        description=(
            "Evaluate routing decisions on tasks no learned router trained on. With --folds K: K-fold "
            "cross-validation over every task of the table (folds stratified by oracle label, once per "
            "fold seed); in each fold the learned baselines (cheapest on train, TF-IDF classifiers) and "
            "the local GRPO router (`local-grpo`, plus any --local) are fitted on the other folds only. "
            "Without --folds: the env's one held-out split (--split). Fixed routers (always each model, "
            "uniform random, the oracle), checkpoints and vf-eval traces are scored on the same tasks; "
            "a checkpoint or traces are never scored on tasks they trained on (refused, exit 2, unless "
            "--allow-in-sample). The headline is each router's resolved rate against the best random "
            "mix of single models at the same cost, with a 95% paired-bootstrap interval; beside the "
            "oracle's, the part of its headroom rollout noise alone would produce (method: "
            "`router-oracle stats --help`; not measured for tables with no model run twice). With --folds, "
            "every learned router that scores models is also a cost dial: its out-of-sample curve from the "
            "cheapest to the strongest model's cost (each dial chosen on the fit's train tasks), APGR, "
            "CPT50/80 and area vs the mix (docs/evaluate-curves.md; curves.png). Writes "
            "report.json, report.md and cost_vs_resolved.png into OUTDIR, all three at once (other files "
            "there are kept), and prints the tables. Exit codes: 0 written, 2 bad input (one line on "
            "stderr, nothing written), 130 interrupted."
        ),
    )
    add_table_arguments(p)
    p.add_argument(
        "--folds",
        type=option_type(Count),
        nargs="?",
        const=5,
        default=None,
        metavar="K",
        help="cross-validate over every task with K folds (K default 5); without it: the env's split",
    )
    add_fold_seeds(p, "with --folds: one complete K-fold pass per seed (default 0,1,2,3,4)")
    p.add_argument(
        "--split",
        choices=("eval", "train", "all"),
        default=None,
        help="without --folds: the env split to evaluate on (default eval; train/all are in-sample)",
    )
    p.add_argument(
        "--local",
        type=_local,
        action="append",
        default=[],
        metavar="NAME=OPTIONS",
        help=(
            "also train the local GRPO router with these `router-train local` options in every fold and "
            "report it as NAME, e.g. --local 'up-wd3=--upsample --weight-decay 3' (repeatable)"
        ),
    )
    p.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="[NAME=]CKPT",
        help=(
            "checkpoint of any kind `router-train route` reads (`local`; `local-anypool`, on the "
            "table's pool; `fit`) to evaluate on tasks it never trained on (repeatable)"
        ),
    )
    p.add_argument(
        "--traces",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        help="vf-eval traces.jsonl, scored on the tasks it covers (repeatable; default name: its run dir)",
    )
    p.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="NAME",
        help="name of the --traces file in the same position (alternative to NAME=FILE)",
    )
    p.add_argument(
        "--only-covered",
        action="store_true",
        help="without --folds: evaluate only the split tasks every --traces file covers (a vf-eval -n N run)",
    )
    p.add_argument(
        "--allow-in-sample",
        action="store_true",
        help="score checkpoints/traces on tasks they trained on anyway; their rows are marked in-sample",
    )
    p.add_argument("--no-baselines", action="store_true", help="evaluate only the given routers")
    p.add_argument(
        "--irt",
        action="store_true",
        help="also fit the IRT router per fold (row `irt`, on the bundled runs' train-task results; slower) "
        "and report its calibration",
    )
    add_report_arguments(
        p, "processes fitting folds in parallel", "seed of the random baseline, classifiers and bootstrap"
    )
    p.set_defaults(func=run, error_prefix="error: ")  # EvaluateError, TableError, split errors: exit 2


def run(args: argparse.Namespace) -> int:
    output_directory(args.output)  # an unusable -o fails now, before the evaluation runs
    # ...and so does one whose report files would replace an input
    refuse_inputs_as_outputs(
        [args.output / name for name in (REPORT_JSON, REPORT_MD, PLOT_PNG)],
        [
            ("--table", args.table),
            *(("--traces", _named(v)[1]) for v in args.traces),
            *(("--checkpoint", _named(v)[1]) for v in args.checkpoint),
        ],
    )
    if len(args.name) > len(args.traces):
        raise ValueError(f"{len(args.name)} --name given for {len(args.traces)} --traces")
    if args.folds is not None:
        split_options = [
            o
            for o, v in (
                ("--split", args.split),
                ("--eval-fraction", args.eval_fraction),
                ("--split-seed", args.split_seed),
                ("--only-covered", args.only_covered or None),
            )
            if v is not None
        ]
        if split_options:
            raise ValueError(f"{', '.join(split_options)} select the env's split: not with --folds")
    elif args.fold_seeds is not None:
        raise ValueError("--fold-seeds needs --folds")
    checkpoints = []
    for value in args.checkpoint:
        name, path = _named(value)
        checkpoints.append(Source(name=name or f"ckpt:{path.stem}", path=path))
    traces = []
    for i, value in enumerate(args.traces):
        name, path = _named(value)
        if i < len(args.name):
            name = args.name[i]
        traces.append(Source(name=name or traces_name(path), path=path))
    local = []
    for name, options in args.local:
        try:
            local.append((name, config_from_options(options)))
        except ValueError as exc:
            raise ValueError(f"--local {name}={options}: {exc}") from None
    if args.no_baselines and not (checkpoints or traces or local or args.irt):
        raise ValueError("--no-baselines leaves nothing to evaluate: give --checkpoint, --traces or --local")
    table, info = read_table(args.table or bundled_table_path())
    report = evaluate(
        table,
        info,
        folds=args.folds,
        fold_seeds=args.fold_seeds or DEFAULT_FOLD_SEEDS,
        split=args.split or "eval",
        seed=args.seed,
        checkpoints=checkpoints,
        traces=traces,
        local_routers=local if args.no_baselines else _with_default(local),
        include_baselines=not args.no_baselines,
        irt=args.irt,
        only_covered=args.only_covered,
        allow_in_sample=args.allow_in_sample,
        jobs=jobs_of(args),
        progress=True,
        **given(args, "eval_fraction", "split_seed"),
    )
    return print_report(write_report(report, args.output, plot=not args.no_plot), render_terminal(report))


def _with_default(local: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`local-grpo` (the defaults) first, then the --local configurations."""
    return default_local_routers() + local
