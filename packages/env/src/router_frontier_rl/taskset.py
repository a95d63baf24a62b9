"""The verifiers v1 taskset: one routing task per oracle-table row.

Single turn by default; with `repo_access` each task is an agentic episode in which the router may read
the task's repository, read-only, before it answers (see `repo_access` and `repo_checkout`).
"""

from __future__ import annotations

import hashlib
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Self

import verifiers.v1 as vf
from pydantic import Field, field_validator, model_validator
from verifiers.v1.clients import ModelContext
from verifiers.v1.harnesses.bash import BashHarness, BashHarnessConfig
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.runtimes import ProgramResult

from router_frontier_rl.any_pool import AnyPoolSpec, any_pool_episodes, check_spec
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.capabilities import summarize
from router_frontier_rl.prompt import agentic_system_prompt, messages, system_prompt
from router_frontier_rl.repo_access import (
    AGENT_TIMEOUT_S,
    BARE_SUBPROCESS_WARNING,
    DEFAULT_TURN_BUDGET,
    UNSANDBOXED_REFUSAL,
    RepoAccess,
    RepoAccessError,
    check_harness,
    tool_calls,
)
from router_frontier_rl.repo_checkout import base_commits, check_out, find_checkout
from router_frontier_rl.rewards import (
    DEFAULT_WEIGHTS,
    MAX_WEIGHT,
    REWARD_NAMES,
    RouteScores,
    check_weights,
    score_completion,
)
from router_frontier_rl.sandbox import SandboxError, check_bwrap_works, sandboxed_path
from router_frontier_rl.split import SplitName, check_upsample, select_tasks
from router_frontier_rl.swebench_image import WORKDIR, swebench_image
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.infra.numeric_option import MAX_COUNT, Seed
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table


class RouteData(vf.TaskData):
    """One routing task: the prompt plus the table row it is scored against (never shown to the model)."""

    record: TaskRecord
    """The task's oracle-table row: outcomes per model and the oracle pick."""
    valid_ids: list[str]
    """The pool's model ids, the only routes the parser accepts."""
    repeat: int = 0
    """0 for a task's first occurrence; 1, 2, ... for the copies `upsample` adds."""
    split: SplitName | None = None
    """The split that served the task (`router-train evaluate` refuses traces of `train` tasks)."""
    repo_access: RepoAccess | None = None
    """Agentic episode settings (the `repo_access` env argument); None: a single-turn task. (None
    fields are left out of traces, so single-turn traces are what they were before this field.)"""


