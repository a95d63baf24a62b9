"""The pool file (TOML): which models a router chooses between, and which runs are each model's rollouts.

```toml
name = "default"
description = "..."
[[models]]
id = "claude-opus-4.6"        # what the router outputs
name = "Claude Opus 4.6"      # display name
runs = ["20260217_mini-v2.0.0_claude-4-6-opus"]
price = 0.55                  # optional, USD per task, for tie_cost = "price"
```
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import Field, ValidationError

from router_oracle.data_files import POOLS_DIR, display_path, pool_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.text_file import read_text_file
from router_oracle.infra.validation_message import one_line
from router_oracle.table import Pool


class PoolFile(Pool):
    """A pool TOML file, validated (ids and runs unique, as in every `Pool`); `to_pool()` gives the
    table's `Pool`."""

    name: str = Field(min_length=1)
    """Short name of the pool (e.g. `default`); a file must give one."""

    def to_pool(self) -> Pool:
        return Pool(name=self.name, description=self.description, models=self.models)


def resolve_pool_spec(spec: str | os.PathLike[str]) -> Path:
    """A pool argument is a bundled pool name (`default`) or a path to a TOML file."""
    s = str(spec)
    if "/" not in s and os.sep not in s and not s.endswith(".toml"):
        return pool_path(s)
    return Path(spec)


def pool_label(spec: str | os.PathLike[str]) -> str:
    """How a pool argument appears in a table's command line (bundled names stay names)."""
    path = resolve_pool_spec(spec).resolve()
    if path.parent == POOLS_DIR.resolve():
        return path.stem
    return display_path(spec)


def load_pool(spec: str | os.PathLike[str]) -> Pool:
    """Read a pool by bundled name or path; errors name the file."""
    path = resolve_pool_spec(spec)
    text = read_text_file(path, "pool file", OracleInputError, name=spec)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OracleInputError(f"{spec}: malformed TOML: {exc}") from exc
    if not doc.get("models"):
        raise OracleInputError(f"{spec}: empty pool: no [[models]]")
    try:
        return PoolFile.model_validate(doc).to_pool()
    except ValidationError as exc:
        raise OracleInputError(f"{spec}: invalid pool: {one_line(exc)}") from exc
