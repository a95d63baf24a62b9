"""`router-train config`: render a preset's prime-rl RL config, or regenerate and check the shipped ones."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from router_oracle.atomic_file import write_text_atomic
from router_oracle.numeric_option import Count, option_type
from router_train.cli_args import path_arg
from router_train.commands import summary
from router_train.hosted.config_files import render_multi_node, render_preset, stale_shipped, write_shipped
from router_train.hosted.presets import PRESET_NAMES, presets_help


def register(sub: Any) -> None:
    c: argparse.ArgumentParser = sub.add_parser(
        "config",
        help=summary("config"),
        description=f"Render a preset's prime-rl RL config. Presets: {presets_help()}.",
    )
    c.add_argument("preset", nargs="?", choices=PRESET_NAMES, help="preset to render")
    c.add_argument("-o", "--output", type=path_arg, help="write here instead of stdout")
    c.add_argument(
        "--write-shipped", action="store_true", help="regenerate the shipped router_train/configs/*.toml"
    )
    c.add_argument(
        "--check", action="store_true", help="exit 1 if a shipped file differs from a fresh rendering"
    )
    c.add_argument(
        "--nodes",
        type=option_type(Count),
        help="render prime-rl's multi-node deployment on N nodes (SLURM) instead of one node",
    )
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.write_shipped:
        for path in write_shipped():
            print(f"wrote {path}")
        return 0
    if args.check:
        stale = stale_shipped()
        for path in stale:
            print(f"stale: {path} (run `router-train config --write-shipped`)", file=sys.stderr)
        return 1 if stale else 0
    if args.preset is None:
        raise ValueError("give a preset, --write-shipped or --check")
    if args.nodes is not None:
        text = render_multi_node(args.preset, args.nodes)  # BadLaunchInput: its status, 2
    else:
        text = render_preset(args.preset)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    write_text_atomic(args.output, text)
    print(f"wrote {args.output}")
    return 0
