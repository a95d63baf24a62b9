"""What the dashboard shows, computed from serve's records: `router-train feedback`'s summary and
estimates (the same functions), the timeline, the comparison with always-the-strongest and the checkpoints
the decisions came from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from router_train.dashboard.frontier import Frontier, frontier
from router_train.dashboard.timeline import Timeline, parse_time, timeline
from router_train.offpolicy.estimators import PolicyEstimate
from router_train.offpolicy.from_log import LoggedTasks, checkpoint_for, logged_tasks
from router_train.offpolicy.summary import ModelSummary, model_summaries
from router_train.scoring.floor import Objective
from router_train.serve.export import ServeRecords

ALWAYS = "always:"
"""The prefix of an always-X policy's name in the estimates (`offpolicy.from_log.estimate_all`)."""


@dataclass(frozen=True)
class Checkpoint:
    """A router checkpoint the decisions came from."""

    sha256: str | None
    """Its file's sha256 (None: decisions of an LLM router, or from before serve recorded it)."""
    tasks: int
    """Tasks it decided."""
    first: datetime | None
    """Its first decision (UTC); None when no decision of it has a readable time."""
    last: datetime | None
    """Its last decision (UTC); None likewise."""
    serving: bool
    """Whether the proxy routes new tasks with it now."""


@dataclass(frozen=True)
class Versus:
    """The serving policy against always-the-strongest: the always-X with the highest estimated (SNIPS)
    resolved rate on the logged tasks (ties: the cheaper)."""

    strongest: PolicyEstimate
    """Its estimate."""
    serving: PolicyEstimate
    """The serving policy's (every logged task as served: the plain means)."""
    tasks: int
    """Logged tasks the estimates are on."""

    @property
    def model(self) -> str:
        return self.strongest.policy.removeprefix(ALWAYS)

    @property
    def resolved_delta(self) -> float:
        """Serving minus always-the-strongest, resolved rate (SNIPS)."""
        assert self.serving.resolved is not None and self.strongest.resolved is not None
        return self.serving.resolved.snips.value - self.strongest.resolved.snips.value

    @property
    def cost_delta(self) -> float | None:
        """Serving minus always-the-strongest, USD per task (SNIPS); None when either has no cost."""
        if self.serving.cost is None or self.strongest.cost is None:
            return None
        return self.serving.cost.snips.value - self.strongest.cost.snips.value


@dataclass(frozen=True)
class Dashboard:
    """Everything the page shows."""

    now: datetime
    """When it was computed (UTC)."""
    router: str
    """The router's name."""
    pool: list[str]
    """The pool served (and the order of the models' colours)."""
    models: list[ModelSummary]
    """`router-train feedback`'s per-model table."""
    decided: int
    """Tasks decided (with a model)."""
    with_outcome: int
    """Tasks with an outcome."""
    explored: int
    """Tasks an exploration draw served."""
    skipped: int
    """Outcomes left out of the estimates (no decision with a propensity)."""
    estimated_sha256: str | None
    """The router checkpoint whose decisions the estimates read (`from_log.checkpoint_for`); None: an LLM
    router's decisions, or no outcome yet."""
    other_checkpoints: int
    """Outcomes of other checkpoints' decisions, left out of the estimates."""
    spend: float | None
    """USD summed over the priced outcomes; None without any."""
    estimates: list[PolicyEstimate]
    """`router-train feedback`'s estimates (empty without a logged outcome with a propensity)."""
    versus: Versus | None
    """Against always-the-strongest; None when no always-X has an estimate."""
    timeline: Timeline
    """Per model over time."""
    checkpoints: list[Checkpoint]
    """The checkpoints decisions came from, most recently used first."""
    frontier: Frontier
    """The frontier measured on this traffic and the regret so far (`dashboard.frontier`)."""


def strongest(estimates: Sequence[PolicyEstimate]) -> PolicyEstimate | None:
    """The always-X estimate with the highest SNIPS resolved rate (ties: lower SNIPS cost), if any."""
    ranked = [e for e in estimates if e.policy.startswith(ALWAYS) and e.resolved is not None]
    if not ranked:
        return None

    def key(e: PolicyEstimate) -> tuple[float, float]:
        assert e.resolved is not None
        return (e.resolved.snips.value, -(e.cost.snips.value if e.cost is not None else 0.0))

    return max(ranked, key=key)


def checkpoints(records: ServeRecords, serving: str | None) -> list[Checkpoint]:
    """Per checkpoint sha256 seen in the decisions: tasks, first and last decision; most recent first."""
    seen: dict[str | None, list[datetime]] = {}
    for d in records.decisions.values():
        times = seen.setdefault(d.checkpoint_sha256, [])
        if (t := parse_time(d.time)) is not None:
            times.append(t)
    tasks = Counter(d.checkpoint_sha256 for d in records.decisions.values())
    rows = [
        Checkpoint(sha, tasks[sha], min(ts, default=None), max(ts, default=None), sha == serving)
        for sha, ts in seen.items()
    ]
    never = datetime.min.replace(tzinfo=UTC)
    return sorted(rows, key=lambda c: (c.last or never, c.sha256 or ""), reverse=True)


def dashboard(
    records: ServeRecords,
    *,
    router: str,
    pool: Sequence[str],
    serving_sha256: str | None,
    now: datetime,
    estimate: Callable[[LoggedTasks], list[PolicyEstimate]],
    objective: Objective | None = None,
) -> Dashboard:
    """The page's figures of `records`; `estimate` gives the off-policy estimates of the logged tasks
    (`offpolicy.summary.default_estimates`, perhaps cached)."""
    # One checkpoint's decisions are one policy (issue 44, item 4): the serving one's, when it has outcomes.
    data = logged_tasks(records, checkpoint_sha=checkpoint_for(records, serving_sha256))
    estimates = estimate(data) if len(data.logged.served) else []
    best = strongest(estimates)
    serving = next((e for e in estimates if e.policy == "serving" and e.resolved is not None), None)
    costs = [o.cost for o in records.outcomes.values() if o.cost is not None]
    models = model_summaries(records)
    order = list(pool) + sorted({m.model for m in models} - set(pool))
    return Dashboard(
        now=now,
        router=router,
        pool=order,
        models=models,
        decided=len(records.decisions),
        with_outcome=len(records.outcomes),
        explored=sum(1 for d in records.decisions.values() if d.explored),
        skipped=data.skipped,
        estimated_sha256=data.checkpoint_sha256,
        other_checkpoints=data.other_checkpoints,
        spend=sum(costs) if costs else None,
        estimates=estimates,
        versus=None if best is None or serving is None else Versus(best, serving, len(data.logged.served)),
        timeline=timeline(records, order),
        checkpoints=checkpoints(records, serving_sha256),
        frontier=frontier(records, list(pool), objective),
    )
