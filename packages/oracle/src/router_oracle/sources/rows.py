"""The long-row type every importer produces, and the value checks they share."""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.file_hash import sha256_bytes
from router_oracle.table import SourceFile


@dataclass(frozen=True, slots=True)
class LongRow:
    """One (task, run) observation from one source; a field the source does not know is None."""

    task_id: str
    """SWE-bench instance id."""
    run: str
    """Source run id (a pool model's `runs` entry)."""
    resolved: bool | None
    """Resolved flag, or None when this source does not say (e.g. trajectories)."""
    cost: float | None
    """Cost in USD, or None when this source does not say (e.g. a harness report)."""
    where: str
    """File and row, for error messages (e.g. `report.json: resolved_ids[3]`)."""
    model: str | None = None
    """Pool model id named by the row itself (long tables only); checked against the pool."""


@dataclass(frozen=True, slots=True)
class LoadedSource:
    """Everything one input file contributed: its provenance entry and its rows."""

    source: SourceFile
    """Provenance entry (machine-independent path, sha256)."""
    rows: list[LongRow]
    """The rows, in file order."""
    origin: str = ""
    """The path as given, for error messages (defaults to `source.path`)."""
    model: str | None = None
    """The model the file records having run (mini-SWE-agent trajectories), if it says."""

    @property
    def name(self) -> str:
        return self.origin or self.source.path

    def with_run(self, run: str) -> LoadedSource:
        """The same source with every row assigned to `run` (once the run is known)."""
        return replace(self, rows=[replace(r, run=run) for r in self.rows])


def read_source(path: str | os.PathLike[str]) -> tuple[str, str]:
    """A text file's content, gunzipped when it ends in `.gz`, and the sha256 of its bytes.

    One read serves both, so the digest recorded in a table is that of exactly the content imported.
    Decoding is that of `open(path, encoding="utf-8")`: universal newlines, no BOM stripping.
    Every input file of the project that may be gzipped is read here, so a damaged `.gz` (bad header:
    OSError; damaged deflate stream: zlib.error; cut short: EOFError) is one OracleInputError line.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
        raw = io.BytesIO(data)
        binary = gzip.GzipFile(fileobj=raw) if p.suffix == ".gz" else raw
        text = io.TextIOWrapper(binary, encoding="utf-8").read()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise OracleInputError(f"{path}: cannot read: {exc}") from exc
    return text, sha256_bytes(data)


def parse_json(text: str, where: str) -> Any:
    """`json.loads`, a syntax error reported as `<where>: malformed JSON: ...`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OracleInputError(f"{where}: malformed JSON: {exc}") from exc


def check_resolved(value: Any, where: str) -> bool:
    """A resolved flag must be a real boolean (not 1/0, not "yes")."""
    if not isinstance(value, bool):
        raise OracleInputError(f"{where}: resolved must be true or false, got {value!r}")
    return value


def check_cost(value: Any, where: str) -> float:
    """A cost must be a finite, non-negative number of USD."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OracleInputError(f"{where}: cost must be a number, got {value!r}")
    cost = float(value)
    if not math.isfinite(cost) or cost < 0:
        raise OracleInputError(f"{where}: cost must be finite and >= 0, got {value!r}")
    return cost


def check_id(value: Any, where: str, what: str = "task id") -> str:
    if not isinstance(value, str) or not value:
        raise OracleInputError(f"{where}: {what} must be a non-empty string, got {value!r}")
    return value
