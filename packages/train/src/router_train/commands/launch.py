"""`router-train launch`: push the env and start a GRPO run on Prime Hosted Training or with prime-rl."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from router_oracle.infra.cli_runner import run_cli
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.hosted.launch import (
    DEFAULT_DIST_DIR,
    DEFAULT_RUNS_DIR,
    DEFAULT_STAGE_DIR,
    EXIT_CODES_HELP,
    launch,
    sources_from_imports,
)
from router_train.hosted.presets import PresetName, presets_help
from router_train.hosted.prime_tool import DEFAULT_TIMEOUT_S
from router_train.hosted.self_hosted import launch_self_hosted


class Options(FrozenModel):
    """What `router-train launch`'s flags fill: the preset (`hosted.presets.PresetSpec`) or a config
    file, where the env is staged from, and where it runs (Prime Hosted Training, or prime-rl here)."""

    preset: PresetName
    """preset to launch"""
    dry_run: bool = False
    """print every command and the config, run and write nothing, and exit with the status the launch
    would (login is not checked)"""
    config: Path | None = None
    """launch this config file instead of the shipped preset"""
    dist_dir: Path = DEFAULT_DIST_DIR
    """where the env and oracle wheels are"""
    from_source: bool = False
    """stage the importable router_frontier_rl/router_oracle sources instead of built wheels"""
    version: str | None = None
    """PEP 440 version of the staged package (with --from-source, if not installed)"""
    stage_dir: Path = DEFAULT_STAGE_DIR
    """staging directory"""
    runs_dir: Path = DEFAULT_RUNS_DIR
    """where launch records go"""
    timeout: Annotated[float, Field(gt=0)] = DEFAULT_TIMEOUT_S
    """seconds each `prime` command (with --prime-rl: each uv set-up step; `rl` itself is not bounded)
    may run before the launch gives up"""
    prime_rl: Path | None = None
    """self-hosted: run prime-rl's own `uv run rl @ CONFIG` in this prime-rl checkout instead of Prime
    Hosted Training (installs the env into its environment with uv)"""
    nodes: Count | None = None
    """with --prime-rl: prime-rl's multi-node deployment on N nodes, started with SLURM"""

    @model_validator(mode="after")
    def _nodes_self_hosted(self) -> Options:
        if self.nodes is not None and self.prime_rl is None:
            raise ValueError("--nodes needs --prime-rl DIR (Prime Hosted Training places the run itself)")
        return self


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
    field_flag(p, Options, "preset", "preset", metavar=None)
    field_flag(p, Options, "dry_run", action="store_true")
    for name in ("config", "dist_dir"):
        field_flag(p, Options, name)
    field_flag(p, Options, "from_source", action="store_true")
    for name in ("version", "stage_dir", "runs_dir"):
        field_flag(p, Options, name)
    field_flag(p, Options, "timeout", type=_positive_seconds)
    field_flag(p, Options, "prime_rl", metavar="DIR")
    field_flag(p, Options, "nodes")
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
    options = options_of(Options, args)  # --nodes without --prime-rl: one line, exit 2

    def start() -> object:
        sources, version = (
            sources_from_imports(options.version) if options.from_source else (None, options.version)
        )
        common: dict[str, Any] = {
            "dry_run": options.dry_run,
            "config_path": options.config,
            "dist_dir": options.dist_dir,
            "stage_dir": options.stage_dir,
            "runs_dir": options.runs_dir,
            "sources": sources,
            "version": version,
            "timeout": options.timeout,
        }
        if options.prime_rl is not None:
            return launch_self_hosted(options.preset, options.prime_rl, nodes=options.nodes, **common)
        return launch(options.preset, **common)

    return exit_status("launch", start)
