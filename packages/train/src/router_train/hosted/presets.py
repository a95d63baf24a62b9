"""Typed presets `smoke`, `full`, `agentic-smoke`, `agentic-full`, and the one mapping from the reference
recipe to prime-rl fields.

Reference: Applied Compute, "Training an Agentic Router for Optimal Cost-Performance on SWE Tasks"
(2026-06-04). Recipe value -> prime-rl field (see `build_config`):

- GRPO                         -> orchestrator.algo.type = "grpo"
- 8 samples per task           -> orchestrator.group_size = 8
- 64 tasks per step            -> orchestrator.batch_size = 64 * 8 = 512 (prime-rl counts rollouts:
                                  "samples to train on per step", must be a multiple of group_size)
- lr 5e-7                      -> trainer.optim.lr
- Adam betas (0.9, 0.98)       -> trainer.optim.betas1, trainer.optim.betas2 (type = "adamw")
- weight decay 0.1             -> trainer.optim.weight_decay
- grad clip 0.5                -> trainer.optim.max_norm
- no KL                        -> trainer.loss.kl_tau = 0.0 (prime-rl's GRPO has no reference-model KL
                                  at all; kl_tau weights its trainer-vs-sampler squared log-ratio term)
- temperature 1.0              -> orchestrator.train.sampling.temperature
- 16,384 max tokens            -> orchestrator.train.sampling.max_completion_tokens
- PPO-style ratio clipping     -> trainer.loss.dppo_mask_low = dppo_mask_high = 0.2 (prime-rl's only
                                  built-in trust region masks tokens by probability difference)
- env router-frontier-rl       -> [[orchestrator.train.source]] env.taskset {id, split = "train",
                                  upsample = true}, verifiers' null (plain chat) harness

Any-pool presets (`anypool-smoke`, `anypool`): the same recipe and scale as `smoke` / `full`, with the env
in any-pool mode (`pool_size`, `pool_seed`, `held_out_models`: each task gets its own pool drawn from the
bundled candidates table; held-out models appear only in eval pools) and no upsampling (labels depend
on the drawn pool, so there is no fixed label mix to balance).

Deviations (no field, or a different one), also listed in the README:

1. Clipping: prime-rl has no PPO ratio clip. Its default loss (DPPO-Binary-TV) drops the gradient of a
   token whose probability moved more than a threshold since sampling, in the direction its advantage
   pushes; we set both thresholds to 0.2, the usual PPO epsilon (the reference does not give its own).
2. Advantage: prime-rl's `grpo` is reward minus the group mean, without dividing by the group's standard
   deviation; there is no field for the std normalisation of the original GRPO.
3. No KL: `kl_tau = 0` also drops prime-rl's small (default 1e-3) trainer-vs-sampler regulariser,
   which is not a KL to a reference model; set it back to 1e-3 if runs drift.
4. Asynchrony: prime-rl generates rollouts while it trains, so a batch may come from up to
   `orchestrator.max_off_policy_steps` (default 8) older policies; we keep its default.
5. Max tokens -> completion tokens per turn; `seq_len` (no recipe value) is that plus
   PROMPT_TOKEN_BUDGET for the prompt. Longer samples are truncated by prime-rl.
6. Model: the reference trains Qwen3.6-35B-A3B; `full` uses it, `smoke` a 4B instruct model. Steps,
   GPU split, eval cadence and checkpointing are not in the recipe: our choices, below.
7. Learning-rate schedule: constant (prime-rl's default); the reference gives none.

Agentic presets (`agentic-smoke`, `agentic-full`): the same recipe with the env's `repo_access` mode, where
the router reads the task's repository before it routes (the reference's best router did):

- env args                     -> env.taskset {repo_access = true, turn_budget}: each task names its public
                                  SWE-bench image (repository at /testbed), the agent's network is blocked
- harness                      -> env.agent.harness {id = "bash", edit = false}: verifiers' bash tool only
- runtime                      -> env.agent.runtime.type = "prime": one Prime sandbox per rollout, started
                                  from the task's image (verifiers' PrimeConfig; TaskData.image wins)
- max tokens                   -> orchestrator.train.sampling.max_completion_tokens, now per turn; `seq_len`
                                  holds the whole episode: PROMPT_TOKEN_BUDGET + turn_budget x completion
                                  tokens + (turn_budget - 1) x TOOL_OUTPUT_TOKEN_BUDGET
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_train.hosted.errors import BadLaunchInput
from router_train.hosted.rl_config import (
    AdamWConfig,
    AgentConfig,
    DefaultLossConfig,
    EvalConfig,
    EvalSamplingConfig,
    EvalSourceConfig,
    HarnessConfig,
    MultiNodeDeploymentConfig,
    OrchestratorConfig,
    RLConfig,
    RuntimeConfig,
    SharedCheckpointConfig,
    SharedModelConfig,
    SingleNodeDeploymentConfig,
    SlurmConfig,
    TasksetArgs,
    TrainConfig,
    TrainerConfig,
    TrainSamplingConfig,
    TrainSourceConfig,
    VfEnvConfig,
)

PresetName = Literal["smoke", "full", "agentic-smoke", "agentic-full", "anypool-smoke", "anypool"]
PRESET_NAMES: tuple[PresetName, ...] = (
    "smoke",
    "full",
    "agentic-smoke",
    "agentic-full",
    "anypool-smoke",
    "anypool",
)

ENV_ID = "router-frontier-rl"
"""The environment's id: its distribution name, which verifiers maps to module `router_frontier_rl`."""

