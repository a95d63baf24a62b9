"""What the subcommands share: the table and split options (errors end a command in `cli_runner`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from router_oracle.numeric_option import Count, Seed, Share, field_option, option_type


def path_arg(text: str) -> Path:
    """An argparse `type` for paths: an empty string is an error, not the working directory."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def add_table_arguments(p: argparse.ArgumentParser) -> None:
    """`--table`, `--eval-fraction`, `--split-seed`: the oracle table and the env's split of it.

    Unset options stay None, so the default of whatever they are passed to (the env's split) applies.
    """
    p.add_argument(
        "--table", type=path_arg, default=None, help="oracle table (default: the env's bundled table)"
    )
    p.add_argument(
        "--eval-fraction",
        type=option_type(Share),
        default=None,
        help="held-out share of the env's split, in (0, 1) (default 0.2)",
    )
    p.add_argument(
        "--split-seed",
        type=option_type(Seed),
        default=None,
        help="seed of the env's split, 0-2**32-1 (default 0)",
    )


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options that were given (set and not None), as keyword arguments: `given(args,
    *Config.model_fields)` are the fields a command's flags set."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def int_list(text: str) -> list[int]:
    """An argparse `type` for `N,N,...` of seeds or counts (0 to 2**32 - 1 each; a count's lower bound
    is its config's)."""
    parse = option_type(Seed)
    try:
        return [parse(v) for v in text.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers ({exc})") from None


def add_fold_seeds(p: argparse.ArgumentParser, text: str) -> None:
    """An evaluation's `--fold-seeds S1,S2,...` (unset None: the command's default seeds)."""
    p.add_argument("--fold-seeds", type=int_list, default=None, metavar="S1,S2,...", help=text)


def add_report_arguments(p: argparse.ArgumentParser, jobs_help: str, seed_help: str) -> None:
    """`--seed`, `--jobs`, `--no-plot` and `-o/--output OUTDIR`: how an evaluation runs and where its
    report goes."""
    p.add_argument("--seed", type=option_type(Seed), default=0, help=seed_help)
    p.add_argument(
        "--jobs",
        type=option_type(Count),
        default=None,
        help=f"{jobs_help} (default: the CPU count, at most 4)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("-o", "--output", type=path_arg, required=True, metavar="OUTDIR", help="report directory")


def print_report(files: list[Path], terminal: str) -> int:
    """An evaluation's end: its tables on stdout, then the report files written; exit 0."""
    sys.stdout.write(terminal)
    print("wrote " + ", ".join(str(f) for f in files))
    return 0


def jobs_of(args: argparse.Namespace) -> int:
    """`--jobs`, or the CPU count, at most 4."""
    return int(args.jobs) if args.jobs is not None else min(os.cpu_count() or 1, 4)


def field_help(model: type[BaseModel], name: str, default: Any = PydanticUndefined) -> str:
    """The help of the flag mirroring `model.name`: the field's docstring (one text serves the config
    and the CLI, as in prime-rl's configs) and its default (the field's, or `default`), never restated."""
    field = model.model_fields[name]
    if not field.description:
        raise TypeError(f"{model.__name__}.{name}: a flag mirrors it, so it needs a docstring")
    value = field.get_default(call_default_factory=True) if default is PydanticUndefined else default
    shown = value not in (None, [], PydanticUndefined)
    return (field.description + (f" (default: {_shown(value)})" if shown else "")).replace("%", "%%")


def _shown(value: Any) -> str:
    """A default as help shows it (`600`, `0.05`, `2,3,4,5`)."""
    values = value if isinstance(value, list | tuple) else [value]
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def _bare(annotation: Any) -> Any:
    """`int` of `int`, `int | None` and `Annotated[int, ...] | None`."""
    if get_origin(annotation) in (Union, UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def field_flag(p: Any, model: type[BaseModel], name: str, *flags: str, **kwargs: Any) -> argparse.Action:
    """Add the flag mirroring the field `model.name` (`--tasks-per-step` for `tasks_per_step`, or
    `flags`: options or one positional) to `p` (a parser or group): dest the field's name, unset None (so
    the config's own default applies), help `field_help`. A number is checked against the field's own
    type and bounds as it is parsed (`field_option`: the error names the flag), a path by `path_arg`, a
    literal by its choices; `kwargs` add to these or replace them (`action`, `type`, a flag's own
    `default`)."""
    kind = _bare(model.model_fields[name].annotation)
    positional = bool(flags) and not flags[0].startswith("-")
    settings: dict[str, Any] = {} if positional else {"dest": name, "default": None}
    if kind in (int, float):
        settings["type"] = field_option(model, name)
    elif kind is Path:
        settings["type"] = path_arg
    elif get_origin(kind) is Literal:
        settings["choices"] = get_args(kind)
    if flags and "action" not in kwargs:  # `--table TABLE`, not `--table TABLE_PATH`
        settings["metavar"] = flags[0].lstrip("-").replace("-", "_").upper()
    settings |= kwargs
    settings.setdefault("help", field_help(model, name, kwargs.get("default", PydanticUndefined)))
    action: argparse.Action = p.add_argument(*(flags or (f"--{name.replace('_', '-')}",)), **settings)
    return action


GRPO_FIELDS = ("steps", "tasks_per_step", "samples_per_task", "lr", "weight_decay", "seed", "advantage")
"""The GRPO knobs both CPU trainers (`local`, `local-anypool`) take as flags, in help order."""


def add_grpo_arguments(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """The GRPO knobs of both CPU trainers, from their config's fields."""
    for name in GRPO_FIELDS:
        field_flag(p, model, name)
