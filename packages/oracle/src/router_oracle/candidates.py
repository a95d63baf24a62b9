"""The candidates table: every candidate model's measured outcome on every task, for any subset pool.

An oracle table fixes its pool. A candidates table holds, per task, the outcome of every usable run of a
whole leaderboard, grouped into models (`router_oracle.leaderboard_models`), so the oracle table of ANY
subset pool can be derived from it (`router_oracle.derive`) by the same tie rule and the same run
aggregation as a table built from the sources directly. Bundled: `router_oracle/data/candidates.json`,
built from the bundled leaderboard by `router-oracle candidates`.

Canonical JSON (`dumps_candidates`): the header indented, then one task per line, outcomes as columns
(`resolved`/`cost` lists in the order of `runs`), so the same inputs give the same bytes and a diff shows
which task changed.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Final, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from router_oracle.data_files import DATA_DIR
from router_oracle.infra.atomic_file import write_text_atomic
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.text_file import read_text_file
from router_oracle.infra.validation_message import one_line
from router_oracle.table import MODEL_ID_PATTERN, PoolModel, SourceFile

CANDIDATES_SCHEMA_VERSION: Final = 1
"""Bumped on any change that an older reader would misinterpret."""

BUNDLED_CANDIDATES = "bundled"
"""The name that stands for the bundled candidates table wherever a path is asked for."""

CANDIDATES_FILE = "candidates.json"
"""File name of the bundled candidates table in `router_oracle/data/`."""


class CandidatesError(OracleInputError):
    """A candidates file that cannot be read, or a request it cannot serve: the message names the file."""


class CandidateRun(FrozenModel):
    """One leaderboard run of a candidate model, as the leaderboard describes it."""

    run: str
    """Run id (the leaderboard entry's `folder`)."""
    name: str
    """The entry's display name as published."""
    model_tag: str | None
    """The entry's `Model:` tag, the input of the base-model rule."""
    org: str | None
    """The entry's `Org:` tag as published."""
    scaffold: str | None
    """The harness version of the run (mini-SWE-agent's for the leaderboard; the agent version else)."""
    date: str | None
    """The entry's date."""
    headline_resolved: float | None
    """The entry's headline resolve rate, percent."""
    harness: str = "mini-swe-agent"
    """The agent harness that ran it (`mini-swe-agent`, `openhands`, `claude-code`, ...)."""
    input_price: float | None = None
    """USD per million input tokens, where the source states it."""
    output_price: float | None = None
    """USD per million output tokens, where the source states it."""


class CandidateModel(FrozenModel):
    """One candidate model: runs of the same base model at the same reasoning effort."""

    id: str = Field(pattern=MODEL_ID_PATTERN)
    """Model id, what a router writes in `<route>…</route>` (e.g. `gpt-5.2-high`)."""
    name: str
    """Display name (e.g. `GPT-5.2 (high reasoning)`)."""
    base_model: str
    """The model without its effort (e.g. `gpt-5.2`): models sharing it are siblings, which a
    held-out-model evaluation may want to hold out together."""
    effort: str | None
    """Reasoning effort stated by the leaderboard (`medium`, `high`, ...); None: the provider's default."""
    provider: str | None
    """Who makes it (`openai`, `anthropic`, `zai`, ...): the `Org:` tag, lowercased, letters and digits."""
    runs: list[CandidateRun] = Field(min_length=1)
    """Its runs, treated as rollouts (resolve rate = resolved share, cost = mean), ordered by run id."""

    def pool_model(self) -> PoolModel:
        """This model as a member of an oracle table's pool."""
        return PoolModel(id=self.id, name=self.name, runs=[r.run for r in self.runs])


class ExcludedRun(FrozenModel):
    """A leaderboard run that is not a candidate, and why."""

    run: str
    """Run id."""
    name: str
    """The entry's display name."""
    reason: str
    """Why it is left out (no per-task data, missing tasks, broken per-task flags)."""


class CandidateTask(FrozenModel):
    """One task: what a router sees, and the outcome of every candidate run on it."""

    instance_id: str
    """SWE-bench instance id."""
    repo: str
    """GitHub `owner/name` of the task's repository."""
    difficulty: str | None
    """SWE-bench Verified human difficulty annotation, if known."""
    problem_statement: str
    """The issue text, verbatim. Never the gold patch."""
    resolved: list[bool]
    """Did each run resolve the task, in the order of `CandidatesTable.runs`."""
    cost: list[float]
    """Cost of each run on the task in USD, in the order of `CandidatesTable.runs`."""

    @field_validator("cost")
    @classmethod
    def _costs(cls, v: list[float]) -> list[float]:
        bad = [c for c in v if not (math.isfinite(c) and c >= 0)]
        if bad:
            raise ValueError(f"costs must be finite and >= 0, got {bad[0]!r}")
        return v


class CandidatesTable(FrozenModel):
    """Header (models, exclusions, provenance) and one row of run outcomes per task."""

    schema_version: Literal[1] = CANDIDATES_SCHEMA_VERSION
    """Version of this schema."""
    kind: Literal["candidates"] = "candidates"
    """Marks the file as a candidates table (not an oracle table)."""
    grouping: str
    """The rule that grouped runs into models and named them, in one line (see `leaderboard_models`)."""
    models: list[CandidateModel] = Field(min_length=1)
    """The candidate models, sorted by id; ids and runs unique."""
    excluded: list[ExcludedRun]
    """Leaderboard runs left out, with the reason, in leaderboard order."""
    sources: list[SourceFile]
    """Every input file with its sha256 (the task file first)."""
    command: str
    """The command line that built this table."""
    runs: list[str]
    """Column order of every task's `resolved` and `cost`: each model's runs, models in order."""
    tasks: list[CandidateTask] = Field(min_length=1)
    """One row per task, sorted by `instance_id`."""

    @model_validator(mode="after")
    def _consistent(self) -> CandidatesTable:
        ids = [m.id for m in self.models]
        if ids != sorted(set(ids)):
            raise ValueError("model ids must be unique and sorted")
        runs = [r.run for m in self.models for r in m.runs]
        if self.runs != runs:
            raise ValueError("`runs` must list each model's runs, models in order")
        if len(set(runs)) != len(runs):
            raise ValueError(f"a run belongs to two models: {sorted({r for r in runs if runs.count(r) > 1})}")
        task_ids = [t.instance_id for t in self.tasks]
        if task_ids != sorted(set(task_ids)):
            raise ValueError("task ids must be unique and sorted")
        for t in self.tasks:
            if len(t.resolved) != len(runs) or len(t.cost) != len(runs):
                raise ValueError(f"task {t.instance_id}: expected {len(runs)} resolved flags and costs")
        return self

    @property
    def ids(self) -> list[str]:
        """The candidate model ids, sorted."""
        return [m.id for m in self.models]

    def model(self, model_id: str) -> CandidateModel:
        for m in self.models:
            if m.id == model_id:
                return m
        raise CandidatesError(f"unknown candidate model {model_id!r}; candidates: {', '.join(self.ids)}")


def bundled_candidates_path() -> Path:
    """The bundled candidates table: every usable run of the bundled leaderboard, on its 500 tasks."""
    return DATA_DIR / CANDIDATES_FILE


OPENHANDS_CANDIDATES = "openhands"
"""The name that stands for the bundled OpenHands Index candidates table (MIT)."""

OPENHANDS_CANDIDATES_FILE = "candidates-openhands.json"
"""File name of the bundled OpenHands Index candidates table in `router_oracle/data/`."""


def candidates_path(spec: str | os.PathLike[str]) -> Path:
    """`bundled` -> the bundled (bash-only leaderboard) table's path, `openhands` -> the bundled OpenHands
    Index table's; anything else is a path."""
    if str(spec) == BUNDLED_CANDIDATES:
        return bundled_candidates_path()
    if str(spec) == OPENHANDS_CANDIDATES:
        return DATA_DIR / OPENHANDS_CANDIDATES_FILE
    return Path(spec)


def dumps_candidates(table: CandidatesTable) -> str:
    """The canonical, byte-stable JSON text of a candidates table (one task per line)."""
    doc = table.model_dump(mode="json")
    tasks = doc.pop("tasks")
    head = json.dumps(doc, indent=1, ensure_ascii=False)
    rows = ",\n".join("  " + json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tasks)
    return f'{head[:-2]},\n "tasks": [\n{rows}\n ]\n}}\n'


def write_candidates(table: CandidatesTable, path: str | os.PathLike[str]) -> None:
    """Write atomically: a crash never leaves a half-written file at `path`."""
    write_text_atomic(path, dumps_candidates(table))


def loads_candidates(text: str, *, origin: str = "<string>") -> CandidatesTable:
    try:
        return CandidatesTable.model_validate_json(text)
    except ValidationError as exc:
        raise CandidatesError(
            f"{origin}: not a valid candidates table (schema v{CANDIDATES_SCHEMA_VERSION}): {one_line(exc)}"
        ) from exc


def load_candidates(spec: str | os.PathLike[str] = BUNDLED_CANDIDATES) -> CandidatesTable:
    """Read and validate a candidates file (`bundled` or a path); errors name the file."""
    path = candidates_path(spec)
    text = read_text_file(path, "candidates table", CandidatesError, name=spec)
    return loads_candidates(text, origin=str(spec))
