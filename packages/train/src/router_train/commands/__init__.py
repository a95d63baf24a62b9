"""The subcommands of `router-train`: one module of this package per command, named as the command.

`router_train.commands.<name>` (`-` written `_`: `local-anypool` is `local_anypool.py`) defines the
command: `register(subparsers)` adds its parser (`help=summary(name)`, `set_defaults(func=run)`),
`run(args) -> int` runs it, and `Options` names the typed model its flags fill (a union of models, as
route's `CheckpointSpec | EndpointSpec`, where they fill one of several; `options_models`).
`router-train --help` lists every command from this table alone (standard library only, so it answers
at once); only the module of the command being run is imported (`router_train.cli.build_parser`).
`test_train_commands.py` imports every module and holds it to its entry here.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, NamedTuple, Union, get_args, get_origin


class Command(NamedTuple):
    """A `router-train` subcommand."""

    name: str
    """What is typed after `router-train`."""
    summary: str
    """Its one line in `router-train --help`."""

    @property
    def module(self) -> str:
        """The module that defines and runs the command: this package's module named as it."""
        return f"{__name__}.{self.name.replace('-', '_')}"


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("config", "write a prime-rl RL config (TOML for `prime train`) for a preset"),
        Command("launch", "push the env and start a GRPO run on Prime Hosted Training (prime-rl)"),
        Command("local", "train a small router with GRPO on the CPU (no GPU, no account)"),
        Command(
            "local-anypool",
            "train a router that routes among any pool, incl. models it never trained with (CPU)",
        ),
        Command(
            "evaluate",
            "judge routers (baselines, local GRPO, checkpoints, vf-eval traces) on tasks they never saw",
        ),
        Command(
            "evaluate-anypool",
            "judge the any-pool router on tasks AND models it never trained with, vs fixed-pool routers",
        ),
        Command(
            "fit",
            "fit a supervised baseline (TF-IDF logreg, kNN, cheapest) or the IRT router and save it",
        ),
        Command(
            "analyze",
            "rate new tasks' issues on the 15 issue-only features via an OpenAI-compatible endpoint",
        ),
        Command("route", "route tasks with a trained router (checkpoint, saved baseline or LLM endpoint)"),
        Command("serve", "an OpenAI-compatible proxy routing each agent task to one model, sticky"),
        Command(
            "feedback",
            "what serve recorded of its traffic: outcomes, off-policy estimates, a refit to it",
        ),
        Command(
            "replay", "simulate a learning deployment on real outcomes (explore, refit, off-policy check)"
        ),
    )
}
"""Command name -> the command, in `--help` order."""


def summary(name: str) -> str:
    """The one-line help of command `name`."""
    return COMMANDS[name].summary


def options_models(options: object) -> list[type]:
    """The models a command's `Options` names: the model itself, or each member of a union of models
    (`Annotated` validators aside)."""
    if get_origin(options) is Annotated:
        options = get_args(options)[0]
    if get_origin(options) in (Union, UnionType):
        return [m for a in get_args(options) for m in options_models(a)]
    assert isinstance(options, type), f"Options {options!r} is not a model or a union of models"
    return [options]
