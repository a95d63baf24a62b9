"""What a router answers for one task: a pool model, or no model and why."""

from __future__ import annotations

from typing import Literal

from router_oracle.infra.frozen_model import FrozenModel

OPTIONAL_FIELDS = ("scores", "reply", "dial", "chooser")
"""Fields a decision's JSON line carries only when set (a line without them reads as before they existed)."""


class Decision(FrozenModel):
    """One routed task (one JSON line of `router-train route`)."""

    instance_id: str
    """The task's id."""
    model: str | None
    """The pool model id the task is routed to; None when the router gave no valid route."""
    reason: str | None = None
    """Why `model` is None (e.g. `unparseable reply`), why a fallback was taken, or why the router routes
    at its safe default point (that point, or a budget or dial refused there: `route.operating_point`);
    else None."""
    router: str
    """The router's name (`Router.name`: its kind and checkpoint or endpoint model)."""
    scores: dict[str, float] | None = None
    """`--explain`: per pool model, the router's score (probability for GRPO routers, decision value or
    votes for baselines); None for routers without scores or without `--explain`."""
    reply: str | None = None
    """`--explain` in endpoint mode: the LLM's raw reply."""
    fallback: bool = False
    """True when `model` is the `--fallback` model because the router gave no valid route."""
    dial: float | None = None
    """The cost dial the route was picked with (`--budget` or `--dial`); with `--explain`, `scores` are
    then the dialled scores, score - dial x mean train cost, whose argmax is `model`. None: no dial."""
    chooser: Literal["router", "floor"] | None = None
    """With `--budget`, `--quality` or `--dial`: who chose `model`, `router` (its own point, backed by its
    inner estimate) or `floor` (the mix of single models at the objective, `scoring.floor`); `reason`
    says why. None: the default point (no objective given)."""

    def json_line(self) -> str:
        """The JSON line written for this decision (`scores`/`reply`/`dial`/`chooser` only when set)."""
        unset = {k for k in OPTIONAL_FIELDS if getattr(self, k) is None}
        return self.model_dump_json(exclude=unset) + "\n"
