"""The oracle rule — its one definition. Everything that needs a pick imports it from here.

Per task, among the pool's models:
1. highest performance (resolve rate over the model's runs) wins;
2. among models tied on performance, the cheapest wins (tie cost: the task's measured mean cost, or
   the pool's per-model `price`, per `OracleRule.tie_cost`) — also when every model failed;
3. if the cost ties too, the lexicographically smallest model id wins, so pool order never matters.
Comparisons are exact (no epsilon): equal rational resolve rates are equal floats, and a tie in
cost means equal numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from router_oracle.infra.errors import OracleInputError
from router_oracle.table import ModelOutcome, OracleRule, Pool


@dataclass(frozen=True, slots=True)
class Candidate:
    """One model's numbers on one task, as the rule sees them."""

    id: str
    """Pool model id."""
    resolve_rate: float
    """Performance on the task, in [0, 1]."""
    cost: float
    """The cost that breaks performance ties (measured or price), >= 0."""


@dataclass(frozen=True, slots=True)
class OraclePick:
    """The rule's verdict for one task."""

    oracle: str
    """The picked model id."""
    best: list[str]
    """Ids sharing the best resolve rate, sorted by id (more than one: a tie on performance)."""
    id_tiebreak: bool
    """True when performance and cost both tied, so the smallest id decided."""
    all_failed: bool
    """True when every candidate's resolve rate is 0 (then the cheapest wins, as in any tie)."""


def pick_oracle(candidates: Iterable[Candidate]) -> OraclePick:
    """Apply the rule to one task's candidates (any order; ids unique)."""
    cands = list(candidates)
    if not cands:
        raise ValueError("no candidates")
    if len({c.id for c in cands}) != len(cands):
        raise ValueError(f"duplicate candidate ids: {[c.id for c in cands]}")
    for c in cands:
        if not (math.isfinite(c.resolve_rate) and math.isfinite(c.cost)):
            raise ValueError(f"candidate {c.id!r} has a non-finite number: {c}")
    top = max(c.resolve_rate for c in cands)
    tied = [c for c in cands if c.resolve_rate == top]
    cheapest = min(c.cost for c in tied)
    winners = sorted(c.id for c in tied if c.cost == cheapest)
    return OraclePick(
        oracle=winners[0],
        best=sorted(c.id for c in tied),
        id_tiebreak=len(winners) > 1,
        all_failed=all(c.resolve_rate == 0 for c in cands),
    )


def tie_costs(pool: Pool, rule: OracleRule, per_model: Mapping[str, ModelOutcome]) -> dict[str, float]:
    """The cost each model brings to a tie on this task, per the rule's `tie_cost` option."""
    if rule.tie_cost == "measured":
        return {m.id: per_model[m.id].cost for m in pool.models}
    missing = [m.id for m in pool.models if m.price is None]
    if missing:
        raise OracleInputError(
            f"pool {pool.name!r}: tie_cost=price needs a `price` for every model; missing: {missing}"
        )
    return {m.id: float(m.price) for m in pool.models if m.price is not None}


def pick_for_task(pool: Pool, rule: OracleRule, per_model: Mapping[str, ModelOutcome]) -> OraclePick:
    """The oracle pick for one task's per-model outcomes (what tables store and stats re-check)."""
    costs = tie_costs(pool, rule, per_model)
    return pick_oracle(Candidate(m.id, per_model[m.id].resolve_rate, costs[m.id]) for m in pool.models)
