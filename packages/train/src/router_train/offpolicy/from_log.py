"""serve's records as off-policy data: the logged tasks with an outcome, their propensities, and the
policies `router-train feedback` estimates on them (the serving policy, the router's own picks, every
always-X, candidate checkpoints routing each logged task's text)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from router_oracle.task_input import TaskInput
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
from router_train.serve.export import FeedbackInputError, ServeRecords
from router_train.serve.records import DecisionRecord


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
    decisions: list[DecisionRecord] = field(default_factory=list)
    """Each logged task's decision (what it was routed on: `issue_text`, `repo`)."""
    where: list[str] = field(default_factory=list)
    """Where each logged task's outcome was read (`LOG: line N`, `STORE: task KEY`), for messages."""
    checkpoint_sha256: str | None = None
    """The router checkpoint whose decisions these are (None: an LLM router, or an older log)."""
    other_checkpoints: int = 0
    """Outcomes left out: decided by another checkpoint than `checkpoint_sha256` (`--checkpoint-sha`)."""


def log_pool(records: ServeRecords) -> list[str]:
    """The pool the log shows: every model served, picked by the router or scored (sorted)."""
    models: set[str] = set()
    for d in records.decisions.values():
        models |= {m for m in (d.model, d.router_model) if m is not None} | set(d.scores or {})
    models |= {o.model for o in records.outcomes.values()}
    return sorted(models)


