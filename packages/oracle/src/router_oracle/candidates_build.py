"""Build a candidates table from leaderboard files and a task file — deterministically.

The runs are grouped and named by `leaderboard_models.group_runs`; their per-task rows are read and
checked by the same importer and merge as an oracle table's (`sources.leaderboard`, `merge`), so a
candidates table holds exactly the numbers `router-oracle build` would read for the same runs.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from router_oracle.build import read_sources
from router_oracle.candidates import (
    CandidateModel,
    CandidateRun,
    CandidatesTable,
    CandidateTask,
    ExcludedRun,
    write_candidates,
)
from router_oracle.data_files import display_path, tasks_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.leaderboard_models import MAX_HEADLINE_GAP, ModelGroup, group_runs
from router_oracle.merge import merge_sources
from router_oracle.sources.registry import BUNDLED, SOURCE_KINDS, SourceSpec
from router_oracle.table import Pool
from router_oracle.tasks_file import read_tasks

PathLike = str | os.PathLike[str]

GROUPING = (
    "leaderboard-model-effort v2: one model = the runs whose `Model:` tag names the same base model "
    "(lowercased, release date dropped, digit-dash-digit as a version dot, Claude word order unified) at "
    "the same stated reasoning effort under the same harness; id = base model + `-<effort>` when stated "
    "+ `-<harness>` for a harness other than mini-swe-agent; runs without per-task data, without costs, "
    f"missing tasks, or (leaderboard) per-task flags more than {MAX_HEADLINE_GAP:g} point off the headline "
    "are excluded"
)
"""`CandidatesTable.grouping` of tables built here: the rule of `router_oracle.leaderboard_models`."""


def canonical_command(sources: Sequence[SourceSpec], tasks: PathLike | None, output: PathLike | None) -> str:
    """The `router-oracle candidates` command line these arguments amount to, with no absolute paths."""
    parts = ["router-oracle", "candidates"]
    for spec in sources:
        kind = spec.source_kind
        parts += [kind.flag, BUNDLED if str(spec.path) == BUNDLED else display_path(spec.path)]
    if tasks is not None:
        parts += ["--tasks", display_path(tasks)]
    if output is not None:
        parts += ["-o", display_path(output)]
    return shlex.join(parts)


def _model(group: ModelGroup) -> CandidateModel:
    return CandidateModel(
        id=group.id,
        name=group.name,
        base_model=group.base_model,
        effort=group.effort,
        provider=group.provider,
        runs=[
            CandidateRun(
                run=e.run,
                name=e.name,
                model_tag=e.tag("Model"),
                org=e.tag("Org"),
                scaffold=e.agent_version,
                harness=e.harness,
                input_price=e.input_price,
                output_price=e.output_price,
                date=e.date,
                headline_resolved=e.headline_resolved,
            )
            for e in group.entries
        ],
    )


def build_candidates(
    sources: Sequence[SourceSpec] = (SourceSpec("leaderboard", BUNDLED),),
    *,
    tasks: PathLike | None = None,
    output: PathLike | None = None,
) -> CandidatesTable:
    """Build (and, with `output`, atomically write) the candidates table of result files.

    `sources`: files of kinds that publish many runs (`SourceKind.entries`: leaderboards, the OpenHands
    Index; `bundled` = the bundled one); their runs are grouped together (a run id in two files is a
    duplicate-row error). `tasks`: task JSONL (default: bundled). Raises `OracleInputError` on bad input;
    then nothing is written.
    """
    if not sources:
        raise OracleInputError("no result source given")
    for spec in sources:
        if spec.source_kind.entries is None:
            runs_kinds = ", ".join(k.flag for k in SOURCE_KINDS if k.entries is not None)
            raise OracleInputError(
                f"{spec.path}: {spec.source_kind.flag} holds one run, "
                f"not a set of candidate runs ({runs_kinds})"
            )
    task_rows, task_source = read_tasks(tasks if tasks is not None else tasks_path())
    task_ids = [t.instance_id for t in task_rows]
    entries = []
    first: dict[str, str] = {}
    for spec in sources:
        kind = spec.source_kind
        assert kind.entries is not None
        for e in kind.entries(kind.path(spec.path)):
            if e.run in first:
                raise OracleInputError(f"{spec.path}: run {e.run!r} is also in {first[e.run]}")
            first[e.run] = spec.path
            entries.append(e)
    groups, exclusions = group_runs(entries, task_ids)
    if not groups:
        raise OracleInputError(
            f"{', '.join(s.path for s in sources)}: no run has per-task data for every task"
        )
    models = [_model(g) for g in groups]
    pool = Pool(name="candidates", models=[m.pool_model() for m in models])
    runs = [r for m in pool.models for r in m.runs]
    loaded = [source for _, source in read_sources(sources, set(runs))]
    merged = merge_sources(loaded, pool, task_ids)
    table = CandidatesTable(
        grouping=GROUPING,
        models=models,
        excluded=[ExcludedRun(run=x.entry.run, name=x.entry.name, reason=x.reason) for x in exclusions],
        sources=[task_source, *(s.source for s in loaded)],
        command=canonical_command(sources, tasks, output),
        runs=runs,
        tasks=[
            CandidateTask(
                instance_id=t.instance_id,
                repo=t.repo,
                difficulty=t.difficulty,
                problem_statement=t.problem_statement,
                resolved=[merged[r][t.instance_id].resolved for r in runs],
                cost=[merged[r][t.instance_id].cost for r in runs],
            )
            for t in task_rows
        ],
    )
    if output is not None:
        write_candidates(table, output)
    return table
