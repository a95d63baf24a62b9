"""`router-train`: from oracle table to trained router, and judging any router.

Each subcommand is a module of `router_train.commands` named as the command (the package's table lists
them), which adds its parser via `register(subparsers)`. Only the module of the command being run is
imported: the others load numpy, scikit-learn, verifiers or an HTTP stack, and `router-train --help`
must answer at once.
Exit codes common to all: 2 bad input (one line on stderr), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any

from router_oracle.infra.cli_runner import run_cli
from router_train.commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with every way Python writes a negative number taken as a value, not an
    option: argparse's own pattern knows `-5` and `-0.5` but not `-1e6`, so `--dial -1e6` (the dial's
    documented lower bound) was refused as `expected one argument`. No router-train option looks like a
    number, so nothing else changes. Subparsers inherit the class (`add_subparsers`' default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER


NEGATIVE_NUMBER = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
"""A negative decimal number, scientific notation included (`-1e6`, `-2.5E-3`, `-.5`)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `router-train` parser. `command` None: every command with its full options; a command name:
    that one in full, the others listed by name and summary only (their modules are not imported)."""
    parser = _Parser(
        prog="router-train",
        description=(
            "Train and judge model routers for SWE-bench tasks, and put them to work. `launch` runs GRPO "
            "with prime-rl (Prime Hosted Training or your own GPUs), `local` runs a small GRPO trainer on "
            "the CPU (`local-anypool`: one that routes any pool of models), `evaluate` scores any router "
            "against the oracle, single-model baselines and cost (`evaluate-anypool`: the any-pool router "
            "on models it never trained with), `fit` saves a supervised baseline, `route` routes new tasks "
            "with any of them and `serve` puts one in front of a coding agent. `COMMAND --help` for more."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        if command is None or name == command:
            # The one place a module is imported by name: the command's, when it is the one run.
            importlib.import_module(cmd.module).register(sub)
        else:
            sub.add_parser(name, help=cmd.summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # The command is the first argument that is not an option (`router-train` itself takes only -h).
    command = next((a for a in argv if not a.startswith("-")), "")
    args = build_parser(command if command in COMMANDS else "").parse_args(argv)
    # Each register() sets `func` (parsed args -> exit code; bad input raises) and may set `error_prefix`.
    return run_cli(
        lambda: args.func(args),
        prog=f"router-train {args.command}",
        error_prefix=getattr(args, "error_prefix", ""),
    )


if __name__ == "__main__":
    sys.exit(main())
