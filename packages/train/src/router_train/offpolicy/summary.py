"""What `router-train feedback` reports of serve's records, computed once: per pool model the tasks
served, explored and with an outcome (resolved rate, mean cost), and the default off-policy estimates.
The CLI prints it as text; `GET /dashboard` draws it (`router_train.dashboard`): the same numbers."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from router_oracle.infra.frozen_model import FrozenModel
from router_train.offpolicy.estimators import BOOTSTRAP, MIN_TRIED, PolicyEstimate
from router_train.offpolicy.from_log import DIGITS, LoggedTasks, estimate_all
from router_train.serve.export import ServeRecords
from router_train.serve.records import OutcomeRecord


class ModelSummary(FrozenModel):
    """One pool model's row of the summary."""

    model: str
    """The pool model id."""
    tasks: int
    """Tasks decided to it (served by it)."""
    explored: int
    """Of them, tasks an exploration draw gave it."""
    outcomes: int
    """Outcomes reported of tasks it served."""
    resolved: float | None
    """Resolved rate of those outcomes; None without any."""
    mean_cost: float | None
    """Mean cost (USD) of the priced ones; None without any."""


def model_summaries(records: ServeRecords) -> list[ModelSummary]:
    """Per model (sorted): every model served or with an outcome."""
    served = Counter(d.model for d in records.decisions.values() if d.model is not None)
    explored = Counter(d.model for d in records.decisions.values() if d.model is not None and d.explored)
    outcomes = sorted(records.outcomes.values(), key=lambda o: o.task)
    rows = []
    for model in sorted(set(served) | {o.model for o in outcomes}):
        mine = [o for o in outcomes if o.model == model]
        costs = [o.cost for o in mine if o.cost is not None]
        rows.append(
            ModelSummary(
                model=model,
                tasks=served[model],
                explored=explored[model],
                outcomes=len(mine),
                resolved=sum(o.resolved for o in mine) / len(mine) if mine else None,
                mean_cost=math.fsum(costs) / len(costs) if costs else None,
            )
        )
    return rows


def summary_table(rows: Sequence[ModelSummary]) -> str:
    """The rows as `router-train feedback` prints them (to `from_log.DIGITS` places)."""
    head = f"{'model':<28} {'tasks':>6} {'explored':>8} {'outcomes':>8} {'resolved':>8} {'mean cost':>10}"
    lines = [head]
    for r in rows:
        rate = "-" if r.resolved is None else f"{r.resolved:.{DIGITS['resolved']}f}"
        cost = "-" if r.mean_cost is None else f"{r.mean_cost:.{DIGITS['cost']}f}"
        lines.append(f"{r.model:<28} {r.tasks:>6} {r.explored:>8} {r.outcomes:>8} {rate:>8} {cost:>10}")
    return "\n".join(lines) + "\n"


def sorted_outcomes(records: ServeRecords) -> list[OutcomeRecord]:
    """The outcomes by task key (the order every export and table uses)."""
    return sorted(records.outcomes.values(), key=lambda o: o.task)


def default_estimates(data: LoggedTasks) -> list[PolicyEstimate]:
    """The estimates `router-train feedback LOG` prints without options (no candidates, default
    bootstrap, seed and minimum): the serving policy, the router's own picks and every always-X."""
    return estimate_all(data, [], bootstrap=BOOTSTRAP, seed=0, min_tried=MIN_TRIED)
