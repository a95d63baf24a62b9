"""Is a model's logged resolve rate what its prior allows? The test `router-train feedback --refit` runs
before refitting, so that outcomes posted to move a router (every task of one model reported resolved)
are seen, not learned (issue 44, item 7).

Per model: the Wilson score interval of its logged resolved rate (k of n) at `SHIFT_LEVEL`; the prior (the
checkpoint's mean predicted resolve probability on the same tasks) outside it is a shift the data do not
explain by chance at that level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.stats import norm

from router_oracle.infra.frozen_model import FrozenModel
from router_train.fitting.fit import ModelEvidence

SHIFT_LEVEL = 0.999
"""Coverage of each model's Wilson interval: a shift is flagged only when chance would give it less than
once in a thousand (per model), so honest traffic of a few hundred tasks is rarely flagged."""


class Shift(FrozenModel):
    """A model whose logged resolve rate departs from its prior."""

    model: str
    """The pool model id."""
    resolved: int
    """Logged tasks it served that were resolved."""
    outcomes: int
    """Logged tasks it served with an outcome."""
    low: float
    """Lower end of the Wilson interval of the logged rate."""
    high: float
    """Upper end."""
    prior: float
    """The checkpoint's mean predicted resolve probability on those tasks."""

    def line(self) -> str:
        """One line for the terminal."""
        return (
            f"{self.model}: logged resolve rate {self.resolved / self.outcomes:.3f} ({self.resolved}/"
            f"{self.outcomes}; {SHIFT_LEVEL:.1%} Wilson [{self.low:.3f}, {self.high:.3f}]) departs from the "
            f"prior's {self.prior:.3f}"
        )


def wilson(k: int, n: int, level: float = SHIFT_LEVEL) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion k / n (n > 0) at `level`."""
    z = float(norm.ppf(0.5 + level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def shifts(evidence: Sequence[ModelEvidence], level: float = SHIFT_LEVEL) -> list[Shift]:
    """The models whose prior lies outside the Wilson interval of their logged rate."""
    out = []
    for e in evidence:
        if e.outcomes == 0 or e.prior is None:
            continue
        low, high = wilson(e.resolved, e.outcomes, level)
        if not low <= e.prior <= high:
            out.append(
                Shift(
                    model=e.model, resolved=e.resolved, outcomes=e.outcomes, low=low, high=high, prior=e.prior
                )
            )
    return out
