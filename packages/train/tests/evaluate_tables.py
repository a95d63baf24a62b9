"""A small synthetic oracle table for the evaluate tests: three models, text that hints at the winner."""

from __future__ import annotations

import functools
import random
from pathlib import Path

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
from router_train.evaluate import EvalReport, evaluate
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.report import TableInfo
from router_train.local.config import LocalTrainConfig

DATA = Path(__file__).parent / "data"
VF_TRACES = DATA / "evaluate_vf_traces.jsonl"
"""A real `vf-eval router-frontier-rl -r 2` output (stub model on 127.0.0.1), long texts trimmed."""
VF_TABLE = DATA / "evaluate_vf_table.json"
"""The bundled table cut to the 6 tasks of VF_TRACES, which its recorded rewards were scored on."""

FAST_LOCAL = [("local-grpo", LocalTrainConfig(steps=10, tasks_per_step=16, shift_folds=0))]
"""The local router with few steps: the evaluate tests check the plumbing, not how well it learns."""

IDS = ["big", "mid", "small"]
COST = {"big": 1.0, "mid": 0.4, "small": 0.1}
POOL = Pool(name="t", models=[PoolModel(id=i, name=i, runs=[f"run-{i}"]) for i in IDS])
REPOS = ["astropy/astropy", "django/django", "sympy/sympy", "pytest-dev/pytest"]


def make_table(n: int = 60, seed: int = 1) -> OracleTable:
    """Tasks whose text hints at the winner (a repo-specific word), so classifiers have something to learn."""
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        repo = REPOS[i % len(REPOS)]
        p = {"big": 0.8, "mid": 0.6 if i % 4 == 1 else 0.3, "small": 0.7 if i % 4 == 2 else 0.2}
        per_model = {
            m: ModelOutcome(
                resolve_rate=float(ok := rng.random() < p[m]),
                cost=COST[m] * (0.5 + rng.random()),
                runs=[RunOutcome(run=f"run-{m}", resolved=ok, cost=COST[m])],
            )
            for m in IDS
        }
        per_model = {
            m: o.model_copy(update={"runs": [o.runs[0].model_copy(update={"cost": o.cost})]})
            for m, o in per_model.items()
        }
        pick = pick_for_task(POOL, OracleRule(), per_model)
        tasks.append(
            TaskRecord(
                instance_id=f"{repo.split('/')[1]}__task-{i:03d}",
                repo=repo,
                difficulty=None,
                problem_statement=f"Issue {i}: the {['parser', 'model', 'printer', 'fixture'][i % 4]} fails.",
                per_model=per_model,
                oracle=pick.oracle,
                best=pick.best,
                all_failed=all(o.resolve_rate == 0 for o in per_model.values()),
            )
        )
    return OracleTable(pool=POOL, rule=OracleRule(), sources=[], command="test", tasks=tasks)


@functools.cache
def cv_report(jobs: int) -> EvalReport:
    """Cross-validated `evaluate` of `make_table(80)`: 4 folds x fold seeds 0 and 1, every built-in router
    and FAST_LOCAL; computed once per process and `jobs` (the folds and curves tests read the same one,
    and compare jobs 1 with jobs 2)."""
    table = make_table(n=80)
    info = TableInfo(file="t.json", sha256="0" * 64, pool=table.pool.ids, n_tasks=len(table.tasks))
    return evaluate(
        table, info, EvaluateConfig(folds=4, fold_seeds=[0, 1], local_routers=FAST_LOCAL, jobs=jobs)
    )