class RouteTask(vf.Task[RouteData]):
    """Scores the reply against the table row; each signal comes from `rewards.score_completion`."""

    @property
    def key(self) -> str:
        # The durable SWE-bench id, so traces of different runs line up task by task.
        d = self.data
        return d.record.instance_id if d.repeat == 0 else f"{d.record.instance_id}#{d.repeat}"

    def scores(self, trace: vf.Trace) -> RouteScores:
        return score_completion(self.data.record, trace.last_reply, self.data.valid_ids)

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        """Agentic tasks: check the harness and runtime, and on the subprocess runtime put a fresh copy
        of the repository at the task's commit in the rollout's working directory. In a container
        the task's SWE-bench image already holds it (at `workdir`), and nothing is shipped in."""
        access = self.data.repo_access
        if access is None:
            return
        check_harness(trace.agent.config.harness if trace.agent else None, RouterHarness)
        local = runtime.type == "subprocess"
        if local and not access.unsandboxed:
            raise RepoAccessError(UNSANDBOXED_REFUSAL)
        if local and not access.bare_subprocess:
            harness = trace.agent.config.harness if trace.agent else None
            if harness is not None and harness.id == "bash":
                # verifiers' own bash harness would run the agent's commands unconfined: only the
                # package's harness puts them under bubblewrap (RouterHarness.launch).
                raise RepoAccessError(
                    "on the subprocess runtime the agent's commands run under bubblewrap through the "
                    "package's default harness: leave --env.agent.harness.id unset (not bash)"
                )
            try:
                check_bwrap_works()
            except SandboxError as exc:
                raise RepoAccessError(str(exc)) from exc
        if access.repos_dir is None:
            return
        if not local:
            raise RepoAccessError(
                f"repos_dir is for the subprocess runtime, not {runtime.type!r}: unset it, and each task "
                "runs in its SWE-bench image"
            )
        record = self.data.record
        source = find_checkout(Path(access.repos_dir), record.instance_id, record.repo, access.base_commit)
        await check_out(runtime, record.instance_id, source)

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return self.data.repo_access is None and trace.num_turns >= 1

    @vf.stop
    async def turn_budget(self, trace: vf.Trace) -> bool:
        # Checked before each model call: after the budget's last turn no further call is made, and
        # the episode is scored on that turn's reply (no route in it: -1).
        access = self.data.repo_access
        return access is not None and trace.num_turns >= access.turn_budget

    @vf.metric
    async def exploration(self, trace: vf.Trace) -> dict[str, float]:
        """Agentic tasks: `tool_calls` and `turns` used (a single-turn trace records neither)."""
        if self.data.repo_access is None:
            return {}
        return {"tool_calls": float(tool_calls(trace)), "turns": float(trace.num_turns)}

    @vf.reward(weight=0.0)
    async def exploration_cost(self, trace: vf.Trace) -> dict[str, float]:
        """Agentic tasks: minus the tool calls made, weighted by the `exploration_cost` env argument."""
        if self.data.repo_access is None:
            return {}
        return {"exploration_cost": float(-tool_calls(trace))}

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
    eval_fraction: float = Field(default=0.2, gt=0, lt=1, allow_inf_nan=False)
    """Fraction of each oracle label's tasks held out for `eval`, in (0, 1)."""
    split_seed: Seed = 0
    """Seed of the split and of the task order (0 to 2**32 - 1)."""
    upsample: bool = False
    """Repeat train tasks of rare oracle labels until every label is as common as the most common
    (train split only)."""
    few_shot: int = Field(default=0, ge=0, le=MAX_COUNT)
    """Solved train-split examples shown before the task (each a user turn and its oracle route)."""
    max_tasks: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    """Serve only the first this many tasks of the (seeded) order."""
    repo_access: bool = False
    """Agentic routing: before it routes, the agent may read the task's repository (read-only, with
    verifiers' bash harness, edit tool off; network blocked in containers). Off: one chat turn on the
    issue text."""
    turn_budget: int = Field(default=DEFAULT_TURN_BUDGET, ge=1, le=MAX_COUNT)
    """repo_access: model turns per episode, the final answer included; running out of turns without
    a route scores as no valid route (-1)."""
    exploration_cost: float = Field(default=0.0, ge=0, le=MAX_WEIGHT, allow_inf_nan=False)
    """repo_access: reward taken off per tool call (the weight of the `exploration_cost` signal,
    which is minus the episode's tool calls)."""
    repos_dir: Path | None = None
    """repo_access on the subprocess runtime: a directory with a checkout per task
    (`<dir>/<instance_id>/`) or a clone per repository (`<dir>/<owner>__<name>/`, checked out at the
    task's base_commit per rollout). Unset: each task names its SWE-bench image (container runtimes)."""
    tasks_path: Path | None = None
    """repos_dir: the SWE-bench task file (JSONL, optionally gzipped, with `instance_id`, `repo`,
    `base_commit`) giving each task's base_commit; unset: the bundled SWE-bench Verified file."""
    allow_unsandboxed: bool = False
    """repos_dir: accept that the agent runs on this machine (the subprocess runtime). Each of its shell
    commands runs under bubblewrap: the repository read-only, no network, a cleared environment, a
    private /tmp, no host files beyond the system's programs (docs/security.md); `bwrap` must be
    installed."""
    unsafe_bare_subprocess: bool = False
    """repos_dir, with allow_unsandboxed: drop the bubblewrap sandbox and run the agent's commands as
    bare host processes, which can read everything here, the oracle table included (debugging the
    harness only; the training presets have no such field)."""

    @model_validator(mode="after")
    def _check_repo_access(self) -> Self:
        if not self.repo_access:
            defaults = type(self).model_fields
            changed = [n for n in _AGENTIC_ARGS if getattr(self, n) != defaults[n].default]
            if changed:
                raise ValueError(f"{', '.join(changed)}: only with repo_access = true")
            return self
        if self.repos_dir is None:
            if self.tasks_path is not None or self.allow_unsandboxed or self.unsafe_bare_subprocess:
                raise ValueError("tasks_path and allow_unsandboxed only apply with repos_dir")
        else:
            if not self.allow_unsandboxed:
                raise ValueError(UNSANDBOXED_REFUSAL)
            if not self.repos_dir.is_dir():
                raise ValueError(f"repos_dir {self.repos_dir}: not a directory")
            if self.unsafe_bare_subprocess:
                warnings.warn(BARE_SUBPROCESS_WARNING, stacklevel=2)
            else:
                try:  # no bwrap, or a kernel refusing its namespaces: one config error, before any episode
                    check_bwrap_works()
                except SandboxError as exc:
                    raise ValueError(str(exc)) from exc
        # Only agentic configs carry this weight, so single-turn configs stay exactly as they were.
        spec = self.task.rewards.get("exploration_cost") or vf.RewardFunctionConfig()
        self.task.rewards["exploration_cost"] = spec.model_copy(update={"weight": self.exploration_cost})
        return self

    # Any-pool mode (all unset: the fixed pool of `table_path`, exactly as before). See `any_pool.py`.
    pool_size: int | None = Field(default=None, ge=2)
    """Serve each task with its own pool of this many models, drawn from the candidates table; the
    tasks and their split stay those of `table_path`. Unset: the table's fixed pool."""
    candidates_path: Path | None = None
    """Candidates table the pools are drawn from (a `router-oracle candidates` output); unset: the
    bundled one (38 models of the leaderboard). Needs `pool_size`."""
    pool_seed: int = 0
    """Seed of the per-task pool draws. Needs `pool_size`."""
    held_out_models: list[str] = Field(default_factory=list)
    """Candidate model ids never drawn for train tasks; every eval-split pool holds at least one of
    them (their capability summary, like every model's, comes from the train split). Needs `pool_size`."""

    @field_validator("table_path")
    @classmethod
    def _table_loads(cls, path: Path | None) -> Path | None:
        # Checked here, not at load(): a config naming a missing or inconsistent table is refused with
        # one line naming the file (vf-eval prints it as a config error, not a traceback). ~40 ms.
        if path is not None:
            load_table(path)
        return path

    @field_validator("tasks_path")
    @classmethod
    def _tasks_load(cls, path: Path | None) -> Path | None:
        # Read at config time like table_path: a missing or damaged (e.g. corrupt .gz) file is one
        # config error naming the argument and the file, not a traceback at load().
        if path is not None:
            base_commits(path)
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

    @model_validator(mode="after")
    def _any_pool_args(self) -> Self:
        if self.pool_size is None:
            given = [
                name
                for name, value in (
                    ("candidates_path", self.candidates_path),
                    ("pool_seed", self.pool_seed),
                    ("held_out_models", self.held_out_models),
                )
                if value
            ]
            if given:
                raise ValueError(f"{', '.join(given)} only apply with pool_size (any-pool mode)")
        elif self.upsample:
            # Labels depend on each task's drawn pool, so there is no fixed label mix to balance.
            raise ValueError("upsample does not apply with pool_size: oracle labels vary with the pool")
        elif self.repo_access:
            raise ValueError("repo_access and pool_size are not combined yet: use one or the other")
        else:
            # The candidates table and what no pool can satisfy (pool_size larger than the candidates,
            # unknown held_out_models) are config errors naming the argument, not errors at load().
            try:
                index = CandidateIndex.load(str(self.candidates_path or BUNDLED_CANDIDATES))
            except ValueError as exc:  # CandidatesError: the file, one line
                raise ValueError(f"candidates_path: {exc}") from None
            check_spec(index, AnyPoolSpec(self.pool_size, self.pool_seed, tuple(self.held_out_models)))
        return self


