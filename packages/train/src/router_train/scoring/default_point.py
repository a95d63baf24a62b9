"""The file format of a learned router's safe default operating point (`scoring.safe_point` chooses it; the
checkpoints of `fit`, `local` and `fit irt` store it, `route` applies it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

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


class TrafficEstimate(FrozenModel):
    """A doubly robust estimate of a resolved rate (or a difference of two) on logged traffic."""

    value: Finite
    """The estimate on the log as it is (a fraction)."""
    low: Finite
    """Lower end of its 95% percentile bootstrap interval over the logged tasks."""
    high: Finite
    """Upper end."""


class TrafficPoint(FrozenModel):
    """Where a refitted checkpoint's default point came from: the off-policy estimates, on the logged
    traffic it was refitted to, of its native route against the fallback (`offpolicy.refit_point`)."""

    log: str
    """The decision log or store the outcomes were read from."""
    tasks: int = Field(ge=0)
    """Logged outcomes with a propensity the estimates read."""
    fallback: str
    """The model the fallback sends every task to: the pool's cheapest by the refit's costs."""
    router: TrafficEstimate | None
    """The refitted router's native route's resolved rate (DR); None: no estimate."""
    fallback_resolved: TrafficEstimate | None
    """Always `fallback`'s resolved rate (DR); None: no estimate."""
    difference: TrafficEstimate | None
    """Router minus fallback, its interval from the same (paired) bootstrap resamples; None: no estimate."""
    margin: Finite
    """What the difference had to be above (the kind's default margin), with its interval's low end
    above zero, for the native route to be kept."""
    bootstrap: int = Field(ge=1)
    """Bootstrap resamples of the logged tasks."""
    seed: int = Field(ge=0)
    """Their seed."""
    reason: str
    """One line: the choice and the numbers it was made on, or why there is no estimate."""


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
    traffic: TrafficPoint | None = None
    """Set by `feedback --refit`: the default point was chosen on the logged traffic, not on train tasks
    (`choice` and these estimates); the dial points in `candidates` and `dial_margin` are the prior's
    (the traffic estimates no dial point: a budget or dial is checked as on the prior). None: chosen on
    the train tasks (and left out of the file, so such checkpoints keep their bytes)."""

    @model_serializer(mode="wrap")
    def _without_no_traffic(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if data.get("traffic") is None:
            data.pop("traffic", None)
        return data

    def describe(self) -> str:
        """One phrase: `native route`, `dial 0.123 (25% of the cost range)`, `always gpt-5-mini`."""
        if self.choice == "cheapest":
            return f"always {self.model}"
        if self.choice == "dial":
            return f"dial {self.dial:.6g} ({100 * (self.share or 0):.0f}% of the cost range)"
        return "native route"
