"""The oracle table: a versioned JSON file, the one artefact the environment trains against.

Everything downstream (env tasks, rewards, evaluation) reads this schema and nothing else, so
a pick is computed once, here in the oracle package, and carried as data.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from router_oracle.infra.atomic_file import write_text_atomic
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.task_input import TaskInput

SCHEMA_VERSION: Final = 1
"""Bumped on any change that an older reader would misinterpret."""

MODEL_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
"""What a model id may look like: it is what the router writes inside `<route>…</route>`."""


class TableError(ValueError):
    """A table file that cannot be read: the message names the file and the problem."""


def _finite(v: float | None, info: ValidationInfo) -> float | None:
    # `ge=0` lets infinity through; the rule's comparisons need finite numbers.
    if v is not None and not math.isfinite(v):
        raise ValueError(f"{info.field_name} must be finite")
    return v


class PoolModel(FrozenModel):
    """One candidate model of the pool."""

    id: str = Field(pattern=MODEL_ID_PATTERN)
    """Stable id, what the router outputs (lowercase, e.g. `claude-opus-4.6`)."""
    name: str
    """Human-readable display name (e.g. `Claude Opus 4.6`)."""
    runs: list[str] = Field(min_length=1)
    """Source run ids that are rollouts of this model (e.g. leaderboard `folder` names)."""
    price: float | None = Field(default=None, ge=0)
    """Optional per-task price in USD, used to break ties when the rule's `tie_cost` is `price`."""

    _finite_price = field_validator("price")(_finite)


class Pool(FrozenModel):
    """The candidate models a router chooses between, in the order they were listed."""

    name: str
    """Short name of the pool (e.g. `default`)."""
    description: str = ""
    """What this pool mirrors and why, one or two sentences."""
    models: list[PoolModel] = Field(min_length=1)
    """The candidates; their ids are unique, and so are their runs (a run is one model's rollouts)."""

    @model_validator(mode="after")
    def _unique(self) -> Pool:
        ids = [m.id for m in self.models]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate model ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        runs = [r for m in self.models for r in m.runs]
        if len(set(runs)) != len(runs):
            raise ValueError(f"a run is listed twice: {sorted({r for r in runs if runs.count(r) > 1})}")
        return self

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.models]


class OracleRule(FrozenModel):
    """The exact oracle rule and its options, recorded in every table it built."""

    performance: Literal["resolve_rate"] = "resolve_rate"
    """Per-task performance of a model: the fraction of its runs that resolved the task."""
    tie_cost: Literal["measured", "price"] = "measured"
    """Cost that breaks performance ties: the task's measured mean cost, or the pool's `price`."""
    last_resort: Literal["model_id"] = "model_id"
    """When performance and cost both tie: the lexicographically smallest model id wins."""


ResultSourceKind = Literal["leaderboard", "openhands", "harness_report", "trajectories", "long_table"]
"""The result-source kinds (`router_oracle.sources.registry.SOURCE_KINDS` holds one entry for each). Spelt
here as well as there: this file format sits below the readers that registry holds (each builds a
`SourceFile`), so it cannot import it; the registry's import check holds the two to the same names."""


class SourceFile(FrozenModel):
    """One input file that went into the table."""

    path: str
    """The file as `data_files.display_path` names it: bundled files by their package-relative name,
    relative paths as given, absolute ones relative to the working directory when under it, else whole."""
    kind: ResultSourceKind | Literal["tasks", "candidates"]
    """Which importer read it (a result-source kind; `tasks`: the task file; `candidates`: the candidates
    table a subset pool's table was derived from)."""
    sha256: str
    """Hex sha256 of the file's bytes."""
    license: str | None = None
    """SPDX id of the file's licence where known (the bundled files: `MIT`, `CC-BY-NC-4.0`,
    `BSD-3-Clause`); None when the file did not come with one the project knows."""


NON_COMMERCIAL = frozenset({"CC-BY-NC-4.0"})
"""Licences that allow non-commercial use only."""


def license_summary(sources: Sequence[SourceFile]) -> str:
    """One line on the licences a table inherits from its sources: the results' and the task texts'.

    e.g. `results MIT; task texts BSD-3-Clause`, or `results CC-BY-NC-4.0 (non-commercial use only) + MIT;
    task texts BSD-3-Clause`; a source whose licence is not known is `not stated`."""

    def names(kinds: set[str] | None, exclude: set[str]) -> str:
        found = sorted(
            {
                s.license or "not stated"
                for s in sources
                if (kinds is None or s.kind in kinds) and s.kind not in exclude
            }
        )
        text = " + ".join(f"{x} (non-commercial use only)" if x in NON_COMMERCIAL else x for x in found)
        return text or "none"

    return f"results {names(None, {'tasks', 'candidates'})}; task texts {names({'tasks'}, set())}"


def is_non_commercial(sources: Sequence[SourceFile]) -> bool:
    """Whether any source's licence allows non-commercial use only."""
    return any(s.license in NON_COMMERCIAL for s in sources)


class RunOutcome(FrozenModel):
    """One rollout of one model on one task."""

    run: str
    """Source run id."""
    resolved: bool
    """Did the harness mark the task resolved in this run."""
    cost: float = Field(ge=0)
    """Cost of this rollout in USD."""

    _finite_cost = field_validator("cost")(_finite)


class ModelOutcome(FrozenModel):
    """A model's measured outcome on one task, aggregated over its rollouts."""

    resolve_rate: float = Field(ge=0, le=1)
    """Fraction of this model's runs that resolved the task."""
    cost: float = Field(ge=0)
    """Mean cost of this model's runs on the task, USD."""
    runs: list[RunOutcome] = Field(min_length=1)
    """The rollouts behind the two numbers above, in the pool's run order."""

    _finite_cost = field_validator("cost")(_finite)


class TaskRecord(TaskInput):
    """One SWE-bench task: what the router sees (`TaskInput`), and the measured data behind its oracle."""

    repo: str
    """GitHub `owner/name` of the task's repository (required in a table)."""
    difficulty: str | None
    """SWE-bench Verified human difficulty annotation (e.g. `15 min - 1 hour`), if known (required in a
    table, null when unknown)."""
    per_model: dict[str, ModelOutcome]
    """Outcome per pool model id (every pool model is present)."""
    oracle: str
    """The oracle model id for this task, by the table's rule."""
    best: list[str]
    """Model ids that share the best performance (more than one: the pick was a tie)."""
    all_failed: bool
    """True when no model resolved the task in any run."""


class OracleTable(FrozenModel):
    """A whole oracle table: header (pool, rule, provenance) and one record per task."""

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this schema."""
    pool: Pool
    """The candidate models."""
    rule: OracleRule
    """The oracle rule the picks were made with."""
    sources: list[SourceFile]
    """Every input file with its sha256."""
    command: str
    """The command line that built this table."""
    tasks: list[TaskRecord]
    """One record per task, sorted by `instance_id`."""

    def task(self, instance_id: str) -> TaskRecord:
        for t in self.tasks:
            if t.instance_id == instance_id:
                return t
        raise KeyError(f"task {instance_id!r} is not in this table")


def dumps_table(table: OracleTable) -> str:
    """The canonical, byte-stable JSON text of a table."""
    return json.dumps(table.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def write_table(table: OracleTable, path: str | os.PathLike[str]) -> None:
    """Write atomically: a crash never leaves a half-written table at `path`."""
    write_text_atomic(path, dumps_table(table))
