"""The oracle table of any subset pool, derived from a candidates table.

Nothing is re-implemented: each model's outcome on a task is `build.model_outcome` of its runs, and each
row is `build.task_record` (the task's text, the pool's outcomes, `tie_rule.pick_for_task`), exactly as
`build_table` makes them, so a derived table's pool, rule and tasks equal those of a table built for the
same pool from the same leaderboard (tested). Only the provenance differs: a derived table names the
candidates table (kind `candidates`, its sha256) and the sources behind it.

`CandidateIndex` computes each model's outcomes once, so the many pools of an any-pool environment or
trainer cost one tie-rule pick per (task, pool), not a rebuild.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from router_oracle.build import model_outcome, task_record
from router_oracle.candidates import (
    BUNDLED_CANDIDATES,
    OPENHANDS_CANDIDATES,
    CandidatesError,
    CandidatesTable,
    CandidateTask,
    candidates_path,
    dumps_candidates,
    load_candidates,
)
from router_oracle.data_files import display_path
from router_oracle.infra.file_hash import sha256_bytes
from router_oracle.table import (
    ModelOutcome,
    OracleRule,
    OracleTable,
    Pool,
    RunOutcome,
    SourceFile,
    TaskRecord,
)
from router_oracle.table_check import check_table

IN_MEMORY = "(in memory)"
"""The label of a candidates table that was not read from a file (its sha256 still pins it)."""

DEFAULT_POOL_NAME = "subset"
"""Pool name of a derived table when none is given."""

ROW_CACHE_POOLS = 64
"""Pools whose rows `CandidateIndex.records` keeps (least recently used dropped first): trainers and
episodes ask for the same pool's rows again and again, and a row is the same frozen record each time."""


def derive_command(label: str, model_ids: Sequence[str], pool_name: str, output: str | None = None) -> str:
    """The `router-oracle build --from-candidates` command line of a derived table."""
    parts = ["router-oracle", "build", "--from-candidates", label, "--models", ",".join(model_ids)]
    if pool_name != DEFAULT_POOL_NAME:
        parts += ["--pool-name", pool_name]
    if output is not None:
        parts += ["-o", display_path(output)]
    return shlex.join(parts)


_RowKey = tuple[tuple[tuple[str, float | None], ...], OracleRule]