PROMPT_TOKEN_BUDGET = 8192
"""Tokens reserved for the prompt (system prompt, capability summary, issue text) in `seq_len`."""

TOOL_OUTPUT_TOKEN_BUDGET = 2048
"""Agentic presets: tokens reserved in `seq_len` for each tool result. The env's prompt asks for short
outputs (piped through head); verifiers' bash tool does not cut them, so a longer one eats into the
episode's room and prime-rl truncates an episode longer than `seq_len`."""

SPLIT_EVAL_FRACTION = 0.2
SPLIT_SEED = 0
"""Written into every source so train and eval sources always agree on the split."""


class Recipe(FrozenModel):
    """The reference recipe's hyperparameters, as the reference states them."""

    samples_per_task: int = 8
    """Rollouts per task (the GRPO group)."""
    tasks_per_step: int = 64
    """Distinct tasks per optimizer step."""
    lr: float = 5e-7
    """Adam learning rate."""
    betas: tuple[float, float] = (0.9, 0.98)
    """Adam (beta1, beta2)."""
    weight_decay: float = 0.1
    """Weight decay."""
    grad_clip: float = 0.5
    """Gradient-norm clip."""
    kl_coef: float = 0.0
    """KL penalty weight (none)."""
    temperature: float = 1.0
    """Rollout sampling temperature."""
    max_tokens: int = 16384
    """Maximum generated tokens."""
    clip_eps: float = 0.2
    """Trust-region width; the reference does not state it, 0.2 is the usual PPO value."""


RECIPE = Recipe()


class AnyPoolArgs(FrozenModel):
    """The env's any-pool arguments a preset sets (RouterConfig.pool_size, pool_seed, held_out_models)."""

    pool_size: int = Field(ge=2)
    """Models per task's drawn pool."""
    pool_seed: int = 0
    """Seed of the pool draws (train and eval sources share it)."""
    held_out_models: list[str]
    """Candidate models never in a training pool; every eval pool holds one of them."""


ANY_POOL = AnyPoolArgs(pool_size=3, held_out_models=["gemini-3-flash-preview-high", "minimax-m2.5-high"])
"""Pools of three, like the default pool; held out: two recent frontier models of providers whose other
models stay in training (each resolves 75.8% of the tasks, MiniMax M2.5 at a fifth of Gemini 3 Flash's
cost), so the eval split asks whether the router reads a new model's capability row."""


