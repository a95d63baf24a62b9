"""Small oracle tables built from the fixed schema, for tests that must not depend on bundled data."""

from __future__ import annotations

from router_oracle.candidates import CandidateModel, CandidateRun, CandidatesTable, CandidateTask
from router_oracle.table import (
    ModelOutcome,
    OracleRule,
    OracleTable,
    Pool,
    PoolModel,
    RunOutcome,
    TaskRecord,
)
from router_oracle.tie_rule import pick_for_task

IDS = ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
NAMES = {
    "claude-opus-4.6": "Claude Opus 4.6",
    "gpt-5.2-high": "GPT-5.2 (high)",
    "kimi-k2.5-high": "Kimi K2.5 (high)",
}

Outcomes = dict[str, tuple[float, float]]
"""model id -> (resolve rate, mean cost) on one task."""


def record(instance_id: str, outcomes: Outcomes, repo: str = "owner/repo", statement: str = "") -> TaskRecord:
    """A task row whose oracle comes from the project's one rule (`router_oracle.tie_rule`)."""
    per_model = {
        m: ModelOutcome(resolve_rate=r, cost=c, runs=[RunOutcome(run=f"run-{m}", resolved=r >= 0.5, cost=c)])
        for m, (r, c) in outcomes.items()
    }
    pool = Pool(name="test", models=[PoolModel(id=m, name=m, runs=[f"run-{m}"]) for m in outcomes])
    pick = pick_for_task(pool, OracleRule(), per_model)
    return TaskRecord(
        instance_id=instance_id,
        repo=repo,
        difficulty="15 min - 1 hour",
        problem_statement=statement or f"Issue text of {instance_id}.",
        per_model=per_model,
        oracle=pick.oracle,
        best=pick.best,
        all_failed=pick.all_failed,
    )


def table(records: list[TaskRecord], ids: list[str] = IDS) -> OracleTable:
    return OracleTable(
        pool=Pool(
            name="test",
            models=[PoolModel(id=i, name=NAMES.get(i, i.upper()), runs=[f"run-{i}"]) for i in ids],
        ),
        rule=OracleRule(),
        sources=[],
        command="test",
        tasks=sorted(records, key=lambda t: t.instance_id),
    )


def labelled_table(counts: dict[str, int], repos: int = 3) -> OracleTable:
    """A table with `counts[model]` tasks whose oracle is `model` (that model alone resolves them)."""
    records = []
    for model, n in counts.items():
        for k in range(n):
            outcomes = {m: (1.0 if m == model else 0.0, 0.1 + 0.1 * IDS.index(m)) for m in IDS}
            records.append(record(f"repo__{model}-{k}", outcomes, repo=f"org/repo{k % repos}"))
    return table(records)


def candidates_for(base: OracleTable, models: dict[str, list[tuple[bool, float]]]) -> CandidatesTable:
    """A candidates table over `base`'s tasks: `models[id][k]` is that model's (resolved, cost) on
    `base.tasks[k]`, one run each."""
    ids = sorted(models)
    return CandidatesTable(
        grouping="test",
        models=[
            CandidateModel(
                id=i,
                name=i.upper(),
                base_model=i,
                effort=None,
                provider="test",
                runs=[
                    CandidateRun(
                        run=f"run-{i}",
                        name=i,
                        model_tag=i,
                        org=None,
                        scaffold=None,
                        date=None,
                        headline_resolved=None,
                    )
                ],
            )
            for i in ids
        ],
        excluded=[],
        sources=[],
        command="test",
        runs=[f"run-{i}" for i in ids],
        tasks=[
            CandidateTask(
                instance_id=t.instance_id,
                repo=t.repo,
                difficulty=t.difficulty,
                problem_statement=t.problem_statement,
                resolved=[models[i][k][0] for i in ids],
                cost=[models[i][k][1] for i in ids],
            )
            for k, t in enumerate(base.tasks)
        ],
    )
