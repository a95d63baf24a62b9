"""Which tasks each learned router is fitted on and which it routes: the env's split, or K folds.

A `Partition` is one fit: train tasks in, routes for the test tasks out. The env's held-out split is one
partition; K-fold cross-validation over every task is K partitions per fold seed, so that each task is
routed once per fold seed by routers that never saw it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from router_frontier_rl.split import SplitName, select_tasks, stratified_folds
from router_oracle.table import OracleTable, TaskRecord
from router_train.scoring.decisions import EvaluateError


@dataclass(frozen=True)
class Partition:
    """One fit of every learned router."""

    repeat: int
    """Index of the fold seed (0 in split mode): the decisions of one repeat cover each task once."""
    label: str
    """For progress and errors, e.g. `fold seed 3, fold 2/5`."""
    train: list[TaskRecord]
    """Tasks the routers are fitted on (sorted by id)."""
    test: list[TaskRecord]
    """Tasks the fitted routers route (sorted by id); never in `train` unless `in_sample`."""
    in_sample: bool = False
    """True only for the env's train or all split, which overlap its train split on purpose."""


def _by_id(tasks: Sequence[TaskRecord]) -> list[TaskRecord]:
    return sorted(tasks, key=lambda t: t.instance_id)


def split_partition(
    table: OracleTable, origin: str, split: SplitName, eval_fraction: float, split_seed: int
) -> tuple[list[TaskRecord], Partition]:
    """The evaluated tasks of the env's `split`, and the one fit on its train split.

    With `split` train or all, the test tasks overlap the train tasks: the caller marks learned rows
    in-sample."""
    try:
        tasks = select_tasks(table, split, eval_fraction=eval_fraction, split_seed=split_seed)
        train = select_tasks(table, "train", eval_fraction=eval_fraction, split_seed=split_seed)
    except ValueError as exc:
        raise EvaluateError(f"{origin}: cannot split the table: {exc}") from exc
    if not tasks:
        raise EvaluateError(f"split {split!r} of {origin} has no tasks")
    return _by_id(tasks), Partition(0, f"split {split}", _by_id(train), _by_id(tasks), split != "eval")


def fold_partitions(
    table: OracleTable, origin: str, folds: int, fold_seeds: Sequence[int]
) -> list[Partition]:
    """K folds per fold seed over every task of the table, stratified by oracle label."""
    if not fold_seeds:
        raise EvaluateError("cross-validation needs at least one fold seed")
    if len(set(fold_seeds)) != len(fold_seeds):
        raise EvaluateError(f"fold seeds repeat: {list(fold_seeds)}")
    by_id = {t.instance_id: t for t in table.tasks}
    out = []
    for r, seed in enumerate(fold_seeds):
        try:
            parts = stratified_folds(table.tasks, folds, seed)
        except ValueError as exc:
            raise EvaluateError(f"{origin}: {exc}") from exc
        for f, test_ids in enumerate(parts):
            held = set(test_ids)
            train = [by_id[i] for i in sorted(by_id) if i not in held]
            out.append(
                Partition(r, f"fold seed {seed}, fold {f + 1}/{folds}", train, [by_id[i] for i in test_ids])
            )
    return out
