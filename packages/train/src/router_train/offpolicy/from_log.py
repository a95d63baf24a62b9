"""serve's records as off-policy data: the logged tasks with an outcome, their propensities, and the
policies `router-train feedback` estimates on them (the serving policy, the router's own picks, every
always-X, candidate checkpoints routing each logged task's text)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from router_train.offpolicy.estimators import (
    BOOTSTRAP,
    MIN_TRIED,
    Interval,
    Logged,
    PolicyEstimate,
    always,
    columns,
    estimate_policy,
)
from router_train.route.kinds.irt import IrtRouter
from router_train.route.load import load_router
from router_train.route.router import ScoringRouter
from router_train.route.spec import CheckpointSpec
from router_train.route.task import RouteTask
from router_train.serve.export import FeedbackInputError, ServeRecords


@dataclass(frozen=True)
class LoggedTasks:
    """The records' tasks that have an outcome and a decision with a propensity, sorted by task key."""

    logged: Logged
    instance_ids: list[str]
    """Each logged task's `instance_id` (what candidates' texts are looked up by)."""
    router_picks: np.ndarray | None
    """The router's own pick per task (column); None when it gave no route on some task."""
    skipped: int
    """Outcomes left out: no decision, or a decision without a propensity (a log from before `[explore]`)."""


def log_pool(records: ServeRecords) -> list[str]:
    """The pool the log shows: every model served, picked by the router or scored (sorted)."""
    models: set[str] = set()
    for d in records.decisions.values():
        models |= {m for m in (d.model, d.router_model) if m is not None} | set(d.scores or {})
    models |= {o.model for o in records.outcomes.values()}
    return sorted(models)


def logged_tasks(records: ServeRecords) -> LoggedTasks:
    """The off-policy data of `records`."""
    pool = log_pool(records)
    col = {m: j for j, m in enumerate(pool)}
    served, prop, resolved, cost, ids, router = [], [], [], [], [], []
    skipped = 0
    for key in sorted(records.outcomes):
        o = records.outcomes[key]
        d = records.decisions.get(key)
        if d is None or d.propensity is None or d.model != o.model:
            skipped += 1
            continue
        served.append(col[o.model])
        prop.append(d.propensity)
        resolved.append(float(o.resolved))
        cost.append(np.nan if o.cost is None else o.cost)
        ids.append(o.instance_id)
        router.append(col[d.router_model] if d.router_model is not None else -1)
    picks = np.asarray(router, dtype=np.int64)
    logged = Logged(
        models=pool,
        served=np.asarray(served, dtype=np.int64),
        propensity=np.asarray(prop, dtype=float),
        resolved=np.asarray(resolved, dtype=float),
        cost=np.asarray(cost, dtype=float),
    )
    return LoggedTasks(logged, ids, None if (picks < 0).any() else picks, skipped)


def task_texts(ids: Sequence[str], tasks: Mapping[str, RouteTask], source: str) -> list[RouteTask]:
    """The logged tasks' texts, by instance id; a missing one is one error naming `source`."""
    missing = [i for i in ids if i not in tasks]
    if missing:
        raise FeedbackInputError(
            f"{source}: no text of the logged task {missing[0]!r}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + ": give --tasks with the traffic's task texts (JSONL with instance_id, repo, problem_statement)"
        )
    return [tasks[i] for i in ids]


def candidate_picks(
    path: Path, texts: Sequence[RouteTask], pool: Sequence[str]
) -> tuple[np.ndarray, np.ndarray | None]:
    """A checkpoint's routes of the logged tasks (columns of `pool`) and, for a router that predicts
    resolve probabilities (the IRT kind), those (tasks, pool) as DR's reward model (else None)."""
    router = load_router(CheckpointSpec(checkpoint=path))
    unknown = [m for m in router.pool if m not in pool]
    if unknown:
        raise FeedbackInputError(
            f"--candidate {path}: its pool model {unknown[0]!r} is not in the log's pool ({', '.join(pool)})"
        )
    picks = columns(
        pool, [d.model or "" for d in router.route_many(list(texts), explain=False)], f"--candidate {path}"
    )
    q = None
    scorer = router.scorer if isinstance(router, ScoringRouter) else None
    if isinstance(scorer, IrtRouter) and texts:
        p = scorer.probabilities(list(texts))
        mine = {m: j for j, m in enumerate(router.pool)}
        q = np.full((len(texts), len(pool)), np.nan)
        for j, m in enumerate(pool):
            if m in mine:
                q[:, j] = p[:, mine[m]]
    return picks, q


def estimate_all(
    data: LoggedTasks,
    candidates: Sequence[tuple[str, np.ndarray, np.ndarray | None]],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
    min_tried: int = MIN_TRIED,
) -> list[PolicyEstimate]:
    """The serving policy, the router's own picks, every always-X and the `candidates` (name, picks, DR
    reward model or None)."""
    logged = data.logged
    n = len(logged.served)

    def one(name: str, picks: np.ndarray | None, q: np.ndarray | None = None) -> PolicyEstimate:
        return estimate_policy(
            name, picks, logged, q_resolved=q, bootstrap=bootstrap, seed=seed, min_tried=min_tried
        )

    out = [one("serving", None)]
    if data.router_picks is not None:
        out.append(one("router", data.router_picks))
    out += [one(f"always:{model}", always(m, n)) for m, model in enumerate(logged.models)]
    rate, _ = logged.reward_models()
    for name, picks, q in candidates:
        out.append(one(name, picks, None if q is None else np.where(np.isnan(q), rate[None, :], q)))
    return out


def _cell(iv: Interval, digits: int) -> str:
    return f"{iv.value:.{digits}f} [{iv.low:.{digits}f}, {iv.high:.{digits}f}]"


def estimates_table(estimates: Sequence[PolicyEstimate]) -> str:
    """The estimates as text: per policy, matched tasks, ESS, and each metric's IPS, SNIPS and DR."""
    head = f"{'policy':<34} {'matched':>7} {'ESS':>7}  {'metric':<8} "
    head += f"{'IPS [95%]':<24} {'SNIPS [95%]':<24} {'DR [95%]':<24}"
    lines = [head]
    for e in estimates:
        lead = f"{e.policy:<34} {e.matched:>7} {e.ess:>7.1f}  "
        if e.warning is not None or e.resolved is None:
            lines.append(lead + f"warning: {e.warning}")
            continue
        for metric, est, digits in (("resolved", e.resolved, 3), ("cost", e.cost, 4)):
            if est is None:
                lines.append(lead + f"{metric:<8} no priced outcomes")
            else:
                cells = " ".join(f"{_cell(iv, digits):<24}" for iv in (est.ips, est.snips, est.dr))
                lines.append(lead + f"{metric:<8} {cells}".rstrip())
            lead = " " * len(lead)
    return "\n".join(lines) + "\n"
