"""Which candidate models form a task's pool in any-pool mode: a seeded, hash-ordered draw.

A draw depends only on (candidate ids, size, seed, key, required ids): each candidate is ranked by the
sha256 of `seed:key:model id`, like the split ranks task ids, so the same arguments give the same pool on
every machine and Python version, and adding a candidate never reorders the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence


def _rank(seed: int, key: str, model_id: str) -> str:
    return hashlib.sha256(f"{seed}:{key}:{model_id}".encode()).hexdigest()


def draw_pool(
    candidates: Sequence[str], size: int, *, seed: int, key: str, required_from: Collection[str] = ()
) -> list[str]:
    """`size` distinct ids of `candidates`, in drawn order (the order the prompt lists them).

    With `required_from` non-empty, the pool holds at least one of those ids (the best-ranked of them,
    plus `size - 1` drawn from all other candidates), listed in drawn order like any pool, so a required
    model's position says nothing. `key` is what varies the pool (e.g. the task id)."""
    if size < 1:
        raise ValueError(f"a pool needs at least one model, got size {size}")
    if len(set(candidates)) != len(candidates):
        raise ValueError("candidate ids must be unique")
    if size > len(candidates):
        raise ValueError(f"cannot draw {size} models from {len(candidates)} candidates")
    ranked = sorted(candidates, key=lambda m: _rank(seed, key, m))
    if not required_from:
        return ranked[:size]
    required = [m for m in ranked if m in required_from]
    if not required:
        raise ValueError(f"none of the required models {sorted(required_from)} is a candidate")
    chosen = {required[0], *[m for m in ranked if m != required[0]][: size - 1]}
    return [m for m in ranked if m in chosen]
