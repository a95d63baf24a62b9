"""The local trainer learns on the real bundled table: held-out routed_reward beats a random router."""

from __future__ import annotations

from router_frontier_rl import bundled_table_path, score_route
from router_frontier_rl.split import select_tasks
from router_oracle.table import ModelOutcome, OracleRule, OracleTable, Pool, PoolModel, RunOutcome, TaskRecord
from router_oracle.table_check import load_table
from router_oracle.tie_rule import pick_for_task
from router_train.local.checkpoint import load_policy
from router_train.local.config import LocalTrainConfig
from router_train.local.trainer import fit_policy, train_local


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


WORDS = {"alpha": "segfault", "beta": "deadlock", "gamma": "typo"}
"""The one word of an issue that decides which model is the oracle (the rest of the text is shared)."""


def _word_table(n: int = 90) -> OracleTable:
    """Issues that differ by one word; each word's model alone resolves them, at different costs, in
    every repository (so only the word can tell). Labels are skewed like the real data's (2/3 alpha)."""
    models = list(WORDS)
    pool = Pool(name="words", models=[PoolModel(id=m, name=m, runs=[f"run-{m}"]) for m in models])
    tasks = []
    for i in range(n):
        winner = models[0] if i % 3 else models[1 + (i // 3) % 2]
        per_model = {
            m: ModelOutcome(
                resolve_rate=float(m == winner),
                cost=0.1 + 0.2 * k,
                runs=[RunOutcome(run=f"run-{m}", resolved=m == winner, cost=0.1 + 0.2 * k)],
            )
            for k, m in enumerate(models)
        }
        pick = pick_for_task(pool, OracleRule(), per_model)
        tasks.append(
            TaskRecord(
                instance_id=f"org__repo-{i:03d}",
                repo=f"org/repo{i % 4}",
                difficulty=None,
                problem_statement=f"Calling the parser twice gives a {WORDS[winner]} in module {i % 5}.",
                per_model=per_model,
                oracle=pick.oracle,
                best=pick.best,
                all_failed=False,
            )
        )
    return OracleTable(pool=pool, rule=OracleRule(), sources=[], command="test", tasks=tasks)


def test_default_trainer_learns_the_word_that_decides_the_oracle(tmp_path):
    table = _word_table()
    train, held_out = select_tasks(table, "train"), select_tasks(table, "eval")
    fit = fit_policy(LocalTrainConfig(), train, table.pool.ids)  # the defaults, nothing tuned here
    routes = fit.policy.route(held_out)
    accuracy = sum(r == t.oracle for r, t in zip(routes, held_out, strict=True)) / len(held_out)
    assert accuracy >= 0.95, (accuracy, fit.prior_shift)
    assert {t.oracle for t in held_out} == set(WORDS)  # every label is held out, rare ones included
