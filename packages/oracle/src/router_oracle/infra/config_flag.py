"""Flags generated from config fields, as prime-rl's configs do: the field's docstring is the flag's help
(`FrozenModel` keeps it as the field's `description`), its default and bounds are the field's, so no
flag restates a default, a bound or a sentence of its config. Both `router-oracle` and `router-train`
add such flags with `field_flag`."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from router_oracle.infra.numeric_option import field_option

_UNSET: Any = object()
"""No default given to `field_help`: the field's own is shown."""


def path_arg(text: str) -> Path:
    """An argparse `type` for paths: an empty string is an error, not the working directory."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def field_help(model: type[BaseModel], name: str, default: Any = _UNSET) -> str:
    """The help of the flag mirroring `model.name`: the field's docstring (one text serves the config
    and the CLI, as in prime-rl's configs) and its default (the field's, or `default`), never restated."""
    field = model.model_fields[name]
    if default is not _UNSET:
        value = default
    else:
        value = None if field.is_required() else field.get_default(call_default_factory=True)
    # No description only where the sources are not installed (pydantic reads docstrings from them);
    # test_train_flag_help holds every mirrored field to having one.
    parts = [
        field.description or "",
        f"(default: {_shown(value)})" if value not in (None, []) else "",
    ]
    return " ".join(p for p in parts if p).replace("%", "%%")


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
    `default`). A `store_true` switch's help shows no default (it is off unless given)."""
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
    # A switch (`store_true`) is off unless given: its default says nothing, so help leaves it out.
    shown = None if kwargs.get("action") == "store_true" else kwargs.get("default", _UNSET)
    settings.setdefault("help", field_help(model, name, shown))
    action: argparse.Action = p.add_argument(*(flags or (f"--{name.replace('_', '-')}",)), **settings)
    return action
