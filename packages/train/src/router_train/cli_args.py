"""What the subcommands share: the table and split options (errors end a command in `cli_runner`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import BaseModel


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
        "--eval-fraction", type=float, default=None, help="held-out share of the env's split (default 0.2)"
    )
    p.add_argument("--split-seed", type=int, default=None, help="seed of the env's split (default 0)")


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options that were given (not None), as keyword arguments."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def default_of(model: type[BaseModel], name: str) -> str:
    """A config field's default as a flag's help shows it (`600`, `0.05`, `2,3,4,5`): the number is
    stated once, in the config, never restated by hand."""
    value = model.model_fields[name].get_default(call_default_factory=True)
    values = value if isinstance(value, list | tuple) else [value]
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
