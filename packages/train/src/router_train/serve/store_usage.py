"""A task's usage sums as the store keeps them (`TaskUsage`), and answers' usage summed per task before it
is written (`summed`: a batch of answers is one row update per task)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_train.serve.records import UsageRecord

USAGE_COLUMNS = ("requests", "unreported", "prompt_tokens", "completion_tokens", "priced", "cost")
"""The usage table's summed columns, in `TaskUsage`'s order."""


class TaskUsage(FrozenModel):
    """A task's routed requests' usage, summed (the store's `usage` row)."""

    requests: int = 0
    """Upstream answers to the task's routed requests (successful ones)."""
    unreported: int = 0
    """Of those, answers that reported no `usage` (their tokens are unknown)."""
    prompt_tokens: int = 0
    """Prompt tokens, summed over the answers that reported usage."""
    completion_tokens: int = 0
    """Completion tokens, summed likewise."""
    priced: int = 0
    """Answers priced: usage reported by a model with prices."""
    cost: float = Field(default=0.0, ge=0)
    """USD, summed over the priced answers."""

    @classmethod
    def of_row(cls, row: Sequence[Any] | None) -> TaskUsage:
        """The usage of a store's `SELECT {USAGE_COLUMNS}` row (all zero for a task without one)."""
        return cls() if row is None else cls(**dict(zip(USAGE_COLUMNS, row, strict=True)))

    @property
    def proxy_cost(self) -> float | None:
        """The task's cost as the proxy priced it; None when no answer of it was priced."""
        return self.cost if self.priced else None


Sums = list[float]
"""The values of `USAGE_COLUMNS`, in order (counts, and the cost)."""


def summed(records: Iterable[UsageRecord]) -> dict[str, Sums]:
    """Task key -> the answers' sums (`USAGE_COLUMNS`' values), tasks in first-seen order. Plain numbers,
    not `TaskUsage`s: this runs for every answer."""
    sums: dict[str, Sums] = {}
    for r in records:
        reported = r.prompt_tokens is not None and r.completion_tokens is not None
        add = (1, 0 if reported else 1, r.prompt_tokens or 0, r.completion_tokens or 0, r.cost is not None)
        have = sums.setdefault(r.task, [0, 0, 0, 0, 0, 0.0])
        for i, v in enumerate(add):
            have[i] += v
        have[5] += r.cost or 0.0
    return sums
