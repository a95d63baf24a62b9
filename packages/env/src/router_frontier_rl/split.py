"""The deterministic held-out split of a table's tasks, and which tasks a taskset serves.

Tasks are grouped by oracle label and ordered inside each group by a seeded hash of their id, so the
split depends only on (task ids, labels, fraction, seed): never on table order or on other labels.
A label with two or more tasks lands in both splits; a label with one task stays in train.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from router_oracle.table import OracleTable, TaskRecord

SplitName = Literal["train", "eval", "all"]


class Split(BaseModel):
    """A partition of a table's task ids."""

    model_config = ConfigDict(frozen=True)

    train: list[str]
    """Ids the router may learn from (and the capability summary is computed from)."""
    eval: list[str]
    """Held-out ids, never shown in prompts as examples or summarised."""


def _order(key: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def seeded_order(ids: Iterable[str], seed: int) -> list[str]:
    """`ids` sorted by a seeded hash: a shuffle that depends only on the ids and the seed."""
    return sorted(ids, key=lambda i: _order(i, seed))


def split_ids(table: OracleTable, eval_fraction: float = 0.2, seed: int = 0) -> Split:
    """Stratified split: in each oracle-label group, `round(n * eval_fraction)` tasks (at least
    one and at most n - 1 when n >= 2) are held out. Both lists are in seeded-hash order."""
    if not 0 < eval_fraction < 1:
        raise ValueError(f"eval_fraction must lie strictly between 0 and 1, got {eval_fraction}")
    by_label: dict[str, list[str]] = defaultdict(list)
    for t in table.tasks:
        by_label[t.oracle].append(t.instance_id)
    train: list[str] = []
    held: list[str] = []
    for ids in by_label.values():
        ordered = seeded_order(ids, seed)
        n_eval = 0 if len(ids) < 2 else min(max(round(len(ids) * eval_fraction), 1), len(ids) - 1)
        held += ordered[:n_eval]
        train += ordered[n_eval:]
    return Split(train=seeded_order(train, seed), eval=seeded_order(held, seed))


def stratified_folds(tasks: Iterable[TaskRecord], k: int, seed: int = 0) -> list[list[str]]:
    """K folds of the tasks' ids for cross-validation, stratified by oracle label.

    Labels in sorted order, each label's ids in seeded-hash order, are dealt round-robin into the folds,
    so each label is spread evenly and fold sizes differ by at most one. Like `split_ids`, the folds
    depend only on (task ids, labels, k, seed). Each fold's ids are sorted.
    """
    by_label: dict[str, list[str]] = defaultdict(list)
    for t in tasks:
        by_label[t.oracle].append(t.instance_id)
    n = sum(len(ids) for ids in by_label.values())
    if not 2 <= k <= n:
        raise ValueError(f"cross-validation needs 2 <= folds <= tasks ({n}), got {k} folds")
    ordered = [i for label in sorted(by_label) for i in seeded_order(by_label[label], seed)]
    return [sorted(ordered[f::k]) for f in range(k)]


def upsampled(tasks: list[TaskRecord], seed: int = 0) -> list[TaskRecord]:
    """Every oracle label repeated (whole copies first, then a seeded-hash prefix) up to the count of
    the most common label, in a seeded-hash order of (id, copy)."""
    by_label: dict[str, list[TaskRecord]] = defaultdict(list)
    for t in tasks:
        by_label[t.oracle].append(t)
    target = max((len(g) for g in by_label.values()), default=0)
    keyed: list[tuple[str, TaskRecord]] = []
    for group in by_label.values():
        group = sorted(group, key=lambda t: _order(t.instance_id, seed))
        for k in range(target):
            t = group[k % len(group)]
            keyed.append((_order(f"{t.instance_id}#{k // len(group)}", seed), t))
    return [t for _, t in sorted(keyed, key=lambda kt: kt[0])]


def check_upsample(split: SplitName, upsample: bool) -> None:
    """`upsample` balances the train split only: an eval split must keep the true label mix."""
    if upsample and split != "train":
        raise ValueError(f"upsample balances the train split only; got split={split!r}")


def select_tasks(
    table: OracleTable,
    split: SplitName = "train",
    eval_fraction: float = 0.2,
    split_seed: int = 0,
    upsample: bool = False,
    max_tasks: int | None = None,
) -> list[TaskRecord]:
    """The tasks a taskset serves, in a deterministic seeded order; `max_tasks` keeps a prefix.

    `upsample` balances oracle labels and applies to the train split only (`check_upsample`)."""
    check_upsample(split, upsample)
    if max_tasks is not None and max_tasks < 1:
        raise ValueError(f"max_tasks must be at least 1, got {max_tasks}")
    by_id = {t.instance_id: t for t in table.tasks}
    if split == "all":
        ids = seeded_order(by_id, split_seed)
    else:
        ids = getattr(split_ids(table, eval_fraction, split_seed), split)
    tasks = [by_id[i] for i in ids]
    if upsample:
        tasks = upsampled(tasks, split_seed)
    return tasks[:max_tasks]