class SeveralCheckpoints(FeedbackInputError):
    """The outcomes' decisions come from several router checkpoints and none was named: no one policy
    to estimate (what does not estimate, `feedback --long-table`'s export, runs all the same)."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(f"{source}: {detail}; give --checkpoint-sha SHA to estimate one of them")
        self.detail = detail
        """What was found, without the file (`the outcomes' decisions come from N router checkpoints
        (sha256 ...)`)."""


def checkpoint_of(records: ServeRecords, source: str, checkpoint_sha: str | None) -> str | None:
    """The one checkpoint sha256 whose decisions are estimated: `checkpoint_sha` (a unique prefix will
    do), else the only one the outcomes' decisions show; decisions of two checkpoints without it are
    one `SeveralCheckpoints` (two policies are not one)."""
    shas = sorted(
        {d.checkpoint_sha256 or "" for t in records.outcomes if (d := records.decisions.get(t)) is not None}
    )
    named = ", ".join(s[:16] or "none (an LLM router)" for s in shas)
    if checkpoint_sha is None:
        if len(shas) > 1:
            raise SeveralCheckpoints(
                source, f"the outcomes' decisions come from {len(shas)} router checkpoints (sha256 {named})"
            )
        return shas[0] or None if shas else None
    match = [s for s in shas if s and s.startswith(checkpoint_sha.lower())]
    if len(match) != 1:
        raise FeedbackInputError(
            f"--checkpoint-sha {checkpoint_sha}: "
            + ("matches none" if not match else f"matches {len(match)}")
            + f" of the checkpoints of {source} (sha256 {named})"
        )
    return match[0]


def checkpoint_for(records: ServeRecords, prefer: str | None) -> str | None:
    """The checkpoint a reader that cannot ask (the dashboard) estimates: None (decide in `checkpoint_of`)
    when the outcomes' decisions show one checkpoint; else `prefer` (the serving one) when it has
    outcomes, else the one whose decisions are the latest."""
    latest: dict[str, str] = {}
    for t in records.outcomes:
        d = records.decisions.get(t)
        if d is not None and d.checkpoint_sha256:
            latest[d.checkpoint_sha256] = max(latest.get(d.checkpoint_sha256, ""), d.time)
    if len(latest) <= 1:
        return None
    if prefer in latest:
        return prefer
    return max(latest, key=lambda sha: (latest[sha], sha))


def logged_tasks(
    records: ServeRecords, source: str = "the log", checkpoint_sha: str | None = None
) -> LoggedTasks:
    """The off-policy data of `records` (read from `source`): the decisions of one checkpoint
    (`checkpoint_of`); costs whose weighted sums would overflow are refused, naming the record."""
    sha = checkpoint_of(records, source, checkpoint_sha)
    pool = log_pool(records)
    col = {m: j for j, m in enumerate(pool)}
    served, prop, resolved, cost, ids, router = [], [], [], [], [], []
    kept: list[DecisionRecord] = []
    where: list[str] = []
    skipped = other = 0
    for key in sorted(records.outcomes):
        o = records.outcomes[key]
        d = records.decisions.get(key)
        if d is None or d.propensity is None or d.model != o.model:
            skipped += 1
            continue
        if (d.checkpoint_sha256 or None) != sha:
            other += 1
            continue
        served.append(col[o.model])
        prop.append(d.propensity)
        resolved.append(float(o.resolved))
        cost.append(np.nan if o.cost is None else o.cost)
        ids.append(o.instance_id)
        router.append(col[d.router_model] if d.router_model is not None else -1)
        kept.append(d)
        where.append(records.where.get(key, f"{source}: task {key}"))
    picks = np.asarray(router, dtype=np.int64)
    logged = Logged(
        models=pool,
        served=np.asarray(served, dtype=np.int64),
        propensity=np.asarray(prop, dtype=float),
        resolved=np.asarray(resolved, dtype=float),
        cost=np.asarray(cost, dtype=float),
    )
    _check_sums(logged, where)
    return LoggedTasks(logged, ids, None if (picks < 0).any() else picks, skipped, kept, where, sha, other)


def _check_sums(logged: Logged, where: Sequence[str]) -> None:
    """Every estimate sums at most n weighted costs, each at most the largest cost / propensity: refuse,
    naming its record, a cost that makes that bound non-finite (the estimates would print inf or nan)."""
    priced = ~np.isnan(logged.cost)
    if not priced.any():
        return
    with np.errstate(over="ignore"):
        weighted = np.where(priced, logged.cost, 0.0) / logged.propensity
        bound = float(weighted.max()) * len(weighted) * 2
    if not np.isfinite(bound):
        i = int(np.argmax(weighted))
        raise FeedbackInputError(
            f"{where[i]}: cost {logged.cost[i]:g} USD (propensity {logged.propensity[i]:g}) makes the "
            "estimates' sums overflow: not a cost a task can have"
        )


def task_texts(
    data: LoggedTasks, tasks: Callable[[], Mapping[str, TaskInput]], source: str
) -> list[TaskInput]:
    """The logged tasks' inputs: each decision's own text (`DecisionRecord.issue_text`), else the text of
    its instance id in `tasks` (read only when some decision kept no text); a missing one is one error
    naming `source`."""
    out: list[TaskInput | None] = [
        TaskInput(instance_id=i, repo=d.repo or "", problem_statement=d.issue_text) if d.issue_text else None
        for i, d in zip(data.instance_ids, data.decisions, strict=True)
    ]
    if all(t is not None for t in out) and out:
        return [t for t in out if t is not None]
    by_id = tasks()
    missing = [i for i, t in zip(data.instance_ids, out, strict=True) if t is None and i not in by_id]
    if missing:
        raise FeedbackInputError(
            f"{source}: no text of the logged task {missing[0]!r}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + ': its decision kept none ([feedback] task_text = "hash", or an older serve); give --tasks '
            "with the traffic's task texts (JSONL with instance_id, repo, problem_statement)"
        )
    return [t if t is not None else by_id[i] for i, t in zip(data.instance_ids, out, strict=True)]


def candidate_picks(
    path: Path, texts: Sequence[TaskInput], pool: Sequence[str]
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


DIGITS = {"resolved": 3, "cost": 4}
"""Decimal places a resolved rate and a cost (USD) are printed with, in every table of the log."""


def interval_cell(iv: Interval, digits: int) -> str:
    """An estimate and its interval as the tables print it: `value [low, high]`; an undefined one (SNIPS
    with no matched task: 0/0) is `n/a`."""
    if not all(np.isfinite(v) for v in (iv.value, iv.low, iv.high)):
        return "n/a"
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
        for metric, est in (("resolved", e.resolved), ("cost", e.cost)):
            digits = DIGITS[metric]
            if est is None:
                lines.append(lead + f"{metric:<8} no priced outcomes")
            else:
                cells = " ".join(f"{interval_cell(iv, digits):<24}" for iv in (est.ips, est.snips, est.dr))
                lines.append(lead + f"{metric:<8} {cells}".rstrip())
            lead = " " * len(lead)
    return "\n".join(lines) + "\n"