_AGENTIC_ARGS = (
    "turn_budget",
    "exploration_cost",
    "repos_dir",
    "tasks_path",
    "allow_unsandboxed",
    "unsafe_bare_subprocess",
)
"""RouterConfig fields that only mean something with `repo_access`."""


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
    """The default harness: one plain chat turn, no tools (a router needs no shell). On a
    `repo_access` task it runs verifiers' bash harness with the edit tool off instead. (It keeps the null
    harness's `EXECUTES_CODE = False`, so verifiers does not warn about the subprocess runtime: an agentic
    task refuses that runtime itself unless the user set `allow_unsandboxed`.)"""

    def bash(self) -> BashHarness:
        """Verifiers' bash harness with this harness's settings and no edit tool."""
        return BashHarness(
            BashHarnessConfig.model_validate({**self.config.model_dump(), "id": "bash", "edit": False})
        )

    async def launch(
        self,
        ctx: ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        access: RepoAccess | None = getattr(data, "repo_access", None)
        if access is None:
            args = (ctx, trace, runtime, endpoint, secret, mcp_urls, data)
            return await super().launch(*args, tool_interception_url=tool_interception_url)
        bash = self.bash()
        if runtime.type != "subprocess" or access.bare_subprocess:
            args = (ctx, trace, runtime, endpoint, secret, mcp_urls, data)
            return await bash.launch(*args, tool_interception_url=tool_interception_url)
        workdir = getattr(runtime, "workdir", None)
        if workdir is None:  # never run the agent's commands unconfined for want of a directory
            raise RepoAccessError("the subprocess runtime has no working directory to confine the agent to")
        # Local mode: the chat program finds `bash` on PATH for every command the model runs; the first
        # `bash` on this PATH runs it under bubblewrap (see `sandbox`). A harness env that sets PATH
        # would bypass that, so it is refused.
        if "PATH" in bash.config.resolved_env:
            raise RepoAccessError(
                "repo_access on the subprocess runtime sets the agent's PATH itself: unset "
                "PATH in the harness env"
            )
        with sandboxed_path(Path(workdir)) as path:
            view = runtime.with_env({**runtime.env, "PATH": path})
            args = (ctx, trace, view, endpoint, secret, mcp_urls, data)
            return await bash.launch(*args, tool_interception_url=tool_interception_url)


class RouterTaskset(vf.Taskset[RouteTask, RouterConfig]):
    """Route each SWE-bench Verified task to the pool model the oracle table picks for it."""

    def table(self) -> OracleTable:
        return load_table(self.config.table_path or bundled_table_path())

    def _agentic_fields(self) -> Callable[[TaskRecord], dict[str, object]]:
        """Per task, the RouteData fields of the configured mode (none for single-turn tasks)."""
        cfg = self.config
        if not cfg.repo_access:
            return lambda t: {}
        if cfg.repos_dir is None:
            # Container runtimes: the task's SWE-bench image, its /testbed, and no network for the agent
            # (`[]` allows only verifiers' own routes: the model endpoint).
            def container(t: TaskRecord) -> dict[str, object]:
                return {
                    "repo_access": RepoAccess(turn_budget=cfg.turn_budget),
                    "image": swebench_image(t.instance_id),
                    "workdir": WORKDIR,
                    "network_allow": [],
                    "timeout": vf.TaskTimeout(agent=AGENT_TIMEOUT_S),
                }

            return container
        # The subprocess runtime rejects tasks that name an image or a network policy: local tasks
        # carry where their copy comes from instead.
        commits = base_commits(cfg.tasks_path)
        repos_dir = str(cfg.repos_dir.resolve())

        def local(t: TaskRecord) -> dict[str, object]:
            access = RepoAccess(
                turn_budget=cfg.turn_budget,
                repos_dir=repos_dir,
                base_commit=commits.get(t.instance_id),
                unsandboxed=cfg.allow_unsandboxed,
                bare_subprocess=cfg.unsafe_bare_subprocess,
            )
            return {"repo_access": access, "timeout": vf.TaskTimeout(agent=AGENT_TIMEOUT_S)}

        return local

    def load(self) -> Iterator[RouteTask]:
        cfg = self.config
        table = self.table()
        if cfg.pool_size is not None:
            yield from self._load_any_pool(table, cfg.pool_size)
            return
        valid_ids = table.pool.ids
        train = select_tasks(table, "train", cfg.eval_fraction, cfg.split_seed)
        summary = summarize(train, table.pool)
        if cfg.repo_access:
            system = agentic_system_prompt(summary, cfg.turn_budget)
        else:
            system = system_prompt(summary)
        examples = _examples(train, cfg.few_shot)
        agentic = self._agentic_fields()
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
                split=cfg.split,
                **agentic(t),
            )
            seen[t.instance_id] += 1
            yield RouteTask(data, cfg.task)

    def _load_any_pool(self, table: OracleTable, pool_size: int) -> Iterator[RouteTask]:
        """Any-pool mode: each task of `table`'s split with a pool drawn from the candidates table."""
        cfg = self.config
        index = CandidateIndex.load(str(cfg.candidates_path or BUNDLED_CANDIDATES))
        spec = AnyPoolSpec(pool_size, cfg.pool_seed, tuple(cfg.held_out_models))
        for ep in any_pool_episodes(
            index, table, spec, cfg.split, cfg.eval_fraction, cfg.split_seed, cfg.max_tasks
        ):
            t = ep.record
            data = RouteData(
                id=t.instance_id,
                prompt=messages(t, _examples(ep.train_records, cfg.few_shot)(t) if cfg.few_shot else []),
                system_prompt=system_prompt(ep.summary),
                record=t,
                valid_ids=ep.pool.ids,
                split=cfg.split,
            )
            yield RouteTask(data, cfg.task)