class CandidateIndex:
    """A candidates table ready for deriving many pools (each model's per-task outcomes built once)."""

    def __init__(self, candidates: CandidatesTable, *, label: str = IN_MEMORY) -> None:
        self.candidates = candidates
        """The candidates table."""
        self.label = label
        """How the table is named in derived tables' command lines (`bundled` or its path)."""
        self._tasks: dict[str, CandidateTask] = {t.instance_id: t for t in candidates.tasks}
        self._column = {run: i for i, run in enumerate(candidates.runs)}
        self._models = {m.id: m for m in candidates.models}
        self._outcomes: dict[str, dict[str, ModelOutcome]] = {}
        self.row_cache_pools: int | None = ROW_CACHE_POOLS
        """How many pools' rows `records` keeps (None: every pool's, for an index that lives as long as
        one unit of work over a known set of pools)."""
        # (pool's (id, price) pairs in order, rule) -> task id -> its row; insertion order = recency.
        self._row_cache: dict[_RowKey, dict[str, TaskRecord]] = {}
        self._digest: str | None = None

    @classmethod
    def load(cls, spec: str = BUNDLED_CANDIDATES) -> CandidateIndex:
        """Index the candidates file `spec` (`bundled` or a path)."""
        label = spec if spec in (BUNDLED_CANDIDATES, OPENHANDS_CANDIDATES) else display_path(spec)
        return cls(load_candidates(spec), label=label)

    @property
    def model_ids(self) -> list[str]:
        """Every candidate model id, sorted."""
        return self.candidates.ids

    @property
    def task_ids(self) -> list[str]:
        """Every task id, sorted."""
        return [t.instance_id for t in self.candidates.tasks]

    def task(self, task_id: str) -> CandidateTask:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise CandidatesError(f"{self.label}: task {task_id!r} is not in the candidates table") from None

    def pool(self, model_ids: Sequence[str], *, name: str = DEFAULT_POOL_NAME) -> Pool:
        """The pool of these candidate models, in the order given."""
        ids = list(model_ids)
        if not ids:
            raise CandidatesError(f"{self.label}: a pool needs at least one model")
        unknown = [i for i in ids if i not in self._models]
        if unknown:
            raise CandidatesError(
                f"{self.label}: unknown candidate model(s) {', '.join(unknown)} "
                "(`router-oracle models` lists the candidates)"
            )
        if len(set(ids)) != len(ids):
            raise CandidatesError(f"{self.label}: a model is listed twice in {ids}")
        return Pool(
            name=name,
            description=f"{len(ids)} models of the candidates table {self.label}",
            models=[self._models[i].pool_model() for i in ids],
        )

    def outcomes(self, model_id: str) -> dict[str, ModelOutcome]:
        """Task id -> the model's outcome there (`build.model_outcome` of its runs), cached."""
        cached = self._outcomes.get(model_id)
        if cached is None:
            runs = [(r.run, self._column[r.run]) for r in self._models[model_id].runs]
            cached = {
                t.instance_id: model_outcome(
                    [RunOutcome(run=run, resolved=t.resolved[c], cost=t.cost[c]) for run, c in runs]
                )
                for t in self.candidates.tasks
            }
            self._outcomes[model_id] = cached
        return cached

    def records(
        self, pool: Pool, task_ids: Sequence[str] | None = None, rule: OracleRule | None = None
    ) -> list[TaskRecord]:
        """The pool's table rows of `task_ids` (default: every task, sorted), in that order."""
        rule = rule or OracleRule()
        ids = self.task_ids if task_ids is None else list(task_ids)
        outcomes = {m.id: self.outcomes(m.id) for m in pool.models}
        # A row depends on the pool only through its models' ids, order and prices (the tie rule's
        # inputs), not its name: rows built once per pool are reused, the same immutable records.
        key = (tuple((m.id, m.price) for m in pool.models), rule)
        rows = self._row_cache.pop(key, None)
        if rows is None:
            rows = {}
            if self.row_cache_pools is not None and len(self._row_cache) >= self.row_cache_pools:
                del self._row_cache[next(iter(self._row_cache))]
        self._row_cache[key] = rows
        out = []
        for i in ids:
            row = rows.get(i)
            if row is None:
                row = rows[i] = task_record(self.task(i), pool, rule, {m: outcomes[m][i] for m in outcomes})
            out.append(row)
        return out

    def digest(self) -> str:
        """sha256 of the table's canonical text (that of its file, when the file is canonical)."""
        if self._digest is None:
            self._digest = sha256_bytes(dumps_candidates(self.candidates).encode("utf-8"))
        return self._digest

    def table(
        self,
        model_ids: Sequence[str],
        *,
        pool_name: str = DEFAULT_POOL_NAME,
        output: str | None = None,
    ) -> OracleTable:
        """The oracle table of the pool `model_ids` over every task, with its provenance; checked as every
        table is (`table_check`: a pool of one model, for one, is refused)."""
        pool = self.pool(model_ids, name=pool_name)
        named = self.label in (BUNDLED_CANDIDATES, OPENHANDS_CANDIDATES)
        path = display_path(candidates_path(self.label)) if named else self.label
        table = OracleTable(
            pool=pool,
            rule=OracleRule(),
            sources=[
                SourceFile(path=path, kind="candidates", sha256=self.digest()),
                *self.candidates.sources,
            ],
            command=derive_command(self.label, pool.ids, pool_name, output),
            tasks=self.records(pool),
        )
        check_table(table, origin=path)
        return table


def derive_table(
    candidates: CandidatesTable | str = BUNDLED_CANDIDATES,
    model_ids: Sequence[str] = (),
    *,
    pool_name: str = DEFAULT_POOL_NAME,
) -> OracleTable:
    """The oracle table of the pool `model_ids` (in that order), derived from a candidates table or file.

    Raises `CandidatesError` for an unknown or repeated model id, or an unreadable file."""
    index = (
        CandidateIndex(candidates)
        if isinstance(candidates, CandidatesTable)
        else CandidateIndex.load(candidates)
    )
    return index.table(model_ids, pool_name=pool_name)
