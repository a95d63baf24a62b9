"""The seam through which a floor learned on the team's traffic assigns serve's new tasks (issue 53 item 3).

Where a new task's decision is the floor's (`Decision.chooser == "floor"`: the router's point at the
objective is not backed), serve asks a `FloorAssigner` for the task's model instead of the table's mix.
The assigner (`router_train.serve_floor.ServeFloor`) learns from the store's outcomes with
`offpolicy.floor_learner`, which reads serve's records, so it sits above this package and is handed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from router_train.route import CheckpointSpec, EndpointSpec
from router_train.serve.records import OutcomeRecord


@dataclass(frozen=True)
class FloorChoice:
    """What the learned floor assigned a new task."""

    model: str
    """The pool model."""
    propensity: float
    """The probability the learner's policy gave `model` (its mean share over posterior draws)."""
    posterior: dict[str, Any]
    """The learner's state when it assigned (`offpolicy.floor_learner.PosteriorSummary` as JSON)."""
    reason: str
    """Appended to the decision's reason: the mix the learner deploys now and the outcomes it has seen
    (the decision's own reason names the table's mix)."""


FloorAssigner = Callable[[str, Any], Awaitable[FloorChoice | None]]
"""(task key, the `Serving` it is routed with) -> the learned floor's choice; None: no learned floor for
this router (no objective, or no per-model table to start from)."""


def objective_words(spec: CheckpointSpec | EndpointSpec) -> str:
    """The objective serve serves, as the user gave it (`--budget 1.1`, `--quality best-0.02`), or what it
    serves without one: the start line and `GET /health` say it."""
    if isinstance(spec, EndpointSpec):
        return "the LLM router's own picks (no objective)"
    objective = spec.objective()
    if objective is not None:
        return objective.describe()
    if spec.dial is not None:
        return f"--dial {spec.dial:g}"
    return "the safe default point" if not spec.no_safe_point else "the native point (no_safe_point)"


def observed(outcomes: Sequence[OutcomeRecord], models: Sequence[str]) -> list[OutcomeRecord]:
    """The outcomes the learned floor observes and the dashboard's frontier measures, in one canonical
    order, (outcome time, task key), the same on every replica: those whose cost is known (a feedback
    `cost` or priced usage) and whose model is in `models`."""
    kept = [o for o in outcomes if o.cost is not None and o.model in models]
    return sorted(kept, key=lambda o: (o.time, o.task))
