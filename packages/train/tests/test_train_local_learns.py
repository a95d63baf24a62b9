"""The local trainer learns on the real bundled table: held-out routed_reward beats a random router."""

from __future__ import annotations

from router_frontier_rl import bundled_table_path, score_route
from router_frontier_rl.split import select_tasks
from router_oracle.table import load_table
from router_train.local import LocalTrainConfig, load_policy, train_local


def test_beats_uniform_random_on_held_out_tasks(tmp_path):
    cfg = LocalTrainConfig(output_dir=tmp_path, steps=60)
    result = train_local(cfg, progress=False)

    table = load_table(bundled_table_path())
    held_out = select_tasks(table, "eval", eval_fraction=cfg.eval_fraction, split_seed=cfg.split_seed)
    ids = table.pool.ids
    # Both sides scored by the env's own reward, independently of the trainer's summary.
    routes = load_policy(result.checkpoint_path).route(held_out)
    n = len(held_out)
    trained = sum(score_route(t, r).routed_reward for t, r in zip(held_out, routes, strict=True)) / n
    uniform = sum(score_route(t, m).routed_reward for t in held_out for m in ids) / (len(held_out) * len(ids))

    assert trained > uniform + 0.2
    assert result.summary.beats_random
    assert result.summary.row("local-grpo").mean_reward == round(trained, 6)
