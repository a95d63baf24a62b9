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
from typing import Any, Literal

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import select_tasks
from router_oracle.infra.atomic_file import check_output_directory, publish_directory
from router_oracle.infra.file_hash import sha256_file
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Seed, Share
from router_oracle.table_check import load_table
from router_train.checkpoint_io import save_checkpoint
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.fit_source import FitSource
from router_train.fitting.baseline_fit import fit_baseline
from router_train.irt.checkpoint import IRT_NAME
from router_train.irt.fit_command import fit_irt
from router_train.irt.router import IrtConfig, check_enough_tasks
from router_train.local.trainer import BUNDLED_TABLE_NAME
from router_train.route.baseline_checkpoint import BASELINE_NAMES
from router_train.scoring.baselines import BALANCED_LOGREG_NAME, LOGREG_NAME
from router_train.task_features import load_task_features

CHECKPOINT_FILE = "checkpoint.json"
"""The file `fit` writes in its output directory (the same name as `router-train local`'s)."""


class Options(FrozenModel):
    """What `router-train fit`'s flags fill: the router to fit, the tasks it is fitted on and where its
    checkpoint goes. The split fields are also the checkpoint's (`BaselineCheckpoint`, `IrtCheckpoint`)."""

    name: str
    """The router: one of evaluate's learned baselines (`cheapest-on-train`, `tfidf-logreg`,
    `tfidf-logreg(balanced)`, `tfidf-knn(k=10)`), or `irt`, the IRT router (docs/irt.md)."""
    output_dir: Path
    """directory to write checkpoint.json to"""
    table: Path | None = None
    """The oracle table fitted on: its path as given, or `router_frontier_rl/data/oracle_table.json` (the
    env's bundled table, when none is given)."""
    split: Literal["all", "train"] = "all"
    """The tasks it is fitted on: every task of the table, or the env's train split."""
    eval_fraction: Share = 0.2
    """With `split` train: the env split's held-out share, in (0, 1)."""
    split_seed: Seed = 0
    """With `split` train: the env split's seed (0 to 2**32 - 1)."""
    seed: Seed = 0
    """Seed of the classifier (logistic regression's `random_state`), as evaluate's."""
    task_features: str | None = None
    """tfidf-logreg, tfidf-logreg(balanced), irt: also read these per-task features beside the text, as
    `router-train evaluate --task-features` (CSV or JSONL keyed by instance_id, or bundled-issue /
    bundled-repo / bundled); the checkpoint then needs them at routing time (`route --task-features`)"""


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
    field_flag(p, Options, "name", "name", choices=(*BASELINE_NAMES, IRT_NAME))
    field_flag(p, Options, "output_dir", required=True)
    for name in ("table", "split", "eval_fraction", "split_seed", "seed"):
        field_flag(p, Options, name)
    field_flag(p, Options, "task_features", metavar="FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Bad input raises (a ValueError naming the file or option): one line, exit 2, nothing written.
    options = options_of(Options, args)
    # An unusable output path fails before the fit, and so does one whose checkpoint.json is the
    # `--table` (the fit would replace the table).
    check_output_directory(options.output_dir, [CHECKPOINT_FILE], [("--table", options.table)])
    path: Path = options.table or bundled_table_path()
    table = load_table(path)
    if options.split == "all":
        train = list(table.tasks)
    else:
        train = select_tasks(table, "train", options.eval_fraction, options.split_seed)
    # The checkpoint names the table as given, or the env's bundled one, and its hash.
    source = FitSource(
        table=str(options.table) if options.table is not None else BUNDLED_TABLE_NAME,
        table_sha256=sha256_file(path),
        split=options.split,
        eval_fraction=options.eval_fraction,
        split_seed=options.split_seed,
    )
    if options.name == IRT_NAME:
        flags = "--split all"
        if options.split == "train":
            flags = f"--split train, --eval-fraction {options.eval_fraction}"
        check_enough_tasks(len(train), IrtConfig(), f"{path} ({len(table.tasks)} tasks, {flags})")
        if options.task_features is not None:  # every train task's row, before the fit starts
            load_task_features(options.task_features).check_covers([t.instance_id for t in train])
        ckpt_path = options.output_dir / CHECKPOINT_FILE
        return fit_irt(train, table.pool, options.seed, source, ckpt_path, options.task_features)
    if options.task_features is not None and options.name not in (LOGREG_NAME, BALANCED_LOGREG_NAME):
        raise ValueError(f"--task-features: only for {LOGREG_NAME}, {BALANCED_LOGREG_NAME} and {IRT_NAME}")
    ckpt = fit_baseline(options.name, train, table.pool.ids, options.seed, source, options.task_features)
    with publish_directory(options.output_dir, owned=[CHECKPOINT_FILE]) as staged:
        save_checkpoint(ckpt, staged / CHECKPOINT_FILE)
    print(f"{ckpt.name}: fitted on {len(ckpt.train_task_ids)} tasks of {ckpt.table} ({options.split})")
    if ckpt.safe_point is not None:
        print(
            f"default point (chosen on the train tasks; route --no-safe-point: native): "
            f"{ckpt.safe_point.describe()}"
        )
    print(f"checkpoint: {options.output_dir / CHECKPOINT_FILE}")
    return 0
