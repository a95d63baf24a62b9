"""What the subcommands share: the table and split options (errors end a command in `cli_runner`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from router_oracle.infra.config_flag import field_flag as field_flag
from router_oracle.infra.config_flag import path_arg as path_arg
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Seed, Share, option_type
from router_oracle.infra.validation_message import one_line

Model = TypeVar("Model", bound=BaseModel)


class TableOptions(FrozenModel):
    """`--table`, `--eval-fraction`, `--split-seed`: the oracle table and the env's split of it. Unset
    options stay None, so the default of whatever they are passed to (the env's split) applies."""

    table: Path | None = None
    """oracle table (default: the env's bundled table)"""
    eval_fraction: Share | None = None
    """held-out share of the env's split, in (0, 1) (default 0.2)"""
    split_seed: Seed | None = None
    """seed of the env's split, 0-2**32-1 (default 0)"""


class OutputOptions(FrozenModel):
    """`--no-plot` and `-o/--output OUTDIR`: where an evaluation's report goes."""

    no_plot: bool = False
    """skip the PNG"""
    output: Path
    """report directory"""


def add_table_arguments(p: argparse.ArgumentParser) -> None:
    """`--table`, `--eval-fraction`, `--split-seed` (`TableOptions`)."""
    for name in TableOptions.model_fields:
        field_flag(p, TableOptions, name)


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options that were given (set and not None), as keyword arguments: `given(args,
    *Config.model_fields)` are the fields a command's flags set."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def options_of(model: type[Model], args: argparse.Namespace) -> Model:
    """A command's `Options` from its parsed flags (those given; the model's defaults fill the rest). A
    check of the model fails as one line in its own words (a `ValueError`, exit 2 in `run_cli`)."""
    try:
        return model(**given(args, *model.model_fields))
    except ValidationError as exc:
        raise ValueError(one_line(exc)) from None


def int_list(text: str) -> list[int]:
    """An argparse `type` for `N,N,...` of seeds or counts (0 to 2**32 - 1 each; a count's lower bound
    is its config's)."""
    parse = option_type(Seed)
    try:
        return [parse(v) for v in text.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers ({exc})") from None


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    """`--no-plot` and `-o/--output OUTDIR` (`OutputOptions`)."""
    field_flag(p, OutputOptions, "no_plot", action="store_true")
    field_flag(p, OutputOptions, "output", "-o", "--output", required=True, metavar="OUTDIR")


def print_report(files: list[Path], terminal: str) -> int:
    """An evaluation's end: its tables on stdout, then the report files written; exit 0."""
    sys.stdout.write(terminal)
    print("wrote " + ", ".join(str(f) for f in files))
    return 0


def default_jobs(jobs: int | None) -> int:
    """`jobs`, or when None the CPU count, at most 4."""
    return int(jobs) if jobs is not None else min(os.cpu_count() or 1, 4)


GRPO_FIELDS = ("steps", "tasks_per_step", "samples_per_task", "lr", "weight_decay", "seed", "advantage")
"""The GRPO knobs both CPU trainers (`local`, `local-anypool`) take as flags, in help order."""


def add_grpo_arguments(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """The GRPO knobs of both CPU trainers, from their config's fields."""
    for name in GRPO_FIELDS:
        field_flag(p, model, name)
