"""What the router is told about the pool: statistics computed from the train split of the table.

Nothing here is hand-written, and only train tasks go in, so no held-out outcome reaches a prompt.
The SWE-bench difficulty annotation is left out on purpose: annotators judged it from the gold patch,
which a router never has, so neither the summary nor the task prompt uses it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import Pool, TaskRecord

MIN_GROUP_TASKS = 10
"""Smallest repo group worth a row: fewer tasks give noise, not a hint."""


class ModelCapability(FrozenModel):
    """One pool model over the summarised tasks."""

    id: str
    """Model id, as written in `<route>…</route>`."""
    name: str
    """Display name."""
    resolve_rate: float
    """Mean per-task resolve rate."""
    mean_cost: float
    """Mean per-task cost in USD."""
    relative_cost: float
    """`mean_cost` divided by the cheapest model's (1.0 = cheapest)."""
    oracle_share: float
    """Fraction of tasks on which this model is the oracle pick."""
    sole_solver: float
    """Fraction of tasks that this model alone resolved at least once."""


class GroupRates(FrozenModel):
    """Per-model resolve rates on the tasks of one repository."""

    group: str
    """The repo (`owner/name`)."""
    n_tasks: int
    """Tasks in the group."""
    resolve_rate: dict[str, float]
    """Mean resolve rate per model id."""
    oracle_share: dict[str, float]
    """Fraction of the group's tasks each model id is the oracle for."""


class CapabilitySummary(FrozenModel):
    """A pool's record on a set of tasks (the train split)."""

    n_tasks: int
    """Tasks summarised."""
    models: list[ModelCapability]
    """One entry per pool model, in pool order."""
    by_repo: list[GroupRates]
    """Groups by repo with at least `MIN_GROUP_TASKS` tasks, largest first."""

    def render(self) -> str:
        """The summary as markdown tables, for the system prompt."""
        lines = [
            f"Measured on {self.n_tasks} SWE-bench Verified tasks "
            "(each model's harness-verified agent runs):",
            "",
            "| model id | resolve rate | mean cost (USD) | relative cost | best pick on | only solver on |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {m.id} | {m.resolve_rate:.0%} | {m.mean_cost:.3f} | {m.relative_cost:.1f}x "
            f"| {m.oracle_share:.0%} | {m.sole_solver:.0%} |"
            for m in self.models
        ]
        ids = [m.id for m in self.models]
        if self.by_repo:
            lines += ["", "Resolve rate (and best-pick share) by repository:", ""]
            lines += ["| repository | tasks | " + " | ".join(ids) + " |", "| --- " * (len(ids) + 2) + "|"]
            lines += [
                f"| {g.group} | {g.n_tasks} | "
                + " | ".join(f"{g.resolve_rate[i]:.0%} ({g.oracle_share[i]:.0%})" for i in ids)
                + " |"
                for g in self.by_repo
            ]
        return "\n".join(lines)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _groups(tasks: Sequence[TaskRecord], ids: list[str]) -> list[GroupRates]:
    members: dict[str, list[TaskRecord]] = {}
    for t in tasks:
        members.setdefault(t.repo, []).append(t)
    return [
        GroupRates(
            group=k,
            n_tasks=len(g),
            resolve_rate={i: _mean([t.per_model[i].resolve_rate for t in g]) for i in ids},
            oracle_share={i: sum(t.oracle == i for t in g) / len(g) for i in ids},
        )
        for k, g in members.items()
        if len(g) >= MIN_GROUP_TASKS
    ]


def summarize(tasks: Sequence[TaskRecord], pool: Pool) -> CapabilitySummary:
    """The pool's record on `tasks` (pass the train split: see the module docstring)."""
    if not tasks:
        raise ValueError("cannot summarise the pool on zero tasks")
    ids = pool.ids
    costs = {i: _mean([t.per_model[i].cost for t in tasks]) for i in ids}
    cheapest = min(costs.values())
    oracle = Counter(t.oracle for t in tasks)
    solvers = Counter(
        solved[0] for t in tasks if len(solved := [i for i in ids if t.per_model[i].resolve_rate > 0]) == 1
    )
    n = len(tasks)
    models = [
        ModelCapability(
            id=m.id,
            name=m.name,
            resolve_rate=_mean([t.per_model[m.id].resolve_rate for t in tasks]),
            mean_cost=costs[m.id],
            relative_cost=costs[m.id] / cheapest if cheapest > 0 else 1.0,
            oracle_share=oracle[m.id] / n,
            sole_solver=solvers[m.id] / n,
        )
        for m in pool.models
    ]
    by_repo = sorted(_groups(tasks, ids), key=lambda g: (-g.n_tasks, g.group))
    return CapabilitySummary(n_tasks=n, models=models, by_repo=by_repo)
