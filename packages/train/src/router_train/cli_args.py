"""What the subcommands share: the table and split options, and how bad input ends a command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2
"""Bad input (a table, a file, a config, an option): the message is on stderr, no output was written."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: one line on stderr; outputs are published whole or not at all, so none was half-written."""


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


def bad_input(command: str, message: object) -> int:
    """Print `router-train COMMAND: MESSAGE` on stderr; the exit status of bad input."""
    print(f"router-train {command}: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
