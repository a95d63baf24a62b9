"""The subset of prime-rl's `RLConfig` (the TOML `prime train` submits) that we emit.

Field names, nesting and discriminator values copy prime-rl's own config package,
`packages/prime-rl-configs/src/prime_rl/configs/` (rl.py, orchestrator.py, trainer.py,
algorithm.py) of github.com/PrimeIntellect-ai/prime-rl at commit
559b44772e471d1538537b8805cc77f3824a5e64 (2026-08-21). The `env` blocks are verifiers'
`SingleAgentEnvConfig` (taskset + agent) and the taskset block is `router_frontier_rl.RouterConfig`.

Every model forbids unknown keys, so a file that parses here uses only names prime-rl has too;
where `prime_rl.configs` is importable the tests also validate the files with prime-rl's `RLConfig`.
Unset optional fields are left out of the TOML, so prime-rl's own default applies to them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- verifiers env blocks (`[orchestrator.train.source.env]`) -------------------------------------


class TasksetArgs(_Strict):
    """`env.taskset`: the taskset id plus its env args (`router_frontier_rl.RouterConfig` fields)."""

    id: str
    """Taskset id: `router-frontier-rl`, or a hub id `owner/router-frontier-rl` once pushed."""
    split: Literal["train", "eval", "all"] | None = None
    """Which tasks the source serves (RouterConfig.split)."""
    eval_fraction: float | None = Field(default=None, gt=0, lt=1)
    """Fraction of each oracle label held out for `eval` (RouterConfig.eval_fraction)."""
    split_seed: int | None = None
    """Seed of the train/eval split and of the task order (RouterConfig.split_seed)."""
    upsample: bool | None = None
    """Repeat rare-label train tasks until labels are balanced (RouterConfig.upsample)."""
    max_tasks: int | None = Field(default=None, ge=1)
    """Serve only the first this many tasks of the seeded order (RouterConfig.max_tasks)."""
    repo_access: bool | None = None
    """Agentic routing: read the task's repository before routing (RouterConfig.repo_access)."""
    turn_budget: int | None = Field(default=None, ge=1)
    """Agentic routing: model turns per episode, the answer included (RouterConfig.turn_budget)."""
    pool_size: int | None = Field(default=None, ge=2)
    """Any-pool mode: models per task's drawn pool (RouterConfig.pool_size)."""
    pool_seed: int | None = None
    """Any-pool mode: seed of the pool draws (RouterConfig.pool_seed)."""
    held_out_models: list[str] | None = None
    """Any-pool mode: models only eval pools show (RouterConfig.held_out_models)."""


class HarnessConfig(_Strict):
    """`env.agent.harness`: which verifiers harness drives the model."""

    id: str
    """Harness id; `null` is verifiers' plain chat harness (no tools), `bash` its shell agent."""
    edit: bool | None = None
    """`bash` only: offer the edit tool as well (verifiers' BashHarnessConfig.edit); false: read-only."""


class RuntimeConfig(_Strict):
    """`env.agent.runtime`: where the harness runs."""

    type: str
    """Runtime type; `subprocess` runs the harness locally, next to the env server; `prime` in a Prime
    sandbox per rollout, started from the task's image (verifiers' PrimeConfig)."""


class AgentConfig(_Strict):
    """`env.agent`: the single agent of a `SingleAgentEnvConfig`."""

    harness: HarnessConfig
    """The harness the agent runs."""
    runtime: RuntimeConfig
    """The runtime the harness runs in."""


class VfEnvConfig(_Strict):
    """`env`: verifiers' `SingleAgentEnvConfig` (the taskset and its one agent)."""

    taskset: TasksetArgs
    """Taskset id and env args."""
    agent: AgentConfig
    """The agent that answers each task."""


# --- orchestrator (`[orchestrator]`, orchestrator.py / algorithm.py) ------------------------------


class GRPOAlgoConfig(_Strict):
    """`orchestrator.algo` (algorithm.py GRPOAlgoConfig): reward minus the group-mean baseline."""

    type: Literal["grpo"] = "grpo"
    """Algorithm discriminator; `grpo` is prime-rl's default, written out so the file says it."""


