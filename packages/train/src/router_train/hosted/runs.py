"""The record of a hosted launch: runs/<UTC timestamp>-<preset>.json, next to the config it submitted."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from router_oracle.infra.atomic_file import write_text_atomic

RunStatus = Literal["launched", "push_failed", "train_failed", "no_run_id"]


class SourceRecord(BaseModel):
    """One build the staged env was made from."""

    model_config = ConfigDict(extra="forbid")

    distribution: str
    """Distribution name (`router-frontier-rl` or `router-oracle`)."""
    kind: Literal["wheel", "sdist", "dir"]
    """What the input was."""
    path: str
    """Its path as given."""
    version: str | None
    """Its version (None for a source directory)."""
    sha256: str | None
    """Digest of the wheel or sdist (None for a source directory)."""


class CommandRecord(BaseModel):
    """One command the launch ran."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    """The command line."""
    returncode: int
    """Its exit status."""


class RunRecord(BaseModel):
    """What a launch did and what came of it."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    """Version of this record format."""
    preset: str
    """Preset launched (`smoke` or `full`)."""
    created_at: str
    """When the launch started, UTC, ISO 8601."""
    status: RunStatus
    """`launched` when prime accepted the run and printed its id; otherwise the step that failed."""
    run_id: str | None
    """Hosted Training run id, as `prime train` printed it."""
    dashboard_url: str | None
    """Where to watch the run, as `prime train` printed it."""
    env_id: str | None
    """Taskset id the submitted config names: the pushed hub id `owner/router-frontier-rl`."""
    env_version: str
    """Version of the pushed env package."""
    config_source: str
    """The config the launch started from (shipped preset file or --config path)."""
    submitted_config: str | None
    """The file given to `prime train` (the config with the pushed env id)."""
    stage_dir: str
    """The staged package pushed with `prime env push -p`."""
    sources: list[SourceRecord]
    """The builds staged."""
    commands: list[CommandRecord]
    """Commands run, in order."""


def run_stem(preset: str, started: datetime) -> str:
    """File stem of a launch: `20261129T193000Z-smoke`."""
    return f"{started.strftime('%Y%m%dT%H%M%SZ')}-{preset}"


def write_record(record: RunRecord, path: Path) -> None:
    """Write the record atomically (indented JSON, trailing newline)."""
    write_text_atomic(path, record.model_dump_json(indent=2) + "\n")


def load_record(path: Path) -> RunRecord:
    """Read a record back."""
    return RunRecord.model_validate_json(path.read_text(encoding="utf-8"))
