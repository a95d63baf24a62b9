"""Any-pool episodes: each task served with its own pool, drawn from a candidates table.

The tasks and their train/eval split are those of the reference oracle table (the env's `table_path`,
default the bundled one: `split.select_tasks`), so the any-pool eval split holds out exactly the tasks
the fixed-pool env holds out. Per task a pool is drawn (`pool_draw.draw_pool`, keyed by the task id):
- train tasks: from the candidates minus the held-out models, so training never shows a held-out model;
- eval tasks: pools holding at least one held-out model (from all candidates when none is held out).
The task's row under its pool comes from `router_oracle.derive` (the tie rule, the run aggregation); the
capability summary describes the drawn pool on the TRAIN split only (`capabilities.summarize`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from router_frontier_rl.capabilities import CapabilitySummary, summarize
from router_frontier_rl.pool_draw import draw_pool
from router_frontier_rl.split import SplitName, select_tasks, split_ids
from router_oracle.derive import CandidateIndex
from router_oracle.table import OracleTable, Pool, TaskRecord


@dataclass(frozen=True, slots=True)
class PoolEpisode:
    """One any-pool task: its pool, its row under that pool, and what the prompt says about the pool."""

    record: TaskRecord
    """The task's row under `pool` (outcomes of the pool's models, the oracle by the tie rule)."""
    pool: Pool
    """The drawn pool, in drawn order (the valid ids and the order the prompt lists them)."""
    summary: CapabilitySummary
    """The pool's record on the train split."""
    train_records: list[TaskRecord]
    """The pool's rows of the train split (what `summary` summarises; few-shot examples come from it)."""
    held_out: list[str]
    """The pool's held-out models (empty on train tasks)."""


@dataclass(frozen=True, slots=True)
class AnyPoolSpec:
    """How pools are drawn: the env's any-pool arguments."""

    pool_size: int
    """Models per pool."""
    pool_seed: int = 0
    """Seed of the draws."""
    held_out_models: tuple[str, ...] = ()
    """Candidate ids never drawn for train tasks; every eval pool holds at least one of them."""


def check_spec(index: CandidateIndex, spec: AnyPoolSpec) -> None:
    """Fail early, naming the candidates table, on ids or sizes no pool can satisfy."""
    unknown = [m for m in spec.held_out_models if m not in index.model_ids]
    if unknown:
        raise ValueError(f"{index.label}: held_out_models {unknown} are not candidate models")
    if len(set(spec.held_out_models)) != len(spec.held_out_models):
        raise ValueError(f"held_out_models lists a model twice: {list(spec.held_out_models)}")
    train_models = len(index.model_ids) - len(spec.held_out_models)
    if spec.pool_size < 1 or spec.pool_size > train_models:
        raise ValueError(
            f"{index.label}: pool_size {spec.pool_size} needs 1 to {train_models} models outside "
            f"held_out_models ({len(index.model_ids)} candidates, {len(spec.held_out_models)} held out)"
        )


def draw_task_pool(index: CandidateIndex, spec: AnyPoolSpec, task_id: str, *, train: bool) -> list[str]:
    """The pool of `task_id`: train tasks never see a held-out model, eval tasks always see one."""
    held = set(spec.held_out_models)
    if train:
        return draw_pool(
            [m for m in index.model_ids if m not in held], spec.pool_size, seed=spec.pool_seed, key=task_id
        )
    return draw_pool(index.model_ids, spec.pool_size, seed=spec.pool_seed, key=task_id, required_from=held)


def pool_view(
    index: CandidateIndex, model_ids: Sequence[str], train_ids: Sequence[str]
) -> tuple[Pool, list[TaskRecord], CapabilitySummary]:
    """A pool of candidate models, its rows of `train_ids` and its capability summary on them."""
    pool = index.pool(model_ids, name="drawn")
    train_records = index.records(pool, train_ids)
    return pool, train_records, summarize(train_records, pool)


def any_pool_episodes(
    index: CandidateIndex,
    table: OracleTable,
    spec: AnyPoolSpec,
    split: SplitName = "train",
    eval_fraction: float = 0.2,
    split_seed: int = 0,
    max_tasks: int | None = None,
) -> Iterator[PoolEpisode]:
    """The episodes of `split`, in the env's seeded task order (`max_tasks` keeps a prefix)."""
    check_spec(index, spec)
    parts = split_ids(table, eval_fraction, split_seed)
    known = set(index.task_ids)
    missing = [t for t in parts.train + parts.eval if t not in known]
    if missing:
        raise ValueError(
            f"{index.label}: the candidates table lacks {len(missing)} tasks of the split (e.g. {missing[0]})"
        )
    train_ids = set(parts.train)
    held = set(spec.held_out_models)
    for t in select_tasks(table, split, eval_fraction, split_seed, max_tasks=max_tasks):
        is_train = t.instance_id in train_ids
        ids = draw_task_pool(index, spec, t.instance_id, train=is_train)
        pool, train_records, summary = pool_view(index, ids, parts.train)
        yield PoolEpisode(
            record=index.records(pool, [t.instance_id])[0],
            pool=pool,
            summary=summary,
            train_records=train_records,
            held_out=[m for m in ids if m in held],
        )