class PresetSpec(FrozenModel):
    """What distinguishes one preset: scale and run logistics (the recipe is shared)."""

    name: PresetName
    """Preset name, also the shipped file's stem."""
    description: str
    """One line for `--help` and the file header."""
    model: str
    """Hugging Face id of the policy (must be in renderers' MODEL_RENDERER_MAP for `auto`)."""
    max_steps: int = Field(ge=1)
    """Training steps."""
    tasks_per_step: int = Field(ge=1)
    """Distinct tasks per step (batch_size = tasks_per_step * samples_per_task)."""
    max_completion_tokens: int = Field(ge=1)
    """Completion token cap per turn."""
    num_train_gpus: int = Field(ge=1)
    """Trainer GPUs."""
    num_infer_gpus: int = Field(ge=1)
    """Inference GPUs."""
    eval_interval: int | None = Field(default=None, ge=1)
    """Evaluate on the held-out split every this many steps; None: no eval during training."""
    checkpoint: bool
    """Save a checkpoint at the end of training."""
    turn_budget: int | None = Field(default=None, ge=1)
    """Agentic presets: the env's `turn_budget` (model turns per episode, the answer included); None: the
    single-turn env on the issue text."""
    any_pool: AnyPoolArgs | None = None
    """Serve every task with its own pool drawn from the bundled candidates table (the env's any-pool
    mode); None: the bundled fixed pool."""

    @model_validator(mode="after")
    def _fits_one_node(self) -> PresetSpec:
        if self.num_train_gpus + self.num_infer_gpus > 8:
            raise ValueError(f"preset {self.name}: more than 8 GPUs do not fit prime-rl's single node")
        return self

    @property
    def agentic(self) -> bool:
        """Whether the router may read the task's repository before it routes (env `repo_access`)."""
        return self.turn_budget is not None

    @property
    def seq_len(self) -> int:
        """prime-rl's `seq_len`: the prompt plus every turn's completion (and, agentic, tool results)."""
        if self.turn_budget is None:
            return self.max_completion_tokens + PROMPT_TOKEN_BUDGET
        turns = self.turn_budget
        return (
            PROMPT_TOKEN_BUDGET + turns * self.max_completion_tokens + (turns - 1) * TOOL_OUTPUT_TOKEN_BUDGET
        )


class Scale(FrozenModel):
    """A recipe's scale and run logistics: what `smoke` and `full` differ in (the hyperparameters are
    RECIPE's for both)."""

    model: str
    """Hugging Face id of the policy."""
    max_steps: int = Field(ge=1)
    """Training steps."""
    tasks_per_step: int = Field(ge=1)
    """Distinct tasks per step."""
    max_completion_tokens: int = Field(ge=1)
    """Completion token cap (per turn) of the single-turn and any-pool variants."""
    agentic_max_completion_tokens: int = Field(ge=1)
    """Completion token cap per turn of the agentic variant (its episode holds turn_budget of them)."""
    turn_budget: int = Field(ge=1)
    """The agentic variant's turn budget."""
    num_train_gpus: int = Field(ge=1)
    """Trainer GPUs."""
    num_infer_gpus: int = Field(ge=1)
    """Inference GPUs."""
    eval_interval: int | None = Field(default=None, ge=1)
    """Eval cadence in steps; None: no eval during training."""
    checkpoint: bool
    """Save a checkpoint at the end of training."""


SCALES: dict[Literal["smoke", "full"], Scale] = {
    "smoke": Scale(
        model="Qwen/Qwen3-4B-Instruct-2507",
        max_steps=5,
        tasks_per_step=8,
        max_completion_tokens=1024,
        agentic_max_completion_tokens=1024,
        turn_budget=6,
        num_train_gpus=1,
        num_infer_gpus=1,
        checkpoint=False,
    ),
    "full": Scale(
        model="Qwen/Qwen3.6-35B-A3B",
        max_steps=100,
        tasks_per_step=RECIPE.tasks_per_step,
        max_completion_tokens=RECIPE.max_tokens,
        agentic_max_completion_tokens=4096,
        turn_budget=10,
        num_train_gpus=4,
        num_infer_gpus=4,
        eval_interval=10,
        checkpoint=True,
    ),
}
"""The two recipes' scales: `smoke` (a few cheap steps on a 4B model) and `full` (the reference's)."""

