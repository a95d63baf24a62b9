"""`router-train`: from oracle table to trained router, and judging any router.

Each subcommand lives in its own module, which adds its parser here via `register(subparsers)`.
Exit codes common to all: 2 bad input (one line on stderr), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from router_oracle.cli_runner import run_cli
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
    # Each register() sets `func` (parsed args -> exit code; bad input raises) and may set `error_prefix`.
    return run_cli(
        lambda: args.func(args),
        prog=f"router-train {args.command}",
        error_prefix=getattr(args, "error_prefix", ""),
    )


if __name__ == "__main__":
    sys.exit(main())
