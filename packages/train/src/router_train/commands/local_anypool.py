"""`router-train local-anypool`: GRPO of the pool-agnostic router on drawn pools, then a held-out check."""

from __future__ import annotations

import argparse
from typing import Any

from router_oracle.infra.atomic_file import check_output_directory
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.heldout import format_anypool_summary
from router_train.anypool.run import (
    CHECKPOINT_FILE,
    METRICS_FILE,
    SUMMARY_FILE,
    AnyPoolRunConfig,
    run_any_pool,
)
from router_train.cli_args import add_grpo_arguments, field_flag, given, int_list
from router_train.commands import summary
from router_train.local.config import FeatureConfig


def _ids(text: str) -> list[str]:
    return [i.strip() for i in text.split(",") if i.strip()]


Options = AnyPoolRunConfig
"""The model this command's flags fill (`config_from_args`; the GRPO knobs go to its `train`)."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "local-anypool",
        help=summary("local-anypool"),
        description=(
            "GRPO on the CPU of a pool-agnostic router: it scores each (task, model) pair from the task's "
            "features and the model's capability-summary entries (train split only), softmax over the "
            "drawn pool. Trains on the env's train tasks with pools drawn from the candidates table "
            "minus --held-out-models, then routes the env's any-pool eval episodes (held-out tasks, each "
            "pool holding a held-out model). Writes checkpoint.json, metrics.jsonl and summary.json to "
            "--output-dir, all three at once (other files there are kept)."
        ),
    )
    field_flag(p, AnyPoolRunConfig, "table_path", "--table")
    for name in ("eval_fraction", "split_seed"):
        field_flag(p, AnyPoolRunConfig, name)
    field_flag(p, AnyPoolRunConfig, "candidates", metavar="F")
    field_flag(p, AnyPoolRunConfig, "held_out_models", type=_ids, metavar="ID,ID")
    field_flag(p, AnyPoolRunConfig, "eval_pool_size", "--pool-size")
    field_flag(p, AnyPoolRunConfig, "pool_seed")
    field_flag(p, AnyPoolTrainConfig, "pool_sizes", "--train-pool-sizes", type=int_list, metavar="N,N")
    field_flag(p, AnyPoolTrainConfig, "pool_bank")
    field_flag(p, AnyPoolRunConfig, "output_dir")
    add_grpo_arguments(p, AnyPoolTrainConfig)
    field_flag(p, FeatureConfig, "irt", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> AnyPoolRunConfig:
    fields = given(args, *AnyPoolTrainConfig.model_fields)
    if args.irt:
        fields["features"] = FeatureConfig(irt=True)
    train = AnyPoolTrainConfig(**fields)
    return AnyPoolRunConfig(**given(args, *AnyPoolRunConfig.model_fields), train=train)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    # An unusable --output-dir fails now, not after training.
    check_output_directory(
        cfg.output_dir,
        (CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE),
        [("--table", args.table_path), ("--candidates", args.candidates)],
    )
    result = run_any_pool(cfg, progress=not args.quiet)  # AnyPoolError, CandidatesError, TableError: exit 2
    print(format_anypool_summary(result.summary))
    print(
        f"trained {cfg.train.steps} steps on {result.train_tasks} train tasks, pools from "
        f"{result.train_models} models, in {result.wall_seconds:.1f} s "
        f"(pool bank {result.bank_seconds:.1f} s, {1000 * result.seconds_per_step:.1f} ms/step)"
    )
    print(f"checkpoint: {result.checkpoint_path}")
    print(f"metrics:    {result.metrics_path}")
    print(f"summary:    {result.summary_path}")
    return 0
