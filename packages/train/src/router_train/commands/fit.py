"""`router-train fit NAME`: fit one of evaluate's learned baselines, or the IRT router (`irt`), and save
it as a checkpoint.

Writes `OUTPUT_DIR/checkpoint.json` (`route.baseline_checkpoint.BaselineCheckpoint`, or
`irt.checkpoint.IrtCheckpoint` for `irt`), published whole or
not at all; `router-train route --checkpoint OUTPUT_DIR/checkpoint.json` routes with it. Exit codes:
0 written, 2 bad input (one line on stderr), 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import select_tasks
from router_oracle.atomic_file import output_directory, publish_directory, refuse_inputs_as_outputs
from router_oracle.file_hash import sha256_file
from router_oracle.table_check import load_table
from router_train.cli_args import field_flag, path_arg
from router_train.commands import summary
from router_train.irt.checkpoint import IRT_NAME
from router_train.irt.fit_command import fit_irt
from router_train.local.trainer import BUNDLED_TABLE_NAME
from router_train.route.baseline_checkpoint import (
    BASELINE_NAMES,
    BaselineCheckpoint,
    fit_baseline,
    save_baseline,
)

CHECKPOINT_FILE = "checkpoint.json"
"""The file `fit` writes in its output directory (the same name as `router-train local`'s)."""


def register(sub: Any) -> None:

    p = sub.add_parser(
        "fit",
        help=summary("fit"),
        description=(
            "Fit one of the learned baselines `router-train evaluate` judges, exactly as evaluate fits it, "
            "or the IRT router (`irt`: item response theory on every bundled run's results on these tasks; "
            "docs/irt.md), on every task of the table (--split all, the default) or the env's train split, "
            f"and save it as OUTPUT_DIR/{CHECKPOINT_FILE} for `router-train route`."
        ),
    )
    field_flag(p, BaselineCheckpoint, "name", "name", choices=(*BASELINE_NAMES, IRT_NAME))
    p.add_argument("--output-dir", type=path_arg, required=True, help="directory to write checkpoint.json to")
    field_flag(p, BaselineCheckpoint, "table", type=path_arg)
    for name, default in (("split", "all"), ("eval_fraction", 0.2), ("split_seed", 0), ("seed", 0)):
        field_flag(p, BaselineCheckpoint, name, default=default)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Bad input raises (a ValueError naming the file or option): one line, exit 2, nothing written.
    output_directory(args.output_dir)  # an unusable output path fails before the fit
    # `--output-dir` holding the `--table` as its checkpoint.json would replace the table by the fit.
    refuse_inputs_as_outputs([Path(args.output_dir) / CHECKPOINT_FILE], [("--table", args.table)])
    path: Path = args.table or bundled_table_path()
    table = load_table(path)
    if args.split == "all":
        train = list(table.tasks)
    else:
        train = select_tasks(table, "train", args.eval_fraction, args.split_seed)
    if args.name == IRT_NAME:
        return fit_irt(args, path, table.pool, train, CHECKPOINT_FILE)
    ckpt = fit_baseline(
        args.name,
        train,
        table.pool.ids,
        args.seed,
        table=str(args.table) if args.table is not None else BUNDLED_TABLE_NAME,
        table_sha256=sha256_file(path),
        split=args.split,
        eval_fraction=args.eval_fraction,
        split_seed=args.split_seed,
    )
    with publish_directory(args.output_dir, owned=[CHECKPOINT_FILE]) as staged:
        save_baseline(ckpt, staged / CHECKPOINT_FILE)
    print(f"{ckpt.name}: fitted on {len(ckpt.train_task_ids)} tasks of {ckpt.table} ({args.split})")
    print(f"checkpoint: {Path(args.output_dir) / CHECKPOINT_FILE}")
    return 0