Variant = Literal["plain", "agentic", "anypool"]

# (scale, variant) -> preset name and description; the name of `plain` is the scale's own.
_PRESET_TABLE: dict[PresetName, tuple[Literal["smoke", "full"], Variant, str]] = {
    "smoke": (
        "smoke",
        "plain",
        "a few cheap steps on a 4B model: checks the env, the config and the pipeline",
    ),
    "full": ("full", "plain", "the reference recipe on the reference's model (Qwen3.6-35B-A3B)"),
    "agentic-smoke": (
        "smoke",
        "agentic",
        "smoke with repo_access: the 4B model reads each task's repository for up to 6 turns",
    ),
    "agentic-full": (
        "full",
        "agentic",
        "the reference recipe with repo_access: up to 10 turns reading the repository first",
    ),
    # Any-pool presets (issue 13): `smoke` / `full` with the env drawing a pool per task.
    "anypool-smoke": (
        "smoke",
        "anypool",
        "`smoke` with a pool drawn per task from the candidates: checks the any-pool pipeline",
    ),
    "anypool": (
        "full",
        "anypool",
        "the reference recipe on pools drawn per task; eval pools hold models never trained with",
    ),
}


def make_preset(name: PresetName, scale: Scale, variant: Variant, description: str) -> PresetSpec:
    """A preset: `scale` with the env in `variant` mode (plain chat, agentic repo access, any-pool)."""
    agentic = variant == "agentic"
    return PresetSpec(
        name=name,
        description=description,
        model=scale.model,
        max_steps=scale.max_steps,
        tasks_per_step=scale.tasks_per_step,
        max_completion_tokens=scale.agentic_max_completion_tokens if agentic else scale.max_completion_tokens,
        num_train_gpus=scale.num_train_gpus,
        num_infer_gpus=scale.num_infer_gpus,
        eval_interval=scale.eval_interval,
        checkpoint=scale.checkpoint,
        turn_budget=scale.turn_budget if agentic else None,
        any_pool=ANY_POOL if variant == "anypool" else None,
    )


PRESETS: dict[PresetName, PresetSpec] = {
    name: make_preset(name, SCALES[scale], variant, description)
    for name, (scale, variant, description) in _PRESET_TABLE.items()
}


def presets_help() -> str:
    """Every preset and its description, for the help of `router-train config` and `launch`."""
    return "; ".join(f"{n}: {PRESETS[n].description}" for n in PRESET_NAMES)


def _env(
    split: Literal["train", "eval"],
    *,
    upsample: bool,
    turn_budget: int | None = None,
    any_pool: AnyPoolArgs | None = None,
) -> VfEnvConfig:
    pools = {} if any_pool is None else any_pool.model_dump()
    taskset = TasksetArgs(
        id=ENV_ID,
        split=split,
        eval_fraction=SPLIT_EVAL_FRACTION,
        split_seed=SPLIT_SEED,
        upsample=upsample,
        **pools,
    )
    if turn_budget is None:
        # The router answers in one chat turn: verifiers' null harness, no sandbox.
        return VfEnvConfig(
            taskset=taskset,
            agent=AgentConfig(harness=HarnessConfig(id="null"), runtime=RuntimeConfig(type="subprocess")),
        )
    # The router first reads the repository: verifiers' bash tool (no edit tool) in a Prime sandbox per
    # rollout, started from the task's SWE-bench image; the env blocks the agent's network.
    return VfEnvConfig(
        taskset=taskset.model_copy(update={"repo_access": True, "turn_budget": turn_budget}),
        agent=AgentConfig(harness=HarnessConfig(id="bash", edit=False), runtime=RuntimeConfig(type="prime")),
    )


