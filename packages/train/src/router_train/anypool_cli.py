"""`router-train local-anypool`: GRPO of the pool-agnostic router on drawn pools, then a held-out check."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from router_train.cli_args import add_table_arguments, bad_input, given

if TYPE_CHECKING:
    from router_train.anypool import AnyPoolRunConfig

DEFAULT_OUTPUT = Path("runs/local-anypool")


def _ids(text: str) -> list[str]:
    return [i.strip() for i in text.split(",") if i.strip()]


def _sizes(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "local-anypool",
        help="train a router that routes among any pool, incl. models it never trained with (CPU)",
        description=(
            "GRPO on the CPU of a pool-agnostic router: it scores each (task, model) pair from the task's "
            "features and the model's capability-summary entries (train split only), softmax over the "
            "drawn pool. Trains on the env's train tasks with pools drawn from the candidates table "
            "minus --held-out-models, then routes the env's any-pool eval episodes (held-out tasks, each "
            "pool holding a held-out model). Writes checkpoint.json, metrics.jsonl and summary.json."
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
    p.add_argument(
        "--pool-size", dest="eval_pool_size", type=int, default=None, help="evaluation pool size (3)"
    )
    p.add_argument("--pool-seed", type=int, default=None, help="seed of the evaluation pools (default 0)")
    p.add_argument(
        "--train-pool-sizes", type=_sizes, default=None, metavar="N,N", help="training pool sizes (2,3,4,5)"
    )
    p.add_argument("--pool-bank", type=int, default=None, help="distinct training pools (default 128)")
    p.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    p.add_argument("--steps", type=int, default=None, help="GRPO steps (default 200)")
    p.add_argument("--tasks-per-step", type=int, default=None, help="train tasks per step (default 64)")
    p.add_argument("--samples-per-task", type=int, default=None, help="routes sampled per task (default 8)")
    p.add_argument("--lr", type=float, default=None, help="Adam learning rate (default 0.05)")
    p.add_argument(
        "--seed", type=int, default=None, help="pool bank / task order / sampling seed (default 0)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> AnyPoolRunConfig:
    # Imported here: the trainer loads numpy, scikit-learn and the env, which `--help` does not need.
    from router_train.anypool import AnyPoolRunConfig, AnyPoolTrainConfig

    train = given(args, "steps", "tasks_per_step", "samples_per_task", "lr", "seed", "pool_bank")
    if args.train_pool_sizes is not None:
        train["pool_sizes"] = args.train_pool_sizes
    fields: dict[str, Any] = {"output_dir": args.output_dir, "table_path": args.table}
    fields |= given(
        args, "candidates", "held_out_models", "eval_pool_size", "pool_seed", "eval_fraction", "split_seed"
    )
    return AnyPoolRunConfig(**fields, train=AnyPoolTrainConfig(**train))


def run(args: argparse.Namespace) -> int:
    from router_oracle.atomic_file import refuse_inputs_as_outputs
    from router_train.anypool import format_anypool_summary, run_any_pool
    from router_train.anypool.run import CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE

    try:
        cfg = config_from_args(args)
        refuse_inputs_as_outputs(
            [Path(cfg.output_dir) / n for n in (CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE)],
            [("--table", args.table), ("--candidates", args.candidates)],
        )
        result = run_any_pool(cfg, progress=not args.quiet)
    except ValidationError as exc:
        return bad_input("local-anypool", f"invalid option: {exc}")
    except ValueError as exc:  # AnyPoolError, CandidatesError, TableError: the message names the file
        return bad_input("local-anypool", exc)
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
