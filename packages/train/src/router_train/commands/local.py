"""`router-train local`: GRPO of a small linear router on the CPU, then a held-out summary."""

from __future__ import annotations

import argparse
from typing import Any

from router_train.cli_args import field_flag
from router_train.commands import summary
from router_train.local import heldout, trainer
from router_train.local.config import LocalTrainConfig
from router_train.local_options import add_training_arguments, config_from_args

Options = LocalTrainConfig
"""The model this command's flags fill (`local_options.config_from_args`), each flag its field's."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "local",
        help=summary("local"),
        description=(
            "GRPO over the router-frontier-rl env's train split and reward, with a linear softmax policy "
            "over features of the task text. Writes checkpoint.json, metrics.jsonl and summary.json to "
            "--output-dir, all three at once when the run ends (an interrupted or failed run leaves the "
            "previous ones; other files there are kept), and prints the held-out router against random "
            "and single-model baselines. Exit codes: 0 trained, 2 bad input (one line on stderr), 130 "
            "interrupted."
        ),
    )
    field_flag(p, LocalTrainConfig, "table_path", "--table")
    for name in ("eval_fraction", "split_seed", "output_dir"):
        field_flag(p, LocalTrainConfig, name)
    add_training_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    result = trainer.train_local(cfg, progress=not args.quiet)  # TableError, LocalTrainError: exit 2
    print(heldout.format_summary(result.summary))
    shift = (
        f"; prior shift tau {result.prior_shift:g}, chosen on {cfg.shift_folds} cross-fitted folds"
        if cfg.shift_folds
        else ""
    )
    print(
        f"trained {result.steps} steps on {result.train_tasks} train tasks (upsampled: {cfg.upsample})"
        f"{shift}; {result.wall_seconds:.1f} s in all, {1000 * result.seconds_per_step:.1f} ms/step"
    )
    print(f"checkpoint: {result.checkpoint_path}")
    print(f"metrics:    {result.metrics_path}")
    print(f"summary:    {result.summary_path}")
    if result.warning:
        print(f"warning: {result.warning}")
    return 0
