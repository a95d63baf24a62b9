"""`router-train local-anypool`: GRPO of the pool-agnostic router on drawn pools, then a held-out check."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from router_oracle.atomic_file import refuse_inputs_as_outputs
from router_oracle.numeric_option import field_option
from router_train.anypool import AnyPoolRunConfig, AnyPoolTrainConfig, format_anypool_summary, run_any_pool
from router_train.anypool.run import CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE
from router_train.cli_args import (
    add_grpo_arguments,
    add_table_arguments,
    config_flags,
    default_of,
    given,
    int_list,
)
from router_train.commands import summary

DEFAULT_OUTPUT = Path("runs/local-anypool")


def _ids(text: str) -> list[str]:
    return [i.strip() for i in text.split(",") if i.strip()]


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
    add_table_arguments(p)
    p.add_argument("--candidates", default=None, metavar="F", help="candidates table (default: bundled)")
    p.add_argument(
        "--held-out-models",
        type=_ids,
        default=None,
        metavar="ID,ID",
        help="candidate models kept out of training; every evaluation pool holds one "
        "(`router-oracle models` lists the ids)",
    )
    size = default_of(AnyPoolRunConfig, "eval_pool_size")
    p.add_argument(
        "--pool-size",
        dest="eval_pool_size",
        type=field_option(AnyPoolRunConfig, "eval_pool_size"),
        help=f"evaluation pool size (default {size})",
    )
    config_flags(p, AnyPoolRunConfig, [("--pool-seed", int, "seed of the evaluation pools")])
    sizes = default_of(AnyPoolTrainConfig, "pool_sizes")
    p.add_argument("--train-pool-sizes", type=int_list, metavar="N,N", help=f"training pool sizes ({sizes})")
    config_flags(p, AnyPoolTrainConfig, [("--pool-bank", int, "distinct training pools")])
    p.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    add_grpo_arguments(p, AnyPoolTrainConfig, "pool bank / task order / sampling seed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> AnyPoolRunConfig:
    train = given(
        args,
        "steps",
        "tasks_per_step",
        "samples_per_task",
        "lr",
        "weight_decay",
        "advantage",
        "seed",
        "pool_bank",
    )
    if args.train_pool_sizes is not None:
        train["pool_sizes"] = args.train_pool_sizes
    fields: dict[str, Any] = {"output_dir": args.output_dir, "table_path": args.table}
    fields |= given(
        args, "candidates", "held_out_models", "eval_pool_size", "pool_seed", "eval_fraction", "split_seed"
    )
    return AnyPoolRunConfig(**fields, train=AnyPoolTrainConfig(**train))


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    refuse_inputs_as_outputs(
        [Path(cfg.output_dir) / n for n in (CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE)],
        [("--table", args.table), ("--candidates", args.candidates)],
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
