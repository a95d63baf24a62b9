"""The subcommands of `router-train`, each a module loaded only when it runs.

`router-train --help` lists every command from this table alone (standard library only, so it answers
at once); the module of the command being run is imported by name (`router_train.cli.build_parser`)
and adds its full parser with `register(subparsers)`. Each module takes its one-line summary from here,
so a command's help is written once.
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """A `router-train` subcommand."""

    module: str
    """The module that defines and runs the command."""
    summary: str
    """Its one line in `router-train --help`."""
    register: str = "register"
    """The module's function that adds the command's parser to the subparsers."""


COMMANDS: dict[str, Command] = {
    "config": Command(
        "router_train.launch_cli",
        "write a prime-rl RL config (TOML for `prime train`) for a preset",
        "register_config",
    ),
    "launch": Command(
        "router_train.launch_cli",
        "push the env and start a GRPO run on Prime Hosted Training (prime-rl)",
        "register_launch",
    ),
    "local": Command(
        "router_train.local_cli", "train a small router with GRPO on the CPU (no GPU, no account)"
    ),
    "local-anypool": Command(
        "router_train.anypool_cli",
        "train a router that routes among any pool, incl. models it never trained with (CPU)",
    ),
    "evaluate": Command(
        "router_train.evaluate_cli",
        "judge routers (baselines, local GRPO, checkpoints, vf-eval traces) on tasks they never saw",
    ),
    "evaluate-anypool": Command(
        "router_train.evaluate_anypool_cli",
        "judge the any-pool router on tasks AND models it never trained with, vs fixed-pool routers",
    ),
    "fit": Command(
        "router_train.fit_cli",
        "fit a supervised baseline (TF-IDF logistic regression, kNN, cheapest) and save it",
    ),
    "route": Command(
        "router_train.route_cli",
        "route tasks with a trained router (checkpoint, saved baseline or LLM endpoint)",
    ),
    "serve": Command(
        "router_train.serve_cli",
        "an OpenAI-compatible proxy routing each agent task to one model, sticky",
    ),
}
"""Command name -> where it lives and its summary, in `--help` order."""


def summary(name: str) -> str:
    """The one-line help of command `name`."""
    return COMMANDS[name].summary