class TrainSamplingConfig(_Strict):
    """`orchestrator.train.sampling` (orchestrator.py TrainSamplingConfig)."""

    temperature: float = Field(ge=0, le=2)
    """Sampling temperature of training rollouts."""
    max_completion_tokens: int = Field(ge=1)
    """Maximum tokens the policy may generate per turn."""


class TrainSourceConfig(_Strict):
    """One `[[orchestrator.train.source]]` entry (orchestrator.py TrainSourceConfig)."""

    name: str
    """Display name of the source in logs and metrics."""
    env: VfEnvConfig
    """The verifiers environment this source samples tasks from."""


class TrainConfig(_Strict):
    """`orchestrator.train` (orchestrator.py TrainConfig)."""

    sampling: TrainSamplingConfig
    """Sampling shared by every training source."""
    source: list[TrainSourceConfig] = Field(min_length=1)
    """Training sources (we use exactly one: router-frontier-rl on its train split)."""


class EvalSamplingConfig(_Strict):
    """`orchestrator.eval.sampling` (orchestrator.py EvalSamplingConfig)."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    """Eval sampling temperature; unset defers to the inference server."""
    max_completion_tokens: int | None = Field(default=None, ge=1)
    """Eval maximum tokens per turn; unset defers to the inference server."""


class EvalSourceConfig(_Strict):
    """One `[[orchestrator.eval.source]]` entry (orchestrator.py EvalSourceConfig)."""

    name: str
    """Display name of the eval source; unique among eval sources."""
    env: VfEnvConfig
    """The verifiers environment evaluated (router-frontier-rl on its held-out split)."""


class EvalConfig(_Strict):
    """`orchestrator.eval` (orchestrator.py EvalConfig): periodic held-out evaluation."""

    interval: int = Field(ge=1)
    """Evaluate every this many training steps."""
    num_examples: int = -1
    """Examples per eval source; -1 evaluates every task of the source."""
    sampling: EvalSamplingConfig
    """Eval sampling, separate from training sampling."""
    source: list[EvalSourceConfig] = Field(min_length=1)
    """Eval sources."""


class OrchestratorConfig(_Strict):
    """`[orchestrator]` (orchestrator.py OrchestratorConfig): rollouts, grouping, batching."""

    batch_size: int = Field(ge=1)
    """Rollouts (samples) trained on per step; must be a multiple of `group_size`."""
    group_size: int = Field(ge=1)
    """Rollouts sampled per task (the GRPO group)."""
    algo: GRPOAlgoConfig = GRPOAlgoConfig()
    """Training algorithm."""
    train: TrainConfig
    """Training sources and their sampling."""
    eval: EvalConfig | None = None
    """Held-out evaluation during training; unset: none."""


# --- trainer (`[trainer]`, trainer.py) ------------------------------------------------------------


class AdamWConfig(_Strict):
    """`trainer.optim` (trainer.py AdamWConfig)."""

    type: Literal["adamw"] = "adamw"
    """Optimizer discriminator; AdamW is prime-rl's default, written out so the file says it."""
    lr: float = Field(ge=0)
    """Peak learning rate."""
    weight_decay: float = Field(ge=0)
    """Decoupled weight-decay coefficient."""
    max_norm: float = Field(ge=0)
    """Gradient-norm clipping threshold."""
    betas1: float = Field(ge=0)
    """Adam beta1 (first-moment decay)."""
    betas2: float = Field(ge=0)
    """Adam beta2 (second-moment decay)."""


class ConstantSchedulerConfig(_Strict):
    """`trainer.scheduler` (trainer.py ConstantSchedulerConfig): no warmup, no decay."""

    type: Literal["constant"] = "constant"
    """Scheduler discriminator."""


class DefaultLossConfig(_Strict):
    """`trainer.loss` (trainer.py DefaultLossConfig): DPPO trust-region mask plus a KL term."""

    type: Literal["default"] = "default"
    """Loss discriminator: prime-rl's default DPPO+KL loss."""
    dppo_mask_low: float = Field(ge=0)
    """Drop a negative-advantage token's gradient once its probability fell more than this."""
    dppo_mask_high: float = Field(ge=0)
    """Drop a positive-advantage token's gradient once its probability rose more than this."""
    kl_tau: float = Field(ge=0)
    """Weight of the squared log-ratio (trainer vs sampler) KL term; 0 disables it."""


