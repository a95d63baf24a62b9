"""`router-train`: from oracle table to trained router, and judging any router.

Each subcommand lives in its own module, which adds its parser here via `register(subparsers)`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from router_train import anypool_cli, evaluate_anypool_cli, evaluate_cli, launch_cli, local_cli


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Each register() sets `func` to a callable taking the parsed args and returning an exit code.
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
