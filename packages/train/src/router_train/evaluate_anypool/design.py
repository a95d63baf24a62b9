"""Which models are held out together, and which pools each held-out group is judged on.

A held-out group is a set of candidate models the any-pool router never trains with: one family per
group (`provider`: every model of one maker; `base_model`: every effort of one model; `model`: one
model), or groups given explicitly. Holding out a whole family keeps near-twins (`claude-opus-4.5-high`
and `-medium`) from leaking the held-out model's behaviour into training.

Each group is judged on evaluation pools that hold at least one of its models: `n` pools drawn with the
env's rule for its eval pools (`pool_draw.draw_pool` with `required_from` = the group: at least one
held-out model, the rest from every candidate), plus every named pool (e.g. the bundled `default`) that
holds one of the group's models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from router_frontier_rl.pool_draw import draw_pool
from router_oracle.candidates import CandidateModel
from router_oracle.derive import CandidateIndex
from router_train.scoring.decisions import EvaluateError

HeldOutBy = Literal["provider", "base_model", "model"]
"""How models are grouped into held-out families."""

HeldOutDesign = Literal["provider", "base_model", "model", "explicit"]
"""A family rule, or `explicit`: groups given as lists of model ids."""

MAX_DRAW_ATTEMPTS = 50
"""Draw keys tried per requested pool before giving up on finding that many distinct pools."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HeldOutGroup(_Frozen):
    """Models held out of the any-pool router's training together."""

    name: str
    """The family (`anthropic`, `gpt-5.2`, a model id) or, for explicit groups, the ids joined by `+`."""
    models: list[str]
    """Its candidate model ids, sorted."""


class NamedPool(_Frozen):
    """A pool given by name (the bundled `default`, or `--pool NAME=ID,ID,...`)."""

    name: str
    """Its name in the report."""
    ids: list[str]
    """Its candidate model ids, in pool order."""


class EvalPool(_Frozen):
    """One pool a held-out group is judged on."""

    name: str
    """`<group>/drawn-<i>` for a drawn pool, the name of a named pool."""
    kind: Literal["drawn", "named"]
    """Drawn for the group (seeded), or named."""
    ids: list[str]
    """Model ids, in pool order."""
    held_out: list[str]
    """The pool's models the any-pool router never trained with (at least one)."""


def family(model: CandidateModel, by: HeldOutBy) -> str:
    """The family of a candidate model; a model without a provider is its own provider family."""
    if by == "provider":
        return model.provider or model.id
    if by == "base_model":
        return model.base_model
    return model.id


def held_out_groups(
    index: CandidateIndex, by: HeldOutBy, names: Sequence[str] | None = None
) -> list[HeldOutGroup]:
    """One group per family (sorted by name), or only the families `names` (in that order)."""
    members: dict[str, list[str]] = {}
    for m in index.candidates.models:
        members.setdefault(family(m, by), []).append(m.id)
    if names is None:
        chosen = sorted(members)
    else:
        unknown = [n for n in names if n not in members]
        if unknown:
            raise EvaluateError(
                f"{index.label}: no candidate model has {by} {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(members))})"
            )
        if len(set(names)) != len(names):
            raise EvaluateError(f"a held-out group is named twice: {list(names)}")
        chosen = list(names)
    return [HeldOutGroup(name=n, models=sorted(members[n])) for n in chosen]


def explicit_groups(index: CandidateIndex, groups: Sequence[Sequence[str]]) -> list[HeldOutGroup]:
    """Groups given as lists of model ids (checked against the candidates)."""
    out = []
    for ids in groups:
        if not ids:
            raise EvaluateError("an explicit held-out group is empty")
        pool = index.pool(ids)  # unknown or repeated ids: a CandidatesError naming the table
        out.append(HeldOutGroup(name="+".join(pool.ids), models=sorted(pool.ids)))
    names = [g.name for g in out]
    if len(set(names)) != len(names):
        raise EvaluateError(f"a held-out group is given twice: {names}")
    return out


def check_named_pools(index: CandidateIndex, pools: Sequence[NamedPool]) -> None:
    """Named pools must be distinct, of two or more known candidate models."""
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise EvaluateError(f"two named pools share a name: {names}")
    for p in pools:
        index.pool(p.ids)  # unknown or repeated ids
        if len(p.ids) < 2:
            raise EvaluateError(f"named pool {p.name!r} needs at least 2 models, got {p.ids}")


def evaluation_pools(
    index: CandidateIndex,
    group: HeldOutGroup,
    *,
    drawn: int,
    size: int,
    seed: int,
    named: Sequence[NamedPool] = (),
) -> list[EvalPool]:
    """The group's `drawn` seeded pools of `size` models, then the named pools holding one of its models.

    Drawn pools are distinct as sets, and distinct from the named pools; pool i is the draw keyed
    `<group>:<k>` for the smallest k not giving a pool already taken, so adding a group or a named pool
    never changes another group's pools."""
    ids = index.model_ids
    if not 2 <= size <= len(ids):
        raise EvaluateError(f"pool size must be 2 to {len(ids)} (the candidate models), got {size}")
    held = set(group.models)
    taken = {frozenset(p.ids) for p in named}
    out: list[EvalPool] = []
    k = 0
    while len(out) < drawn:
        if k >= MAX_DRAW_ATTEMPTS * drawn:
            raise EvaluateError(
                f"held-out group {group.name}: found only {len(out)} distinct pools of {size} holding one of "
                f"its models in {k} draws; ask for fewer pools (--pools)"
            )
        pool = draw_pool(ids, size, seed=seed, key=f"{group.name}:{k}", required_from=held)
        k += 1
        if frozenset(pool) in taken:
            continue
        taken.add(frozenset(pool))
        out.append(
            EvalPool(
                name=f"{group.name}/drawn-{len(out) + 1}",
                kind="drawn",
                ids=pool,
                held_out=[m for m in pool if m in held],
            )
        )
    for p in named:
        if held & set(p.ids):
            out.append(
                EvalPool(name=p.name, kind="named", ids=list(p.ids), held_out=[m for m in p.ids if m in held])
            )
    return out
