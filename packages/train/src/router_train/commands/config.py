"""`router-train config`: render a preset's prime-rl RL config, or regenerate and check the shipped ones."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pydantic import model_validator

from router_oracle.infra.atomic_file import write_text_atomic
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.hosted.config_files import render_multi_node, render_preset, stale_shipped, write_shipped
from router_train.hosted.presets import PresetName, presets_help


class Options(FrozenModel):
    """What `router-train config`'s flags fill: a preset to render (the presets are
    `hosted.presets.PresetSpec`s), or the shipped files to regenerate or check."""

    preset: PresetName | None = None
    """preset to render"""
    output: Path | None = None
    """write here instead of stdout"""
    write_shipped: bool = False
    """regenerate the shipped router_train/configs/*.toml"""
    check: bool = False
    """exit 1 if a shipped file differs from a fresh rendering"""
    nodes: Count | None = None
    """render prime-rl's multi-node deployment on N nodes (SLURM) instead of one node"""

    @model_validator(mode="after")
    def _something_to_do(self) -> Options:
        if self.preset is None and not (self.write_shipped or self.check):
            raise ValueError("give a preset, --write-shipped or --check")
        return self


def register(sub: Any) -> None:
    c: argparse.ArgumentParser = sub.add_parser(
        "config",
        help=summary("config"),
        description=f"Render a preset's prime-rl RL config. Presets: {presets_help()}.",
    )
    field_flag(c, Options, "preset", "preset", nargs="?", metavar=None)
    field_flag(c, Options, "output", "-o", "--output", metavar="OUTPUT")
    for name in ("write_shipped", "check"):
        field_flag(c, Options, name, action="store_true")
    field_flag(c, Options, "nodes")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    if options.write_shipped:
        for path in write_shipped():
            print(f"wrote {path}")
        return 0
    if options.check:
        stale = stale_shipped()
        for path in stale:
            print(f"stale: {path} (run `router-train config --write-shipped`)", file=sys.stderr)
        return 1 if stale else 0
    assert options.preset is not None  # Options refuses none of the three
    if options.nodes is not None:
        text = render_multi_node(options.preset, options.nodes)  # BadLaunchInput: its status, 2
    else:
        text = render_preset(options.preset)
    if options.output is None:
        sys.stdout.write(text)
        return 0
    write_text_atomic(options.output, text)
    print(f"wrote {options.output}")
    return 0