def build_config(spec: PresetSpec, recipe: Recipe = RECIPE) -> RLConfig:
    """The prime-rl config of a preset: the recipe's hyperparameters at the preset's scale."""
    eval_cfg = None
    if spec.eval_interval is not None:
        eval_cfg = EvalConfig(
            interval=spec.eval_interval,
            sampling=EvalSamplingConfig(
                temperature=recipe.temperature, max_completion_tokens=spec.max_completion_tokens
            ),
            source=[
                EvalSourceConfig(
                    name=f"{ENV_ID}-eval",
                    env=_env("eval", upsample=False, turn_budget=spec.turn_budget, any_pool=spec.any_pool),
                )
            ],
        )
    return RLConfig(
        max_steps=spec.max_steps,
        seq_len=spec.seq_len,
        model=SharedModelConfig(name=spec.model),
        deployment=SingleNodeDeploymentConfig(
            num_train_gpus=spec.num_train_gpus, num_infer_gpus=spec.num_infer_gpus
        ),
        ckpt=SharedCheckpointConfig() if spec.checkpoint else None,
        orchestrator=OrchestratorConfig(
            batch_size=spec.tasks_per_step * recipe.samples_per_task,
            group_size=recipe.samples_per_task,
            train=TrainConfig(
                sampling=TrainSamplingConfig(
                    temperature=recipe.temperature, max_completion_tokens=spec.max_completion_tokens
                ),
                source=[
                    # Any-pool labels depend on each task's pool: no fixed label mix to upsample.
                    TrainSourceConfig(
                        name=ENV_ID,
                        env=_env(
                            "train",
                            upsample=spec.any_pool is None,
                            turn_budget=spec.turn_budget,
                            any_pool=spec.any_pool,
                        ),
                    )
                ],
            ),
            eval=eval_cfg,
        ),
        trainer=TrainerConfig(
            optim=AdamWConfig(
                lr=recipe.lr,
                weight_decay=recipe.weight_decay,
                max_norm=recipe.grad_clip,
                betas1=recipe.betas[0],
                betas2=recipe.betas[1],
            ),
            loss=DefaultLossConfig(
                dppo_mask_low=recipe.clip_eps, dppo_mask_high=recipe.clip_eps, kl_tau=recipe.kl_coef
            ),
        ),
    )


def preset_config(name: PresetName) -> RLConfig:
    """The config of preset `name`."""
    return build_config(PRESETS[name])


MIN_NODES = 2
"""A multi-node deployment has at least one trainer node and one inference node."""


def multi_node_config(config: RLConfig, name: str, nodes: int) -> RLConfig:
    """`config` on `nodes` whole nodes (prime-rl's multi-node deployment, started with SLURM): half the
    nodes train, the rest (the larger half) serve inference, like the 4 + 4 GPU split of one node.

    Raises BadLaunchInput when the preset does not fit: fewer than two nodes, or a preset whose
    single-node split does not fill a node (the smoke presets: a 4B model on two GPUs).
    """
    if nodes < MIN_NODES:
        raise BadLaunchInput(
            f"--nodes {nodes}: a multi-node deployment needs {MIN_NODES} nodes (trainer, inference)"
        )
    single = config.deployment
    if not isinstance(single, SingleNodeDeploymentConfig):
        raise BadLaunchInput(f"preset {name}: already a multi-node config")
    gpus = single.num_train_gpus + single.num_infer_gpus
    if gpus < 8:
        raise BadLaunchInput(
            f"--nodes {nodes}: preset {name} uses {gpus} GPUs of one node; --nodes is for presets that fill "
            "a node (full, agentic-full, anypool)"
        )
    train = nodes // 2
    return config.model_copy(
        update={
            "deployment": MultiNodeDeploymentConfig(num_train_nodes=train, num_infer_nodes=nodes - train),
            "slurm": SlurmConfig(job_name=f"router-frontier-rl-{name}"),
        },
        deep=True,
    )
