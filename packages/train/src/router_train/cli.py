"""`router-train`: from oracle table to trained router, and judging any router.

Each subcommand lives in its own module, which adds its parser here via `register(subparsers)`.
Exit codes common to all: 2 bad input (one line on stderr), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from router_oracle.atomic_file import OutputPathError
from router_train import (
    anypool_cli,
    evaluate_anypool_cli,
    evaluate_cli,
    fit_cli,
    launch_cli,
    local_cli,
    route_cli,
    serve_cli,
)
from router_train.cli_args import EXIT_INTERRUPTED, bad_input


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="router-train",
        description=(
            "Train and judge model routers for SWE-bench tasks. `launch` runs GRPO on Prime Hosted "
            "Training (prime-rl), `local` runs a small GRPO trainer on the CPU (`local-anypool`: one that "
            "routes any pool of models), `evaluate` scores any "
            "router against the oracle, single-model baselines and cost (`evaluate-anypool`: the any-pool "
            "router on models it never trained with)."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    launch_cli.register(sub)
    local_cli.register(sub)
    anypool_cli.register(sub)
    evaluate_cli.register(sub)
    evaluate_anypool_cli.register(sub)
    fit_cli.register(sub)
    route_cli.register(sub)
    serve_cli.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        # Each register() sets `func` to a callable taking the parsed args and returning an exit code;
        # bad input it recognises is already one line and exit 2. What escapes is handled once, here.
        return int(args.func(args))
    except OutputPathError as exc:
        return bad_input(args.command, exc)
    except OSError as exc:  # a file or directory the command was pointed at cannot be used
        reason = exc.strerror or str(exc)
        return bad_input(args.command, f"{exc.filename}: {reason}" if exc.filename else reason)
    except KeyboardInterrupt:
        print(f"router-train {args.command}: interrupted; no output written", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
