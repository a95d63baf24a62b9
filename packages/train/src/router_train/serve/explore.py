"""Exploration: which new tasks are served by a uniform draw over the pool, and the served model's propensity.

A task's draw is a function of the seed and its task key alone (two uniforms from sha256(seed, key)), not
of a random stream: it does not depend on the order tasks arrive in, on concurrency, or on restarts, and
a log can be checked against it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

_SCALE = float(1 << 64)


@dataclass(frozen=True)
class Served:
    """What a new task is served by."""

    model: str | None
    """The served pool model (None: the router gave no route and the task was not explored)."""
    explored: bool
    """True when `model` came from the exploration draw."""
    propensity: float | None
    """The probability the serving policy gave `model` (None with no model)."""


def _uniforms(seed: int, task: str) -> tuple[float, float]:
    digest = hashlib.sha256(f"router-train-explore:{seed}:{task}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE, int.from_bytes(digest[8:16], "big") / _SCALE


def propensity(
    model: str, router_model: str | None, rate: float, pool_size: int, pick_propensity: float = 1.0
) -> float:
    """P(serving policy serves `model`): (1 - rate) x [model is the router's pick] x the pick's own
    probability (1 for a deterministic router; the learned floor's share) + rate / pool size."""
    return (1.0 - rate) * (model == router_model) * pick_propensity + rate / pool_size


def serve_choice(
    task: str,
    router_model: str | None,
    pool: list[str],
    rate: float,
    seed: int,
    pick_propensity: float = 1.0,
) -> Served:
    """The model a new task is served by: with probability `rate` a uniform draw over `pool` (it may be
    the router's pick), else the router's pick (`router_model`, None when it gave no route), which a
    stochastic policy (the learned floor) gave with probability `pick_propensity`."""
    explore_u, pick_u = _uniforms(seed, task)
    if rate > 0 and explore_u < rate:
        model = pool[min(int(pick_u * len(pool)), len(pool) - 1)]
        return Served(model, True, propensity(model, router_model, rate, len(pool), pick_propensity))
    if router_model is None:
        return Served(None, False, None)
    chance = propensity(router_model, router_model, rate, len(pool), pick_propensity)
    return Served(router_model, False, chance)
