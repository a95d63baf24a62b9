"""Reading and writing every saved router's file: one JSON document, written atomically, read back with
one error line naming the file.

Each kind's checkpoint model (`local.checkpoint`, `anypool.checkpoint`, `irt.checkpoint`,
`route.baseline_checkpoint`) is a `FrozenModel` whose `kind` and `version` literals are the format check;
this module is the one writer and reader they share, so that no kind imports another to save itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from router_oracle.infra.atomic_file import write_text_atomic
from router_oracle.infra.text_file import read_text_file
from router_oracle.infra.validation_message import one_line

M = TypeVar("M", bound=BaseModel)


def dumps_checkpoint(ckpt: BaseModel) -> str:
    """Canonical JSON text of a checkpoint (any kind): header fields first, compact weight rows
    (byte-stable for the same run)."""
    return json.dumps(ckpt.model_dump(mode="json"), separators=(",", ":")) + "\n"


def save_checkpoint(ckpt: BaseModel, path: str | os.PathLike[str]) -> None:
    """Write `ckpt` to `path` atomically (a reader never sees half a file)."""
    write_text_atomic(Path(path), dumps_checkpoint(ckpt))


def checkpoint_version(model: type[BaseModel]) -> int:
    """The format version `model` writes: its `version` field's default, bumped on any change an older
    reader would misinterpret (the older versions it still reads are the field's other literals)."""
    version = model.model_fields["version"].default
    assert isinstance(version, int), f"{model.__name__}.version needs an int default"
    return version


def read_checkpoint_file(
    path: str | os.PathLike[str], model: type[M], name: str, error: type[ValueError]
) -> M:
    """Read and validate a checkpoint of `model` (a wrong `kind` or an unknown `version` included); every
    error is one `error` line naming the file and `name (vN)`, N the version it writes."""
    what = f"{name} (v{checkpoint_version(model)})"
    text = read_text_file(path, what, error)
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise error(f"{path}: not a valid {what}: {one_line(exc)}") from exc
