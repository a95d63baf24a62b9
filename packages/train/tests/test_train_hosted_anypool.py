"""The any-pool presets: the recipe of smoke / full, the env in any-pool mode, shipped and current."""

from __future__ import annotations

import pytest

from router_frontier_rl import RouterConfig, RouterTaskset
from router_oracle.candidates import load_candidates
from router_train.hosted.config_files import is_stale, load_config, render_preset, shipped_path
from router_train.hosted.presets import ANY_POOL, preset_config


@pytest.mark.parametrize(("name", "base"), [("anypool-smoke", "smoke"), ("anypool", "full")])
def test_anypool_preset_is_its_base_with_drawn_pools(name, base) -> None:
    cfg, ref = preset_config(name), preset_config(base)
    assert cfg.trainer == ref.trainer and cfg.model == ref.model and cfg.max_steps == ref.max_steps
    assert cfg.orchestrator.batch_size == ref.orchestrator.batch_size
    assert not is_stale(name)
    assert load_config(shipped_path(name)) == cfg
    for source in cfg.env_sources():
        args = source.env.taskset
        assert (args.pool_size, args.pool_seed, args.held_out_models) == (3, 0, ANY_POOL.held_out_models)
        assert args.upsample is False  # labels depend on the drawn pool
    # fixed-pool presets stay as they were: no any-pool key in their files
    assert "pool_size" not in render_preset(base) and "held_out_models" in render_preset(name)


def test_anypool_eval_source_serves_pools_with_held_out_models() -> None:
    cfg = preset_config("anypool")
    assert cfg.orchestrator.eval is not None
    candidates = set(load_candidates().ids)
    assert set(ANY_POOL.held_out_models) <= candidates
    for source, split in (
        (cfg.orchestrator.eval.source[0], "eval"),
        (cfg.orchestrator.train.source[0], "train"),
    ):
        args = source.env.taskset.model_dump(exclude_none=True, exclude={"id"})
        assert args["split"] == split
        tasks = list(RouterTaskset(RouterConfig.model_validate({**args, "max_tasks": 6})))
        held = [set(t.data.valid_ids) & set(ANY_POOL.held_out_models) for t in tasks]
        assert len(tasks) == 6 and all(bool(h) == (split == "eval") for h in held)
