"""The file format of a learned router's safe default operating point (`scoring.safe_point` chooses it; the
checkpoints of `fit`, `local` and `fit irt` store it, `route` applies it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Finite

Choice = Literal["router", "dial", "cheapest"]


class SafeCandidate(FrozenModel):
    """One candidate default point and what inner cross-validation measured of it on the train tasks."""

    name: str
    """`router`, `dial:S` (S: the share of the cheapest-to-strongest cost range the dial aims at) or
    `cheapest`."""
    gap: Finite
    """Out-of-fold resolved rate minus the best random mix's at the same mean cost (a fraction)."""
    cost_per_task: Finite
    """Out-of-fold mean cost per task, USD."""
    resolved: Finite
    """Out-of-fold resolved rate."""
    dial: Finite | None = None
    """A dial point (`dial:S`): the dial the fit's own calibration on all its train tasks gives share S,
    what `--budget` / `--dial` are compared with (`safe_point.dial_estimate`); None: not a dial point, or
    an older file."""


class SafePoint(FrozenModel):
    """A fitted router's default operating point (`choice`) and the estimates it was chosen by."""

    choice: Choice
    """`router`: its native route; `cheapest`: every task to `model`; `dial` (older files only, read as
    written): its cost dial at `dial`."""
    dial: Finite | None = None
    """With `dial`: the dial, on this fit's own calibration (train tasks)."""
    share: float | None = Field(default=None, ge=0, le=1)
    """With `dial`: the target share of the cheapest-to-strongest cost range it was aimed at."""
    model: str | None = None
    """With `cheapest`: the pool model every task goes to (the cheapest on the train tasks)."""
    inner_folds: int = Field(ge=0)
    """Inner folds it was estimated on (0: too few train tasks; the native point, unestimated)."""
    candidates: list[SafeCandidate] = Field(default_factory=list)
    """Every candidate's estimate, in the order tried."""
    margin: Finite | None = None
    """The margin (a fraction) the native route's estimate had to beat the mix by to be the default
    (the kind's, `safe_point.Margins.default`); None: an older file, chosen at `safe_point.MARGIN`."""
    dial_margin: Finite | None = None
    """A budget or dial is honoured only where its estimate beats the mix by more than this (the kind's,
    `safe_point.Margins.dial`); None: an older file, `safe_point.DIAL_MARGIN`."""

    def describe(self) -> str:
        """One phrase: `native route`, `dial 0.123 (25% of the cost range)`, `always gpt-5-mini`."""
        if self.choice == "cheapest":
            return f"always {self.model}"
        if self.choice == "dial":
            return f"dial {self.dial:.6g} ({100 * (self.share or 0):.0f}% of the cost range)"
        return "native route"