class TrainerConfig(_Strict):
    """`[trainer]` (trainer.py TrainerConfig)."""

    optim: AdamWConfig
    """Optimizer."""
    scheduler: ConstantSchedulerConfig = ConstantSchedulerConfig()
    """Learning-rate schedule."""
    loss: DefaultLossConfig
    """Loss of the `rl` component."""


# --- top level (rl.py) ----------------------------------------------------------------------------


class SharedModelConfig(_Strict):
    """`[model]` (rl.py SharedModelConfig): propagated to trainer, orchestrator and inference."""

    name: str
    """Hugging Face id of the policy model."""


class SingleNodeDeploymentConfig(_Strict):
    """`[deployment]` (rl.py SingleNodeDeploymentConfig): GPUs of a one-node run."""

    type: Literal["single_node"] = "single_node"
    """Deployment discriminator."""
    num_train_gpus: int = Field(ge=1)
    """GPUs given to the trainer."""
    num_infer_gpus: int = Field(ge=1)
    """GPUs given to vLLM inference (hosted RL runs need at least one)."""


class MultiNodeDeploymentConfig(_Strict):
    """`[deployment]` (rl.py MultiNodeDeploymentConfig): whole nodes for the trainer and for inference,
    started by prime-rl's SLURM launcher (rl.py requires `[slurm]` for it)."""

    type: Literal["multi_node"] = "multi_node"
    """Deployment discriminator."""
    gpus_per_node: int = Field(default=8, ge=1)
    """GPUs per node."""
    num_train_nodes: int = Field(ge=1)
    """Nodes running the trainer."""
    num_infer_nodes: int = Field(ge=1)
    """Nodes running vLLM inference (one replica)."""


class SlurmConfig(_Strict):
    """`[slurm]` (shared.py SlurmConfig): prime-rl writes an sbatch script from its bundled multi-node
    template and submits it; unset fields keep prime-rl's defaults (partition `cluster`, no account)."""

    job_name: str
    """SLURM job name."""
    partition: str | None = None
    """SLURM partition; unset: prime-rl's default `cluster`."""
    account: str | None = None
    """SLURM account to charge; unset: none."""


class SharedCheckpointConfig(_Strict):
    """`[ckpt]` (rl.py SharedCheckpointConfig); an empty table checkpoints at the end of training."""

    interval: int | None = Field(default=None, ge=1)
    """Save a checkpoint every this many steps; unset: only at the end."""


class InferenceConfig(_Strict):
    """`[inference]` (inference.py InferenceConfig); empty: prime-rl's default vLLM server."""


class RLConfig(_Strict):
    """The whole file: what `prime train CONFIG` submits (rl.py RLConfig, the fields we set)."""

    max_steps: int = Field(ge=1)
    """Training steps (propagated to trainer and orchestrator)."""
    seq_len: int = Field(ge=1)
    """Sequence length, prompt plus completion (propagated to trainer and orchestrator)."""
    model: SharedModelConfig
    """Policy model."""
    deployment: SingleNodeDeploymentConfig | MultiNodeDeploymentConfig = Field(discriminator="type")
    """GPU split between trainer and inference (one node), or nodes (many)."""
    slurm: SlurmConfig | None = None
    """SLURM launch of a multi-node deployment; unset for one node."""
    ckpt: SharedCheckpointConfig | None = None
    """Checkpointing; unset: no checkpoints."""
    inference: InferenceConfig = InferenceConfig()
    """Inference server; always present because hosted RL runs need one."""
    orchestrator: OrchestratorConfig
    """Rollout generation and batching."""
    trainer: TrainerConfig
    """Optimizer and loss."""

    def env_sources(self) -> list[TrainSourceConfig | EvalSourceConfig]:
        """Every source that names a taskset, train first."""
        sources: list[TrainSourceConfig | EvalSourceConfig] = list(self.orchestrator.train.source)
        if self.orchestrator.eval is not None:
            sources.extend(self.orchestrator.eval.source)
        return sources

    def with_taskset_id(self, old: str, new: str) -> RLConfig:
        """A copy whose sources with taskset id `old` name `new` instead (e.g. the pushed hub id)."""
        copy = self.model_copy(deep=True)
        for source in copy.env_sources():
            if source.env.taskset.id == old:
                source.env.taskset.id = new
        return copy
