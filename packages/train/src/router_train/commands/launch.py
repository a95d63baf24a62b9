"""`router-train launch`: push the env and start a GRPO run on Prime Hosted Training or with prime-rl."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from router_oracle.cli_runner import run_cli
from router_oracle.numeric_option import Count, option_type
from router_train.cli_args import path_arg
from router_train.commands import summary
from router_train.hosted.errors import BadLaunchInput
from router_train.hosted.launch import (
    DEFAULT_DIST_DIR,
    DEFAULT_RUNS_DIR,
    DEFAULT_STAGE_DIR,
    EXIT_CODES_HELP,
    launch,
    sources_from_imports,
)
from router_train.hosted.presets import PRESET_NAMES, PresetName, presets_help
from router_train.hosted.prime_tool import DEFAULT_TIMEOUT_S
from router_train.hosted.self_hosted import launch_self_hosted


def register(sub: Any) -> None:
    presets = presets_help()
    p: argparse.ArgumentParser = sub.add_parser(
        "launch",
        help=summary("launch"),
        description=(
            "Stage the env built by `./pants package` as one self-contained package, "
            "`prime env push` it, then `prime train` the preset's config and record the run id "
            f"in runs/. Presets: {presets}."
        ),
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("preset", choices=PRESET_NAMES, help="preset to launch")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print every command and the config, run and write nothing, and exit with the status the "
        "launch would (login is not checked)",
    )
    p.add_argument("--config", type=path_arg, help="launch this config file instead of the shipped preset")
    p.add_argument(
        "--dist-dir",
        type=path_arg,
        default=DEFAULT_DIST_DIR,
        help="where the env and oracle wheels are (dist)",
    )
    p.add_argument(
        "--from-source",
        action="store_true",
        help="stage the importable router_frontier_rl/router_oracle sources instead of built wheels",
    )
    p.add_argument(
        "--version", help="PEP 440 version of the staged package (with --from-source, if not installed)"
    )
    p.add_argument("--stage-dir", type=path_arg, default=DEFAULT_STAGE_DIR, help="staging directory")
    p.add_argument("--runs-dir", type=path_arg, default=DEFAULT_RUNS_DIR, help="where launch records go")
    p.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=DEFAULT_TIMEOUT_S,
        help="seconds each `prime` command (with --prime-rl: each uv set-up step; `rl` itself is not "
        f"bounded) may run before the launch gives up ({DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--prime-rl",
        type=path_arg,
        metavar="DIR",
        help="self-hosted: run prime-rl's own `uv run rl @ CONFIG` in this prime-rl checkout instead of "
        "Prime Hosted Training (installs the env into its environment with uv)",
    )
    p.add_argument(
        "--nodes",
        type=option_type(Count),
        help="with --prime-rl: prime-rl's multi-node deployment on N nodes, started with SLURM",
    )
    p.set_defaults(func=run)


def exit_status(command: str, run: Callable[[], object]) -> int:
    """Run a launch step through the one CLI runner: 0, or one line `router-train COMMAND: why` on
    stderr and the error's documented status (`hosted.errors`)."""

    def body() -> int:
        run()
        return 0

    return run_cli(body, prog=f"router-train {command}")


def launch_status(preset: PresetName, **kwargs: Any) -> int:
    """`launch(preset, **kwargs)` as an exit status (for the smoke job and the CLI)."""
    return exit_status("launch", lambda: launch(preset, **kwargs))


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--timeout: {text!r} is not a positive number of seconds")
    return value


def run(args: argparse.Namespace) -> int:
    def start() -> object:
        sources, version = sources_from_imports(args.version) if args.from_source else (None, args.version)
        common: dict[str, Any] = {
            "dry_run": args.dry_run,
            "config_path": args.config,
            "dist_dir": args.dist_dir,
            "stage_dir": args.stage_dir,
            "runs_dir": args.runs_dir,
            "sources": sources,
            "version": version,
            "timeout": args.timeout,
        }
        if args.prime_rl is not None:
            return launch_self_hosted(args.preset, args.prime_rl, nodes=args.nodes, **common)
        if args.nodes is not None:
            raise BadLaunchInput("--nodes needs --prime-rl DIR (Prime Hosted Training places the run itself)")
        return launch(args.preset, **common)

    return exit_status("launch", start)
