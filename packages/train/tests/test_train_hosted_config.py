"""Hosted configs: recipe mapping, deterministic rendering, shipped files, prime-rl validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

from router_train.cli import main
from router_train.hosted.config_files import (
    ConfigFileError,
    load_config,
    loads_config,
    render_preset,
    shipped_path,
    stale_shipped,
    write_shipped,
)
from router_train.hosted.presets import (
    ENV_ID,
    PRESET_NAMES,
    PRESETS,
    PROMPT_TOKEN_BUDGET,
    RECIPE,
    TOOL_OUTPUT_TOKEN_BUDGET,
    preset_config,
)
from router_train.hosted.rl_config import SingleNodeDeploymentConfig

SHIPPED = [shipped_path(name) for name in PRESET_NAMES]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_config_parses_with_our_model(path: Path) -> None:
    config = load_config(path)
    assert config.orchestrator.train.source[0].env.taskset.id == ENV_ID


def test_shipped_configs_are_not_stale() -> None:
    # Regenerate with `router-train config --write-shipped` after changing a preset.
    assert stale_shipped() == []
    for name, path in zip(PRESET_NAMES, SHIPPED, strict=True):
        assert path.read_text(encoding="utf-8") == render_preset(name)


def test_rendering_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    for name in PRESET_NAMES:
        assert render_preset(name) == render_preset(name)
        assert loads_config(render_preset(name), origin=name) == preset_config(name)
    write_shipped(tmp_path)
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    write_shipped(tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == first
    assert sorted(first) == sorted(f"{name}.toml" for name in PRESET_NAMES)  # and no temp files left behind


def test_full_preset_maps_the_recipe() -> None:
    cfg = preset_config("full")
    orch, trainer = cfg.orchestrator, cfg.trainer
    assert orch.algo.type == "grpo"
    assert orch.group_size == RECIPE.samples_per_task == 8
    # prime-rl's batch_size counts rollouts: 64 tasks x 8 samples.
    assert orch.batch_size == 64 * 8
    assert orch.train.sampling.temperature == 1.0
    assert orch.train.sampling.max_completion_tokens == 16384
    assert cfg.seq_len > 16384
    opt = trainer.optim
    assert (opt.type, opt.lr, opt.betas1, opt.betas2) == ("adamw", 5e-7, 0.9, 0.98)
    assert (opt.weight_decay, opt.max_norm) == (0.1, 0.5)
    assert trainer.loss.kl_tau == 0.0
    assert trainer.loss.dppo_mask_low == trainer.loss.dppo_mask_high == 0.2
    train_args = orch.train.source[0].env.taskset
    assert (train_args.split, train_args.upsample) == ("train", True)
    assert orch.eval is not None
    eval_args = orch.eval.source[0].env.taskset
    assert (eval_args.split, eval_args.upsample) == ("eval", False)
    # Both sources pin the same split, whatever the env's defaults become.
    assert (eval_args.eval_fraction, eval_args.split_seed) == (
        train_args.eval_fraction,
        train_args.split_seed,
    )


def test_smoke_preset_is_small_and_keeps_the_recipe() -> None:
    smoke, full = preset_config("smoke"), preset_config("full")
    assert smoke.max_steps <= 10
    assert smoke.orchestrator.batch_size < full.orchestrator.batch_size
    assert smoke.orchestrator.batch_size % smoke.orchestrator.group_size == 0
    assert smoke.trainer == full.trainer
    assert isinstance(smoke.deployment, SingleNodeDeploymentConfig)
    assert smoke.deployment.num_train_gpus + smoke.deployment.num_infer_gpus == 2


@pytest.mark.parametrize("name", ["agentic-smoke", "agentic-full"])
def test_agentic_presets_read_the_repository_in_a_sandbox(name: str) -> None:
    agentic, plain = preset_config(name), preset_config(name.removeprefix("agentic-"))  # type: ignore[arg-type]
    spec = PRESETS[name]  # type: ignore[index]
    assert spec.agentic and spec.turn_budget is not None and not PRESETS["full"].agentic
    for source in agentic.env_sources():
        args, agent = source.env.taskset, source.env.agent
        assert (args.repo_access, args.turn_budget) == (True, spec.turn_budget)
        assert (agent.harness.id, agent.harness.edit, agent.runtime.type) == ("bash", False, "prime")
    # The same recipe, steps, GPUs and split; only the env mode and the token sizing differ.
    assert agentic.trainer == plain.trainer and agentic.deployment == plain.deployment
    assert (
        agentic.max_steps == plain.max_steps
        and agentic.orchestrator.batch_size == plain.orchestrator.batch_size
    )
    per_turn = agentic.orchestrator.train.sampling.max_completion_tokens
    turns = spec.turn_budget
    assert agentic.seq_len == PROMPT_TOKEN_BUDGET + turns * per_turn + (turns - 1) * TOOL_OUTPUT_TOKEN_BUDGET
    assert agentic.seq_len > plain.seq_len


def test_env_blocks_validate_with_verifiers_own_env_config() -> None:
    # What prime-rl does with `env`: verifiers' EnvConfig, narrowed to our taskset's RouterConfig and to
    # the harness and runtime config types their ids name.
    from verifiers.v1.harnesses.bash import BashHarnessConfig
    from verifiers.v1.harnesses.null import NullHarnessConfig
    from verifiers.v1.runtimes import PrimeConfig, SubprocessConfig
    from verifiers.v1.utils.loaders import resolve_env_config

    from router_frontier_rl import RouterConfig

    for name in PRESET_NAMES:
        for source in preset_config(name).env_sources():
            env = resolve_env_config(source.env.model_dump(mode="json", exclude_none=True))
            assert isinstance(env.taskset, RouterConfig)
            agent = env.agent  # type: ignore[attr-defined]
            if PRESETS[name].agentic:
                assert env.taskset.repo_access and env.taskset.turn_budget == PRESETS[name].turn_budget
                assert isinstance(agent.harness, BashHarnessConfig) and agent.harness.edit is False
                assert isinstance(agent.runtime, PrimeConfig)
            else:
                assert not env.taskset.repo_access
                assert isinstance(agent.harness, NullHarnessConfig) and agent.harness.id == "null"
                assert isinstance(agent.runtime, SubprocessConfig)


def test_shipped_text_uses_table_headers_not_inline_tables() -> None:
    text = render_preset("smoke")
    assert "[[orchestrator.train.source]]" in text
    assert "[orchestrator.train.source.env.taskset]" in text
    assert "{" not in text
    assert "\n[inference]\n" in text  # an empty table is what enables prime-rl's inference server


def test_taskset_args_are_valid_env_args() -> None:
    # The env args must be fields of the env's own TasksetConfig (router_frontier_rl.RouterConfig).
    from router_frontier_rl import RouterConfig

    for name in PRESET_NAMES:
        for source in preset_config(name).env_sources():
            args = source.env.taskset.model_dump(exclude_none=True, exclude={"id"})
            parsed = RouterConfig.model_validate(args)
            for key, value in args.items():
                assert getattr(parsed, key) == value


def test_hub_id_rewrite_touches_only_the_env() -> None:
    cfg = preset_config("full")
    pushed = cfg.with_taskset_id(ENV_ID, "alice/router-frontier-rl")
    assert {s.env.taskset.id for s in pushed.env_sources()} == {"alice/router-frontier-rl"}
    assert {s.env.taskset.id for s in cfg.env_sources()} == {ENV_ID}
    restored = pushed.with_taskset_id("alice/router-frontier-rl", ENV_ID)
    assert restored == cfg


# Loading every shipped file in prime-rl's real RLConfig: test_train_prime_rl_schema.py.


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("max_steps = [", encoding="utf-8")
    with pytest.raises(ConfigFileError, match=r"broken\.toml.*not valid TOML"):
        load_config(broken)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text(render_preset("smoke").replace("group_size = 8", "group_size = 8\nrollouts = 8"))
    with pytest.raises(ConfigFileError, match=r"unknown\.toml(.|\n)*rollouts"):
        load_config(unknown)
    with pytest.raises(ConfigFileError, match=r"missing\.toml: cannot read"):
        load_config(tmp_path / "missing.toml")
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b"# caf\xe9\n")
    with pytest.raises(ConfigFileError, match=r"latin1\.toml: not UTF-8"):
        load_config(latin1)


def test_config_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "smoke"]) == 0
    assert capsys.readouterr().out == render_preset("smoke")
    out = tmp_path / "sub" / "full.toml"
    assert main(["config", "full", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render_preset("full")
    assert main(["config", "--check"]) == 0
    assert main(["config"]) == 2


@pytest.mark.parametrize("field", ["unsafe_bare_subprocess", "allow_unsandboxed", "repos_dir"])
def test_training_configs_cannot_run_the_agent_outside_a_sandbox(field: str) -> None:
    """The hosted env arguments have no local-mode field: a training config cannot ask for the local
    subprocess runtime's agent, let alone its bare (unsandboxed) variant (docs/security.md)."""
    from pydantic import ValidationError

    from router_train.hosted.rl_config import TasksetArgs

    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        TasksetArgs.model_validate({"id": "router-frontier-rl", "repo_access": True, field: True})
