"""The verifiers v1 taskset: one single-turn routing task per oracle-table row."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Self

import verifiers.v1 as vf
from pydantic import Field, field_validator, model_validator
from verifiers.v1.harnesses.null import NullHarness

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.capabilities import summarize
from router_frontier_rl.prompt import messages, system_prompt
from router_frontier_rl.rewards import (
    DEFAULT_WEIGHTS,
    REWARD_NAMES,
    RouteScores,
    check_weights,
    score_completion,
)
from router_frontier_rl.split import SplitName, check_upsample, select_tasks
from router_oracle.table import OracleTable, TaskRecord, load_table


class RouteData(vf.TaskData):
    """One routing task: the prompt plus the table row it is scored against (never shown to the model)."""

    record: TaskRecord
    """The task's oracle-table row: outcomes per model and the oracle pick."""
    valid_ids: list[str]
    """The pool's model ids, the only routes the parser accepts."""
    repeat: int = 0
    """0 for a task's first occurrence; 1, 2, ... for the copies `upsample` adds."""


class RouteTask(vf.Task[RouteData]):
    """Scores the reply against the table row; each signal comes from `rewards.score_completion`."""

    @property
    def key(self) -> str:
        # The durable SWE-bench id, so traces of different runs line up task by task.
        d = self.data
        return d.record.instance_id if d.repeat == 0 else f"{d.record.instance_id}#{d.repeat}"

    def scores(self, trace: vf.Trace) -> RouteScores:
        return score_completion(self.data.record, trace.last_reply, self.data.valid_ids)

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=DEFAULT_WEIGHTS[0])
    async def routed_reward(self, trace: vf.Trace) -> float:
        return self.scores(trace).routed_reward

    @vf.reward(weight=DEFAULT_WEIGHTS[1])
    async def chose_oracle(self, trace: vf.Trace) -> float:
        return self.scores(trace).chose_oracle

    @vf.reward(weight=DEFAULT_WEIGHTS[2])
    async def parsed_valid_route(self, trace: vf.Trace) -> float:
        return self.scores(trace).parsed_valid_route

    @vf.reward(weight=DEFAULT_WEIGHTS[3])
    async def resolved_if_chosen(self, trace: vf.Trace) -> float:
        return self.scores(trace).resolved_if_chosen

    @vf.reward(weight=DEFAULT_WEIGHTS[4])
    async def cost_if_chosen(self, trace: vf.Trace) -> float:
        return self.scores(trace).cost_if_chosen


class RouterConfig(vf.TasksetConfig):
    """Environment arguments (`--env.taskset.<field>`, or `[env.taskset]` in a TOML config)."""

    table_path: Path | None = None
    """Oracle table to serve (a `router-oracle build` output); unset: the bundled default-pool table."""
    weights: list[float] = Field(default_factory=lambda: list(DEFAULT_WEIGHTS))
    """Reward weights for [routed_reward, chose_oracle, parsed_valid_route, resolved_if_chosen,
    cost_if_chosen]; all five are recorded on every trace whatever their weight."""
    split: SplitName = "train"
    """Which tasks to serve: `train`, the held-out `eval`, or `all`."""
    eval_fraction: float = Field(default=0.2, gt=0, lt=1)
    """Fraction of each oracle label's tasks held out for `eval`."""
    split_seed: int = 0
    """Seed of the split and of the task order."""
    upsample: bool = False
    """Repeat train tasks of rare oracle labels until every label is as common as the most common
    (train split only)."""
    few_shot: int = Field(default=0, ge=0)
    """Solved train-split examples shown before the task (each a user turn and its oracle route)."""
    max_tasks: int | None = Field(default=None, ge=1)
    """Serve only the first this many tasks of the (seeded) order."""

    @field_validator("table_path")
    @classmethod
    def _table_loads(cls, path: Path | None) -> Path | None:
        # Checked here, not at load(): a config naming a missing or inconsistent table is refused with
        # one line naming the file (vf-eval prints it as a config error, not a traceback). ~40 ms.
        if path is not None:
            load_table(path)
        return path

    @model_validator(mode="after")
    def _apply_weights(self) -> Self:
        check_weights(self.weights)
        check_upsample(self.split, self.upsample)
        # Weights travel inside the task config, which is what verifiers hands to every task, including
        # tasks rebuilt from wire data in a server worker. `weights` is their one source: it overrides
        # any `task.rewards.<name>.weight` (e.g. one saved in a resolved config that is re-run).
        for name, weight in zip(REWARD_NAMES, self.weights, strict=True):
            spec = self.task.rewards.get(name) or vf.RewardFunctionConfig()
            self.task.rewards[name] = spec.model_copy(update={"weight": weight})
        return self


def _examples(train: Sequence[TaskRecord], k: int) -> Callable[[TaskRecord], list[TaskRecord]]:
    """Few-shot picker: k train tasks cycling over oracle labels (so no single answer dominates),
    starting at a label chosen by the task's hash, never the task itself."""
    by_label: dict[str, list[TaskRecord]] = defaultdict(list)
    for t in train:
        by_label[t.oracle].append(t)
    labels = sorted(by_label)

    def pick(task: TaskRecord) -> list[TaskRecord]:
        if k == 0:
            return []
        start = int(hashlib.sha256(task.instance_id.encode()).hexdigest(), 16)
        queues = {lab: [t for t in by_label[lab] if t.instance_id != task.instance_id] for lab in labels}
        chosen: list[TaskRecord] = []
        for j in range(k * len(labels)):
            queue = queues[labels[(start + j) % len(labels)]]
            if j // len(labels) < len(queue):
                chosen.append(queue[j // len(labels)])
            if len(chosen) == k:
                break
        return chosen

    return pick


class RouterHarness(NullHarness):
    """The default harness: one plain chat turn, no tools (a router needs no shell)."""


class RouterTaskset(vf.Taskset[RouteTask, RouterConfig]):
    """Route each SWE-bench Verified task to the pool model the oracle table picks for it."""

    def table(self) -> OracleTable:
        return load_table(self.config.table_path or bundled_table_path())

    def load(self) -> Iterator[RouteTask]:
        cfg = self.config
        table = self.table()
        valid_ids = table.pool.ids
        train = select_tasks(table, "train", cfg.eval_fraction, cfg.split_seed)
        system = system_prompt(summarize(train, table.pool))
        examples = _examples(train, cfg.few_shot)
        seen: Counter[str] = Counter()
        for t in select_tasks(
            table, cfg.split, cfg.eval_fraction, cfg.split_seed, cfg.upsample, cfg.max_tasks
        ):
            data = RouteData(
                id=t.instance_id,
                prompt=messages(t, examples(t)),
                system_prompt=system,
                record=t,
                valid_ids=valid_ids,
                repeat=seen[t.instance_id],
            )
            seen[t.instance_id] += 1
            yield RouteTask(data, cfg.task)
