"""Synthetic candidates tables for the any-pool trainer's tests: who resolves what is decided by a word
of the issue or by the repository, so the right route follows from a model's capability entries."""

from __future__ import annotations

import random
from collections.abc import Callable

from router_oracle.candidates import CandidateModel, CandidateRun, CandidatesTable, CandidateTask
from router_oracle.derive import CandidateIndex

WORDS = ["parser", "cache", "widget", "config", "render", "socket", "schema", "plugin", "buffer", "logger"]


def synthetic_index(
    n_tasks: int,
    models: dict[str, float],
    resolves: Callable[[str, str, str], bool],
    *,
    repos: tuple[str, ...] = ("org/alpha", "org/beta"),
    hard_share: float = 0.5,
    seed: int = 0,
    providers: dict[str, str] | None = None,
) -> CandidateIndex:
    """`n_tasks` tasks; a task is hard (its issue says "segfault", else "typo") with `hard_share`,
    its repo cycles over `repos`. `models[id]` is the model's cost per task; `resolves(model, repo,
    kind)` (kind: "hard" / "easy") says whether it resolves a task; `providers[id]` its maker (None
    without)."""
    rng = random.Random(seed)
    ids = sorted(models)
    tasks = []
    for k in range(n_tasks):
        kind = "hard" if rng.random() < hard_share else "easy"
        repo = repos[k % len(repos)]
        filler = " ".join(rng.choice(WORDS) for _ in range(8))
        word = "segfault" if kind == "hard" else "typo"
        tasks.append(
            CandidateTask(
                instance_id=f"{repo.split('/')[1]}__t-{k:04d}",
                repo=repo,
                difficulty=None,
                problem_statement=f"The {word} happens in {filler}.",
                resolved=[resolves(m, repo, kind) for m in ids],
                cost=[models[m] for m in ids],
            )
        )
    table = CandidatesTable(
        grouping="synthetic",
        models=[
            CandidateModel(
                id=m,
                name=m,
                base_model=m,
                effort=None,
                provider=(providers or {}).get(m),
                runs=[
                    CandidateRun(
                        run=f"run-{m}",
                        name=m,
                        model_tag=None,
                        org=None,
                        scaffold=None,
                        date=None,
                        headline_resolved=None,
                    )
                ],
            )
            for m in ids
        ],
        excluded=[],
        sources=[],
        command="synthetic",
        runs=[f"run-{m}" for m in ids],
        tasks=sorted(tasks, key=lambda t: t.instance_id),
    )
    return CandidateIndex(table, label="synthetic")
