"""What the subcommands share: the table and split options (errors end a command in `cli_runner`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from router_oracle.numeric_option import Count, Seed, Share, field_option, option_type


def path_arg(text: str) -> Path:
    """An argparse `type` for paths: an empty string is an error, not the working directory."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def add_table_arguments(p: argparse.ArgumentParser) -> None:
    """`--table`, `--eval-fraction`, `--split-seed`: the oracle table and the env's split of it.

    Unset options stay None, so the default of whatever they are passed to (the env's split) applies.
    """
    p.add_argument(
        "--table", type=path_arg, default=None, help="oracle table (default: the env's bundled table)"
    )
    p.add_argument(
        "--eval-fraction",
        type=option_type(Share),
        default=None,
        help="held-out share of the env's split, in (0, 1) (default 0.2)",
    )
    p.add_argument(
        "--split-seed",
        type=option_type(Seed),
        default=None,
        help="seed of the env's split, 0-2**32-1 (default 0)",
    )


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options that were given (not None), as keyword arguments."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def default_of(model: type[BaseModel], name: str) -> str:
    """A config field's default as a flag's help shows it (`600`, `0.05`, `2,3,4,5`): the number is
    stated once, in the config, never restated by hand."""
    value = model.model_fields[name].get_default(call_default_factory=True)
    values = value if isinstance(value, list | tuple) else [value]
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def int_list(text: str) -> list[int]:
    """An argparse `type` for `N,N,...` of seeds or counts (0 to 2**32 - 1 each; a count's lower bound
    is its config's)."""
    parse = option_type(Seed)
    try:
        return [parse(v) for v in text.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers ({exc})") from None


def add_report_arguments(p: argparse.ArgumentParser, jobs_help: str) -> None:
    """`--jobs`, `--no-plot` and `-o/--output OUTDIR`: how an evaluation runs and where its report goes."""
    p.add_argument(
        "--jobs",
        type=option_type(Count),
        default=None,
        help=f"{jobs_help} (default: the CPU count, at most 4)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("-o", "--output", type=path_arg, required=True, metavar="OUTDIR", help="report directory")


def jobs_of(args: argparse.Namespace) -> int:
    """`--jobs`, or the CPU count, at most 4."""
    return int(args.jobs) if args.jobs is not None else min(os.cpu_count() or 1, 4)


def config_flags(
    p: argparse.ArgumentParser, model: type[BaseModel], flags: list[tuple[str, type, str]]
) -> None:
    """Flags mirroring fields of `model` (`--tasks-per-step` -> `tasks_per_step`): unset they stay None,
    so the config's own default applies; each help is `TEXT (default D)`, D read from the field. A
    number is checked against the field's own bounds as it is parsed, so the error names the flag."""
    for flag, kind, text in flags:
        field = flag.removeprefix("--").replace("-", "_")
        parse = field_option(model, field) if kind in (int, float) else kind
        p.add_argument(flag, type=parse, default=None, help=f"{text} (default {default_of(model, field)})")


def add_grpo_arguments(p: argparse.ArgumentParser, model: type[BaseModel], seed_help: str) -> None:
    """The GRPO knobs of both CPU trainers (`local`, `local-anypool`), from their config's fields."""
    config_flags(
        p,
        model,
        [
            ("--steps", int, "GRPO steps, 1-1e6"),
            ("--tasks-per-step", int, "train tasks per step, 1-1e6"),
            ("--samples-per-task", int, "routes sampled per task, 2-1024"),
            ("--lr", float, "Adam learning rate, in (0, 1]"),
            ("--weight-decay", float, "AdamW weight decay, 0-1000"),
            ("--seed", int, f"{seed_help}, 0-2**32-1"),
        ],
    )
    p.add_argument(
        "--advantage",
        choices=("mean", "std"),
        default=None,
        help="group advantage: reward - group mean (prime-rl's grpo; default) or also / group std",
    )
